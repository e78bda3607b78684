package syncer

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// syncShareGroups is the share group offset step (metric
// ShareGroupOffsetSyncError, digest §6): "synced the same way" as the
// consumer groups' offsets, through DescribeShareGroupOffsets on the
// source and AlterShareGroupOffsets on the destination. Each source share
// group the filters select that is not active on the destination gets the
// source's share-partition start offsets of the mirror's topics, clamped
// into the destination's log. A source without share groups (before Kafka
// 4.1) lists none, and the step does nothing. It returns the number of
// failed operations.
//
// The KIP adds a leader epoch to AlterShareGroupOffsets; Kafka's request
// has none yet, so the start offset goes alone (a share group keeps no
// epoch with its start offset either).
func (s *Syncer) syncShareGroups(ctx context.Context, v *mirrorView) int {
	if len(v.active) == 0 {
		return 0
	}
	// A broker before ListGroups v5 ignores the type filter; one before
	// Kafka 4.1 has no share groups to list.
	groups, listErr := s.sourceGroups(ctx, v, []string{"share"}, func(g kadm.ListedGroup) bool {
		return g.GroupType == "share"
	})
	failed := 0
	if listErr != nil {
		failed++
	}
	if len(groups) == 0 {
		return failed
	}
	active, err := s.activeDestGroups(ctx, []string{"share"})
	if err != nil {
		s.logger.Warn("could not list the share groups of the destination", "err", err)
		return failed + 1
	}
	src, err := s.src.DescribeShareGroupOffsets(ctx, groups...)
	if err != nil && len(src) == 0 {
		s.logger.Warn("could not describe the source's share group offsets", "err", err)
		return failed + 1
	}
	dst, err := s.dst.DescribeShareGroupOffsets(ctx, groups...)
	if err != nil && len(dst) == 0 {
		s.logger.Warn("could not describe the destination's share group offsets", "err", err)
		return failed + 1
	}
	var bounds map[string]map[int32]logBounds
	for _, g := range groups {
		if active[g] {
			// As for consumer groups: local progress is never
			// overwritten.
			continue
		}
		sg, ok := src[g]
		if !ok || (sg.Err != nil && !errors.Is(sg.Err, kerr.GroupIDNotFound)) {
			s.logger.Warn("could not describe a share group's offsets on the source", "group", g, "err", sg.Err)
			failed++
			continue
		}
		if bounds == nil {
			if bounds, err = s.destBounds(ctx, slices.Sorted(maps.Keys(v.active))); err != nil {
				s.logger.Warn("could not list the mirror topics' offsets", "err", err)
				return failed + 1
			}
		}
		alter := shareGroupAlters(v, sg.Offsets, dst[g].Offsets, bounds)
		if len(alter) == 0 {
			continue
		}
		resp, err := s.dst.AlterShareGroupOffsets(ctx, g, alter)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			s.logger.Warn("could not sync a share group's offsets", "group", g, "err", err)
			failed++
			continue
		}
		n := 0
		alter.Each(func(kadm.Offset) { n++ })
		s.c.shareOffsets.Add(int64(n))
	}
	return failed
}

// shareGroupAlters are the start offsets that bring a share group's
// destination offsets to its source's: mirrored topics only, partitions
// whose share state the source initialized (a start offset of -1 has
// none), clamped into the destination log, and only where the
// destination's differs.
func shareGroupAlters(v *mirrorView, src, dst kadm.ShareOffsets, bounds map[string]map[int32]logBounds) kadm.Offsets {
	var alter kadm.Offsets
	for topic, ps := range src {
		if _, ok := v.active[topic]; !ok {
			continue
		}
		for p, o := range ps {
			b, ok := bounds[topic][p]
			if o.Err != nil || o.StartOffset < 0 || !ok {
				continue
			}
			off, _ := syncedOffset(o.StartOffset, -1, b.start, b.end)
			if cur, ok := dst[topic][p]; ok && cur.Err == nil && cur.StartOffset == off {
				continue
			}
			alter.Add(kadm.Offset{Topic: topic, Partition: p, At: off, LeaderEpoch: -1})
		}
	}
	return alter
}
