package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// GroupOffsetSync is the answer of SyncMirrorGroupOffsets: one consumer
// group offset round the mirror's syncer ran now (issue 27's promotion
// barrier).
type GroupOffsetSync struct {
	Mirror string `json:"mirror"`
	// SyncerBroker ran the round; -1 if none did.
	SyncerBroker int32 `json:"syncer_broker"`
	// LastSync is when the syncer last completed a group round without a
	// failure (this one included), nil if never: the offsets that stand
	// when this round could not sync them.
	LastSync *time.Time          `json:"last_sync"`
	Groups   []GroupOffsetResult `json:"groups"`
	// Err is the round's failure (the source's groups could not be
	// listed, the round ran out of time ...); the groups it got to are
	// still in Groups. Nil when the round ran through.
	Err error `json:"-"`
}

// GroupOffsetResult is one source group of a round.
type GroupOffsetResult struct {
	Group string `json:"group"`
	// SkipReason is why the whole group was left alone (group-active),
	// "" if it was synced.
	SkipReason string                 `json:"skip_reason,omitempty"`
	Partitions []GroupPartitionOffset `json:"partitions"`
	Error      string                 `json:"error,omitempty"`
}

// GroupPartitionOffset is one partition of a group in a round: the
// group's committed offset on the source, the destination's after the
// round (-1 none) and what the round did (synced, unchanged,
// destination-ahead, failed).
type GroupPartitionOffset struct {
	Topic           string `json:"topic"`
	Partition       int32  `json:"partition"`
	SourceOffset    int64  `json:"source_offset"`
	CommittedOffset int64  `json:"committed_offset"`
	Outcome         string `json:"outcome"`
}

// SyncMirrorGroupOffsets asks the mirror's syncer, through any broker, to
// run one consumer group offset round now over topics (mirroring or
// paused), as its periodic round does: the same group filters, the clamp
// into the destination's log and the active-group mode. It retries while
// the syncer is moving (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR). The
// error is the request's (UNKNOWN_CLUSTER_MIRROR, a topic not in the
// mirror, no answer); a round that ran but could not sync everything
// (the source unreachable) sets GroupOffsetSync.Err instead.
func (c *Client) SyncMirrorGroupOffsets(ctx context.Context, mirror string, topics ...string) (*GroupOffsetSync, error) {
	if err := checkTopics(topics); err != nil {
		return nil, err
	}
	req := mirrormsg.NewPtrSyncMirrorGroupOffsetsRequest()
	req.MirrorName, req.Topics, req.TimeoutMs = mirror, topics, timeoutMs(ctx)
	// A round out of time (REQUEST_TIMED_OUT) is reported, not run
	// again in what is left of ctx.
	resp, err := send(ctx, c.cl, req, isWrite, func(r *mirrormsg.SyncMirrorGroupOffsetsResponse) int16 { return r.ErrorCode })
	if err != nil {
		return nil, fmt.Errorf("SyncMirrorGroupOffsets %s: %w", mirror, err)
	}
	out := &GroupOffsetSync{Mirror: mirror, SyncerBroker: resp.SyncerBrokerID}
	if resp.LastGroupSyncMs > 0 {
		t := time.UnixMilli(resp.LastGroupSyncMs)
		out.LastSync = &t
	}
	for _, g := range resp.Groups {
		r := GroupOffsetResult{Group: g.GroupID}
		if g.SkipReason != nil {
			r.SkipReason = *g.SkipReason
		}
		if err := codeError(g.ErrorCode, g.ErrorMessage); err != nil {
			r.Error = err.Error()
		}
		for _, p := range g.Partitions {
			r.Partitions = append(r.Partitions, GroupPartitionOffset{Topic: p.TopicName, Partition: p.PartitionIndex,
				SourceOffset: p.SourceOffset, CommittedOffset: p.CommittedOffset, Outcome: p.Outcome})
		}
		out.Groups = append(out.Groups, r)
	}
	if err := codeError(resp.ErrorCode, resp.ErrorMessage); err != nil {
		if resp.SyncerBrokerID < 0 {
			// No round ran: the request failed.
			return out, fmt.Errorf("SyncMirrorGroupOffsets %s: %w", mirror, err)
		}
		out.Err = err
	}
	return out, nil
}
