package syncer

import (
	"context"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
)

// syncGroups is the consumer group offset step (metric
// ConsumerGroupOffsetSyncError, digest §6): for every source group the
// filters select that is not active on the destination, the offsets it
// committed on the source for the mirror's topics are committed on the
// destination, clamped into the destination's log (syncedOffset). It
// returns the number of failed operations.
func (s *Syncer) syncGroups(ctx context.Context, v *mirrorView) int {
	if len(v.active) == 0 {
		return 0
	}
	// Consumer groups (of either protocol: ProtocolType "consumer") and
	// simple (commit-only) groups; Connect's and share groups keep no
	// consumer offsets.
	groups, failed := s.sourceGroups(ctx, v, nil, func(g kadm.ListedGroup) bool {
		return g.ProtocolType == "consumer" || g.ProtocolType == ""
	})
	if len(groups) == 0 {
		return failed
	}
	active, err := s.activeDestGroups(ctx, nil)
	if err != nil {
		s.logger.Warn("could not list the groups of the destination", "err", err)
		return failed + 1
	}
	topics := slices.Sorted(maps.Keys(v.active))
	bounds, err := s.destBounds(ctx, topics)
	if err != nil {
		s.logger.Warn("could not list the mirror topics' offsets", "err", err)
		return failed + 1
	}
	var skipped []SkippedOffset
	for _, g := range groups {
		if active[g] && !v.set.forwardActive {
			// "only synced for groups that are not currently active on
			// the destination cluster, preventing overwrites of local
			// consumer progress" (digest §6).
			skipped = append(skipped, SkippedOffset{Group: g, Partition: -1, Reason: SkipGroupActive, Committed: -1, Source: -1})
			s.c.groupsSkippedActive.Add(1)
			continue
		}
		if active[g] {
			n, skips, err := s.syncActiveGroup(ctx, v, g, bounds)
			skipped = append(skipped, skips...)
			if err != nil {
				s.logger.Warn("could not sync an active consumer group's offsets forward", "group", g, "err", err)
				failed++
			}
			s.c.offsets.Add(int64(n))
			continue
		}
		n, err := s.syncGroup(ctx, v, g, bounds)
		if err != nil {
			s.logger.Warn("could not sync a consumer group's offsets", "group", g, "err", err)
			failed++
			continue
		}
		s.c.offsets.Add(int64(n))
	}
	s.reportSkipped(skipped)
	return failed
}

// sourceGroups lists the source's groups of types (all types if none)
// that keep accepts and the mirror's group filters select, sorted; failed
// is 1 if the listing failed (a *ShardErrors still lists the groups of the
// brokers that answered).
func (s *Syncer) sourceGroups(ctx context.Context, v *mirrorView, types []string, keep func(kadm.ListedGroup) bool) (groups []string, failed int) {
	listed, err := s.src.ListGroupsByType(ctx, types)
	if err != nil {
		s.logger.Warn("could not list the source's groups", "types", types, "err", err)
		failed++
	}
	for _, g := range listed.Sorted() {
		if keep(g) && v.set.groups.matches(g.Group) {
			groups = append(groups, g.Group)
		}
	}
	return groups, failed
}

// activeDestGroups are the destination's groups of types (all if none)
// that have members: any state but Empty and Dead. ListGroups rather than
// DescribeGroups, which only describes classic groups: a KIP-848 group's
// state comes from ListGroups (or ConsumerGroupDescribe). A listing that
// failed anywhere is an error: a group the failed broker coordinates
// could be active.
func (s *Syncer) activeDestGroups(ctx context.Context, types []string) (map[string]bool, error) {
	listed, err := s.dst.ListGroupsByType(ctx, types)
	if err != nil {
		return nil, err
	}
	active := map[string]bool{}
	for g, l := range listed {
		if !groupInactive(l.State) {
			active[g] = true
		}
	}
	return active, nil
}

// groupInactive reports whether a group in state (ListGroups) has no
// members on the destination: Empty, Dead (Kafka's answer for a group it
// does not know) or no state at all.
func groupInactive(state string) bool {
	switch state {
	case "", "Empty", "Dead":
		return true
	}
	return false
}

// logBounds are a destination partition's log start and end offsets.
type logBounds struct{ start, end int64 }

// destBounds lists the destination's log start and end (high watermark:
// what a consumer can read) of every partition of topics.
func (s *Syncer) destBounds(ctx context.Context, topics []string) (map[string]map[int32]logBounds, error) {
	starts, err := s.dst.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, err
	}
	ends, err := s.dst.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, err
	}
	out := map[string]map[int32]logBounds{}
	starts.Each(func(st kadm.ListedOffset) {
		en, ok := ends.Lookup(st.Topic, st.Partition)
		if st.Err != nil || !ok || en.Err != nil {
			return // left out: its group offsets wait for the next round
		}
		if out[st.Topic] == nil {
			out[st.Topic] = map[int32]logBounds{}
		}
		out[st.Topic][st.Partition] = logBounds{st.Offset, en.Offset}
	})
	return out, nil
}

// groupCommits are the commits that bring group's destination offsets to
// its source offsets: mirrored topics only, clamped into the destination
// log, and only where the destination's commit differs.
func groupCommits(v *mirrorView, src, dst kadm.OffsetResponses, bounds map[string]map[int32]logBounds) kadm.Offsets {
	var commit kadm.Offsets
	for topic, ps := range src {
		if _, ok := v.active[topic]; !ok {
			continue
		}
		for p, o := range ps {
			b, ok := bounds[topic][p]
			if o.Err != nil || o.At < 0 || !ok {
				continue
			}
			off, epoch := syncedOffset(o.At, o.LeaderEpoch, b.start, b.end)
			if cur, ok := dst.Lookup(topic, p); ok && cur.Err == nil && cur.At == off && cur.LeaderEpoch == epoch && cur.Metadata == o.Metadata {
				continue
			}
			commit.Add(kadm.Offset{Topic: topic, Partition: p, At: off, LeaderEpoch: epoch, Metadata: o.Metadata})
		}
	}
	return commit
}

// plannedCommits fetches group's offsets on both clusters and returns the
// commits groupCommits plans, with the destination's offsets.
func (s *Syncer) plannedCommits(ctx context.Context, v *mirrorView, group string, bounds map[string]map[int32]logBounds) (kadm.Offsets, kadm.OffsetResponses, error) {
	src, err := s.src.FetchOffsets(ctx, group)
	if err != nil {
		return nil, nil, err
	}
	dst, err := s.dst.FetchOffsets(ctx, group)
	if err != nil {
		return nil, nil, err
	}
	return groupCommits(v, src, dst, bounds), dst, nil
}

// syncGroup commits one group's offsets and returns how many it committed.
// The commit carries no generation or member: the group coordinator takes
// it only while the group is empty, so a consumer that joined since the
// DescribeGroups is not overwritten either.
func (s *Syncer) syncGroup(ctx context.Context, v *mirrorView, group string, bounds map[string]map[int32]logBounds) (int, error) {
	commit, _, err := s.plannedCommits(ctx, v, group, bounds)
	if err != nil || len(commit) == 0 {
		return 0, err
	}
	resp, err := s.dst.CommitOffsets(ctx, group, commit)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return 0, err
	}
	n := 0
	commit.Each(func(kadm.Offset) { n++ })
	return n, nil
}
