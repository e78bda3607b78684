package syncer

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// syncGroups is the consumer group offset step (metric
// ConsumerGroupOffsetSyncError, digest §6): for every source group the
// filters select that is not active on the destination, the offsets it
// committed on the source for the mirror's topics are committed on the
// destination, clamped into the destination's log (syncedOffset). It
// returns the number of failed operations.
func (s *Syncer) syncGroups(ctx context.Context, v *mirrorView) int {
	failed, _ := s.groupRound(ctx, v, nil)
	return failed
}

// groupRound is one consumer group step over v's topics, the periodic
// one (sink nil) or SyncGroupsNow's, which gets each group's outcome
// appended to sink. It returns the failed operations and the first
// failure that kept groups from being synced at all (listing the groups
// of the source or the destination, the destination's offsets). The
// group steps run one at a time (groupMu): an on-demand round and a
// periodic one never interleave their commits.
func (s *Syncer) groupRound(ctx context.Context, v *mirrorView, sink *[]GroupSync) (int, error) {
	if len(v.active) == 0 {
		return 0, nil
	}
	s.groupMu.Lock()
	defer s.groupMu.Unlock()
	// Consumer groups (of either protocol: ProtocolType "consumer") and
	// simple (commit-only) groups; Connect's and share groups keep no
	// consumer offsets.
	groups, listErr := s.sourceGroups(ctx, v, nil, func(g kadm.ListedGroup) bool {
		return g.ProtocolType == "consumer" || g.ProtocolType == ""
	})
	failed := 0
	if listErr != nil {
		failed++
	}
	if len(groups) == 0 {
		s.groupRoundDone(failed)
		return failed, listErr
	}
	active, err := s.activeDestGroups(ctx, nil)
	if err != nil {
		s.logger.Warn("could not list the groups of the destination", "err", err)
		return failed + 1, fmt.Errorf("listing the destination's groups: %w", err)
	}
	topics := slices.Sorted(maps.Keys(v.active))
	bounds, err := s.destBounds(ctx, topics)
	if err != nil {
		s.logger.Warn("could not list the mirror topics' offsets", "err", err)
		return failed + 1, fmt.Errorf("listing the destination's offsets: %w", err)
	}
	var skipped []SkippedOffset
	for _, g := range groups {
		r := s.syncOneGroup(ctx, v, g, active[g], bounds)
		if sink != nil {
			*sink = append(*sink, r)
		}
		if r.Skipped != "" {
			skipped = append(skipped, SkippedOffset{Group: g, Partition: -1, Reason: r.Skipped, Committed: -1, Source: -1})
			s.c.groupsSkippedActive.Add(1)
			continue
		}
		n := 0
		for _, p := range r.Partitions {
			switch p.Outcome {
			case OutcomeSynced:
				n++
			case OutcomeAhead:
				skipped = append(skipped, SkippedOffset{Group: g, Topic: p.Topic, Partition: p.Partition, Reason: SkipAhead, Committed: p.Committed, Source: p.Target})
				s.c.offsetsSkippedAhead.Add(1)
			}
		}
		s.c.offsets.Add(int64(n))
		if r.Err != nil {
			s.logger.Warn("could not sync a consumer group's offsets", "group", g, "active", active[g], "err", r.Err)
			failed++
		}
	}
	s.reportSkipped(skipped)
	s.groupRoundDone(failed)
	return failed, listErr
}

// groupRoundDone notes when a group round over mirror topics completed
// without a failure (LastGroupSync).
func (s *Syncer) groupRoundDone(failed int) {
	if failed == 0 {
		s.lastGroupSync.Store(time.Now().UnixMilli())
	}
}

// syncOneGroup syncs one group's offsets: as the KIP says when the group
// has no members on the destination, forward only (syncActiveGroup) or
// not at all (SkipGroupActive) when it has.
func (s *Syncer) syncOneGroup(ctx context.Context, v *mirrorView, group string, activeOnDest bool, bounds map[string]map[int32]logBounds) GroupSync {
	r := GroupSync{Group: group}
	switch {
	case activeOnDest && !v.set.forwardActive:
		// "only synced for groups that are not currently active on
		// the destination cluster, preventing overwrites of local
		// consumer progress" (digest §6).
		r.Skipped = SkipGroupActive
	case activeOnDest:
		r.Partitions, r.Err = s.syncActiveGroup(ctx, v, group, bounds)
	default:
		r.Partitions, r.Err = s.syncGroup(ctx, v, group, bounds)
	}
	return r
}

// sourceGroups lists the source's groups of types (all types if none)
// that keep accepts and the mirror's group filters select, sorted; err is
// the listing's failure (a *ShardErrors still lists the groups of the
// brokers that answered).
func (s *Syncer) sourceGroups(ctx context.Context, v *mirrorView, types []string, keep func(kadm.ListedGroup) bool) (groups []string, err error) {
	listed, err := s.src.ListGroupsByType(ctx, types)
	if err != nil {
		s.logger.Warn("could not list the source's groups", "types", types, "err", err)
		err = &SourceError{Op: "listing the source's groups", Err: err}
	}
	for _, g := range listed.Sorted() {
		if keep(g) && v.set.groups.matches(g.Group) {
			groups = append(groups, g.Group)
		}
	}
	return groups, err
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
	for _, o := range considered(v, src, bounds) {
		b := bounds[o.Topic][o.Partition]
		off, epoch := syncedOffset(o.At, o.LeaderEpoch, b.start, b.end)
		if cur, ok := dst.Lookup(o.Topic, o.Partition); ok && cur.Err == nil && cur.At == off && cur.LeaderEpoch == epoch && cur.Metadata == o.Metadata {
			continue
		}
		commit.Add(kadm.Offset{Topic: o.Topic, Partition: o.Partition, At: off, LeaderEpoch: epoch, Metadata: o.Metadata})
	}
	return commit
}

// considered are the source offsets of a group a round syncs, sorted: a
// commit on a mirrored topic, of a partition the destination has.
func considered(v *mirrorView, src kadm.OffsetResponses, bounds map[string]map[int32]logBounds) []kadm.Offset {
	var out []kadm.Offset
	for _, o := range src.Sorted() {
		if _, ok := v.active[o.Topic]; !ok {
			continue
		}
		if _, ok := bounds[o.Topic][o.Partition]; o.Err != nil || o.At < 0 || !ok {
			continue
		}
		out = append(out, o.Offset)
	}
	return out
}

// groupPlan is a group's offsets on both clusters and the commits
// groupCommits plans from them.
type groupPlan struct {
	src, dst kadm.OffsetResponses
	commit   kadm.Offsets
}

// plannedCommits fetches group's offsets on both clusters and plans the
// commits.
func (s *Syncer) plannedCommits(ctx context.Context, v *mirrorView, group string, bounds map[string]map[int32]logBounds) (groupPlan, error) {
	src, err := s.src.FetchOffsets(ctx, group)
	if err != nil {
		return groupPlan{}, err
	}
	dst, err := s.dst.FetchOffsets(ctx, group)
	if err != nil {
		return groupPlan{}, err
	}
	return groupPlan{src: src, dst: dst, commit: groupCommits(v, src, dst, bounds)}, nil
}

// outcomes lists every partition the plan considered, with what the
// destination holds after the round: decide names the outcome of each
// planned commit (c); the others were unchanged.
func (pl groupPlan) outcomes(v *mirrorView, bounds map[string]map[int32]logBounds, decide func(c kadm.Offset, cur int64) (committed int64, o Outcome)) []PartitionOffset {
	var out []PartitionOffset
	for _, o := range considered(v, pl.src, bounds) {
		cur := int64(-1)
		if d, ok := pl.dst.Lookup(o.Topic, o.Partition); ok && d.Err == nil {
			cur = d.At
		}
		po := PartitionOffset{Topic: o.Topic, Partition: o.Partition, Source: o.At, Committed: cur, Outcome: OutcomeUnchanged}
		po.Target, _ = syncedOffset(o.At, o.LeaderEpoch, bounds[o.Topic][o.Partition].start, bounds[o.Topic][o.Partition].end)
		if c, ok := pl.commit.Lookup(o.Topic, o.Partition); ok {
			po.Committed, po.Outcome = decide(c, cur)
		}
		out = append(out, po)
	}
	return out
}

// syncGroup commits one group's offsets and returns each partition's
// outcome. The commit carries no generation or member: the group
// coordinator takes it only while the group is empty, so a consumer that
// joined since the DescribeGroups is not overwritten either.
func (s *Syncer) syncGroup(ctx context.Context, v *mirrorView, group string, bounds map[string]map[int32]logBounds) ([]PartitionOffset, error) {
	pl, err := s.plannedCommits(ctx, v, group, bounds)
	if err != nil {
		return nil, err
	}
	var resp kadm.OffsetResponses
	if len(pl.commit) > 0 {
		resp, err = s.dst.CommitOffsets(ctx, group, pl.commit)
		if err == nil {
			err = resp.Error()
		}
	}
	return pl.outcomes(v, bounds, func(c kadm.Offset, cur int64) (int64, Outcome) {
		if r, ok := resp.Lookup(c.Topic, c.Partition); ok && r.Err == nil {
			return c.At, OutcomeSynced
		}
		return cur, OutcomeFailed
	}), err
}
