package replication

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// MirrorLeader returns the local partition tp as the mirror writes it
// while this node leads it in leaderEpoch (broker/ serves it as the
// mirror/manager.Destination method, the handle as its LeaderPartition;
// the KIP-1279 seed's destination leader, which appends the source's
// batches as a follower would). The error wraps
// kerr.NotLeaderForPartition when tp is not a local replica or this node
// does not lead it, and kerr.FencedLeaderEpoch when the partition is in
// another leader epoch.
func (r *ReplicaManager) MirrorLeader(tp storage.TopicPartition, leaderEpoch int32) (*MirrorLeaderPartition, error) {
	p, ok := r.Partition(tp)
	if !ok {
		return nil, fmt.Errorf("replication: %s is not a local replica: %w", tp, kerr.NotLeaderForPartition)
	}
	h := &MirrorLeaderPartition{p: p, epoch: leaderEpoch}
	p.leaderIsrUpdateLock.RLock()
	err := h.fenced(p.state.Load())
	h.since = p.fetchSeq.Load()
	p.leaderIsrUpdateLock.RUnlock()
	if err != nil {
		return nil, err
	}
	return h, nil
}

// MirrorLeaderPartition is a partition this node leads, bound to one
// leader epoch. Every change takes the partition's lock and re-checks the epoch and
// leadership under it, so a handle that outlived its epoch changes
// nothing; a change wakes the partition's waiters (follower and consumer
// long polls, acks=all produces) as a produce does.
type MirrorLeaderPartition struct {
	p     *Partition
	epoch int32
	// since is Partition.fetchSeq when the handle was created: ReplicasAt
	// counts only follower fetches numbered after it.
	since uint64
}

// fenced says why the handle may not act on st, or nil.
func (h *MirrorLeaderPartition) fenced(st *partitionState) error {
	p := h.p
	switch {
	case st.leaderEpoch != h.epoch:
		return fmt.Errorf("replication: %s is in leader epoch %d, not %d: %w", p.tp, st.leaderEpoch, h.epoch, kerr.FencedLeaderEpoch)
	case p.removed.Load() || st.leader != p.localID:
		return fmt.Errorf("replication: this node does not lead %s in leader epoch %d: %w", p.tp, h.epoch, kerr.NotLeaderForPartition)
	}
	return nil
}

// change runs fn with the partition's lock held shared if the partition
// is still led here in the handle's epoch, then wakes its waiters.
func (h *MirrorLeaderPartition) change(fn func(st *partitionState) error) error {
	p := h.p
	p.leaderIsrUpdateLock.RLock()
	st := p.state.Load()
	err := h.fenced(st)
	if err == nil {
		err = fn(st)
	}
	p.leaderIsrUpdateLock.RUnlock()
	p.watchers.notifyAll()
	return err
}

// truncate runs a truncation with the partition's lock held exclusively:
// besides the log it lowers the followers' progress and the epoch's start
// offset (afterLeaderTruncation), which role and ISR changes must not
// interleave with, and no follower fetch is recorded half way.
func (h *MirrorLeaderPartition) truncate(fn func() (bool, error)) (bool, error) {
	p := h.p
	p.leaderIsrUpdateLock.Lock()
	st := p.state.Load()
	err := h.fenced(st)
	truncated := false
	if err == nil {
		truncated, err = fn()
		if truncated {
			p.afterLeaderTruncation(st, p.Log().LogEndOffset())
		}
	}
	p.leaderIsrUpdateLock.Unlock()
	p.watchers.notifyAll()
	return truncated, err
}

func (h *MirrorLeaderPartition) LeaderEpoch() int32         { return h.epoch }
func (h *MirrorLeaderPartition) TopicID() storage.TopicID   { return h.p.topicID }
func (h *MirrorLeaderPartition) HighWatermark() int64       { return h.p.Log().HighWatermark() }
func (h *MirrorLeaderPartition) LastStableOffset() int64    { return h.p.Log().LastStableOffset() }
func (h *MirrorLeaderPartition) LogStartOffset() int64      { return h.p.Log().LogStartOffset() }
func (h *MirrorLeaderPartition) LogEndOffset() int64        { return h.p.Log().LogEndOffset() }
func (h *MirrorLeaderPartition) LatestEpoch() (int32, bool) { return h.p.Log().LatestEpoch() }
func (h *MirrorLeaderPartition) LastBatchEpoch() int32      { return lastBatchEpoch(h.p.Log()) }
func (h *MirrorLeaderPartition) EndOffsetForEpoch(epoch int32) (int32, int64, bool) {
	return h.p.Log().EndOffsetForEpoch(epoch)
}

// AppendAsFollower appends the source's batches byte for byte, then
// advances the high watermark from the ISR as a produce does (Kafka's
// maybeIncrementLeaderHW after an append).
func (h *MirrorLeaderPartition) AppendAsFollower(records []byte) (info storage.AppendInfo, err error) {
	err = h.change(func(*partitionState) error {
		info, err = h.p.appendRecordsAsFollower(records)
		if err == nil {
			h.p.maybeIncrementHighWatermark(h.p.mgr.nowMs())
		}
		return err
	})
	return info, err
}

// TruncateTo removes every record at or after offset from the leader's
// log; the high watermark comes down with the log end offset.
func (h *MirrorLeaderPartition) TruncateTo(offset int64) (bool, error) {
	return h.truncate(func() (bool, error) { return h.p.Log().TruncateTo(offset) })
}

// TruncateFullyAndStartAt empties the leader's log and restarts it at
// offset.
func (h *MirrorLeaderPartition) TruncateFullyAndStartAt(offset int64) error {
	_, err := h.truncate(func() (bool, error) { return true, h.p.Log().TruncateFullyAndStartAt(offset) })
	return err
}

// MaybeIncrementHighWatermark does nothing: the destination's high
// watermark comes from its own ISR, never from the source's.
func (h *MirrorLeaderPartition) MaybeIncrementHighWatermark(int64) (int64, bool) {
	return h.p.Log().HighWatermark(), false
}

// MaybeIncrementLogStartOffset follows the source's log start offset,
// capped at the high watermark (a leader's log start never passes what its
// followers have).
func (h *MirrorLeaderPartition) MaybeIncrementLogStartOffset(offset int64) (moved bool, err error) {
	err = h.change(func(*partitionState) error {
		moved, err = h.p.Log().MaybeIncrementLogStartOffset(min(offset, h.p.Log().HighWatermark()))
		return err
	})
	return moved, err
}

// ReplicasAt reports whether every ISR member other than this node (every
// assigned replica when all is set) fetched at exactly offset, in this
// leader epoch, in a fetch that started after the handle was created and
// after the last truncation (the seed's checkIsrTruncationAndTransition).
// The maximal ISR counts, so a member being added is waited for too.
func (h *MirrorLeaderPartition) ReplicasAt(offset int64, all bool) bool {
	p := h.p
	st := p.state.Load()
	if h.fenced(st) != nil {
		return false
	}
	since := h.since
	if t := p.truncation.Load(); t != nil {
		since = max(since, t.fetchSeq)
	}
	members := st.maximalIsr
	if all {
		members = st.replicas
	}
	followers := *p.followers.Load()
	for _, id := range members {
		if id == p.localID {
			continue
		}
		r, ok := followers[id]
		if !ok {
			return false
		}
		if s := r.snapshot(); s.fetchSeq <= since || s.logEndOffset != offset {
			return false
		}
	}
	return true
}

// AppendMirrorPIDReset appends the KIP-1279 MIRROR_PID_RESET control
// batch (producer id and epoch -1) as leader in the handle's epoch, which
// expires every producer's state, and waits like an acks=all produce: it
// is refused with NOT_ENOUGH_REPLICAS when the ISR is below
// min.insync.replicas, and returns once the high watermark passed it
// (NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below it meanwhile),
// or with an error wrapping kerr.RequestTimedOut when ctx ends first.
func (h *MirrorLeaderPartition) AppendMirrorPIDReset(ctx context.Context) error {
	p := h.p
	return h.appendAcked(ctx, "MIRROR_PID_RESET", func() error {
		b := record.MirrorPidResetBatch(record.ControlBatchSpec{ProducerID: record.NoProducerID,
			ProducerEpoch: record.NoProducerEpoch, PartitionLeaderEpoch: h.epoch, Timestamp: p.mgr.nowMs()})
		_, err := p.Log().AppendAsLeader(b, h.epoch, record.OriginCoordinator)
		return err
	})
}

// AbortOpenTransactions closes every transaction open in the log with an
// ABORT marker (storage.Log.AbortOpenTransactions: the producer's epoch and
// coordinator epoch, as leader in the handle's epoch, the coordinator's
// origin) and waits like AppendMirrorPIDReset until the whole ISR has the
// log up to its end, so the last stable offset has passed them. It returns
// the transactions it aborted. With none open it appends nothing and still
// waits, so a call repeated after markers were appended but not yet
// acknowledged answers only once they are.
func (h *MirrorLeaderPartition) AbortOpenTransactions(ctx context.Context) ([]storage.OpenTransaction, error) {
	var aborted []storage.OpenTransaction
	err := h.appendAcked(ctx, "aborting open transactions", func() error {
		var err error
		aborted, _, err = h.p.Log().AbortOpenTransactions(h.epoch)
		return err
	})
	return aborted, err
}

// appendAcked runs the leader append fn under the partition's lock in the
// handle's epoch, refused with NOT_ENOUGH_REPLICAS when the ISR is below
// min.insync.replicas, then waits like an acks=all produce until the high
// watermark reaches the log end offset the append left (the ISR has
// everything up to it).
func (h *MirrorLeaderPartition) appendAcked(ctx context.Context, what string, fn func() error) error {
	p := h.p
	var end int64
	err := h.change(func(st *partitionState) error {
		if len(st.isr) < effectiveMinISR(p.minISR.Load(), len(st.replicas)) {
			return kerr.NotEnoughReplicas
		}
		if err := fn(); err != nil {
			return err
		}
		end = p.Log().LogEndOffset()
		p.maybeIncrementHighWatermark(p.mgr.nowMs())
		return nil
	})
	if err != nil {
		return fmt.Errorf("replication: %s on %s: %w", what, p.tp, err)
	}
	var ackErr error
	done := p.mgr.await(ctx, watchHighWatermark, []*Partition{p}, noTimeout, func() bool {
		if err := h.fenced(p.state.Load()); err != nil {
			ackErr = err
			return true
		}
		enough, err := p.checkEnoughReplicasReachOffset(end)
		ackErr = err
		return enough || err != nil
	})
	if !done {
		return fmt.Errorf("replication: %s on %s up to %d: %w: %w", what, p.tp, end, kerr.RequestTimedOut, context.Cause(ctx))
	}
	if ackErr != nil {
		return fmt.Errorf("replication: %s on %s up to %d: %w", what, p.tp, end, ackErr)
	}
	return nil
}

// lastBatchEpoch is the partition leader epoch of the last batch in the
// log, -1 when the log has none. The batch holding the offset below the
// log end offset is the last one, unless a truncation cut the log inside
// a batch; then the batches of the newest epochs are scanned.
func lastBatchEpoch(l *storage.Log) int32 {
	start, leo := l.LogStartOffset(), l.LogEndOffset()
	if leo <= start {
		return -1
	}
	if b, ok := firstBatchHeader(l, leo-1); ok && b.LastOffset() == leo-1 {
		return b.PartitionLeaderEpoch()
	}
	// Batches carry epochs that never decrease, so the last batch is in
	// the newest epoch with a batch below the log end offset.
	entries := l.EpochEntries()
	for i := len(entries) - 1; i >= 0; i-- {
		from := max(entries[i].StartOffset, start)
		if from >= leo {
			continue
		}
		if ep, ok := scanLastBatchEpoch(l, from, leo); ok {
			return ep
		}
	}
	return -1
}

// firstBatchHeader reads the header of the first batch holding an offset
// >= offset.
func firstBatchHeader(l *storage.Log, offset int64) (record.Batch, bool) {
	info, err := l.Read(offset, record.HeaderSize, storage.FetchLogEnd, true)
	if err != nil || info.Records.Size < record.HeaderSize {
		return nil, false
	}
	hdr := info.Records
	hdr.Size = record.HeaderSize
	buf := make([]byte, record.HeaderSize)
	if err := hdr.ReadInto(buf); err != nil {
		return nil, false
	}
	return record.Batch(buf), true
}

// scanLastBatchEpoch walks the batch headers in [from, to) and returns the
// epoch of the last one.
func scanLastBatchEpoch(l *storage.Log, from, to int64) (int32, bool) {
	ep, found := int32(-1), false
	for off := from; off < to; {
		b, ok := firstBatchHeader(l, off)
		if !ok || b.BaseOffset() >= to || b.LastOffset() < off {
			break
		}
		ep, found = b.PartitionLeaderEpoch(), true
		off = b.LastOffset() + 1
	}
	return ep, found
}
