package syncer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// Groups active on the destination (issue 27). KIP-1279 skips them, so a
// consumer already running on the destination is never rewound
// (mirror.consumer.offsets.sync.active.groups=skip, the default). With
// forward-only their offsets are synced too, but only forward: a partition
// is written only where the destination's committed offset is behind the
// source's (clamped, syncedOffset), never where the local consumer is
// ahead. The comparison that decides it is made by the group coordinator
// under its lock (mirrormsg.ForwardOnlyCommitTag), not here: a consumer's
// commit that lands between this syncer's OffsetFetch and its commit is
// compared against, so the sync can never move an offset back.
//
// A live consumer's own next commit is its position and may be below the
// synced offset: the consumer owns its progress, as in Kafka, and the sync
// does not fight it. What the forward sync buys is the restart: a member
// that takes the partition over (a rebalance, a failover) starts from the
// newer of the two.

// SkipReason says why the sync left a group's offset alone.
type SkipReason string

const (
	// SkipGroupActive: the group has members on the destination and the
	// mirror skips active groups (the default mode).
	SkipGroupActive SkipReason = "group-active"
	// SkipAhead: forward-only mode, and the destination's committed
	// offset is not behind the source's.
	SkipAhead SkipReason = "destination-ahead"
)

// SkippedOffset is one offset (or, for SkipGroupActive, one whole group)
// the last round did not sync.
type SkippedOffset struct {
	Group     string
	Topic     string // "" for a whole group
	Partition int32  // -1 for a whole group
	Reason    SkipReason
	// Committed is the destination's committed offset the sync kept and
	// Source what it would have written (SkipAhead only; -1 otherwise).
	Committed, Source int64
}

func (o SkippedOffset) String() string {
	if o.Partition < 0 {
		return fmt.Sprintf("%s (%s)", o.Group, o.Reason)
	}
	return fmt.Sprintf("%s %s-%d (%s: committed %d, source %d)", o.Group, o.Topic, o.Partition, o.Reason, o.Committed, o.Source)
}

// Skipped is what the last completed consumer group step left alone, by
// group, topic and partition.
func (s *Syncer) Skipped() []SkippedOffset {
	s.skipMu.Lock()
	defer s.skipMu.Unlock()
	return slices.Clone(s.skipped)
}

// reportSkipped keeps a round's skipped offsets for Skipped, counts them
// and logs them, one line a round.
func (s *Syncer) reportSkipped(skipped []SkippedOffset) {
	slices.SortFunc(skipped, func(a, b SkippedOffset) int {
		return strings.Compare(a.String(), b.String())
	})
	s.skipMu.Lock()
	s.skipped = skipped
	s.skipMu.Unlock()
	if len(skipped) == 0 {
		return
	}
	const shown = 20
	var lines []string
	for _, o := range skipped[:min(len(skipped), shown)] {
		lines = append(lines, o.String())
	}
	if len(skipped) > shown {
		lines = append(lines, fmt.Sprintf("and %d more", len(skipped)-shown))
	}
	s.logger.Info("consumer group offsets not synced", "count", len(skipped), "skipped", strings.Join(lines, "; "))
}

// syncActiveGroup syncs an active group's offsets forward only and
// returns each partition's outcome: OutcomeAhead where the destination was
// ahead, seen so in the OffsetFetch or found so by the coordinator's
// compare-and-set.
func (s *Syncer) syncActiveGroup(ctx context.Context, v *mirrorView, group string, bounds map[string]map[int32]logBounds) ([]PartitionOffset, error) {
	pl, err := s.plannedCommits(ctx, v, group, bounds)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	mirrormsg.SetForwardOnly(req)
	sent := map[string]map[int32]bool{}
	for _, o := range pl.commit.Sorted() {
		if cur, ok := pl.dst.Lookup(o.Topic, o.Partition); ok && cur.Err == nil && cur.At >= o.At {
			// Ahead, or equal offsets (another epoch or metadata):
			// nothing to move.
			continue
		}
		if sent[o.Topic] == nil {
			sent[o.Topic] = map[int32]bool{}
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic = o.Topic
			req.Topics = append(req.Topics, rt)
		}
		sent[o.Topic][o.Partition] = true
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = o.Partition, o.At, o.LeaderEpoch, &o.Metadata
		req.Topics[len(req.Topics)-1].Partitions = append(req.Topics[len(req.Topics)-1].Partitions, rp)
	}
	answers := map[string]map[int32]*kmsg.OffsetCommitResponseTopicPartition{}
	var firstErr error
	if len(req.Topics) > 0 {
		resp, err := req.RequestWith(ctx, s.cfg.Destination)
		if err != nil {
			firstErr = err
		} else {
			for _, t := range resp.Topics {
				for i := range t.Partitions {
					p := &t.Partitions[i]
					if answers[t.Topic] == nil {
						answers[t.Topic] = map[int32]*kmsg.OffsetCommitResponseTopicPartition{}
					}
					answers[t.Topic][p.Partition] = p
					if p.ErrorCode != 0 && firstErr == nil && sent[t.Topic][p.Partition] {
						firstErr = fmt.Errorf("%s-%d: %w", t.Topic, p.Partition, kerr.ErrorForCode(p.ErrorCode))
					}
				}
			}
		}
	}
	return pl.outcomes(v, bounds, func(c kadm.Offset, cur int64) (int64, Outcome) {
		switch {
		case !sent[c.Topic][c.Partition] && cur > c.At:
			return cur, OutcomeAhead
		case !sent[c.Topic][c.Partition]:
			return cur, OutcomeUnchanged
		}
		p, ok := answers[c.Topic][c.Partition]
		switch {
		case !ok || p.ErrorCode != 0:
			return cur, OutcomeFailed
		}
		if kept, ok := mirrormsg.Kept(p); ok {
			return kept, OutcomeAhead
		}
		return c.At, OutcomeSynced
	}), firstErr
}
