package replication

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// openLog opens or creates a new local replica's log. A partition of a
// drill clone (mirror.clone.of, `strait mirror clone`) starts as a copy of
// this broker's replica of the source partition up to the clone point;
// whatever part of it this broker lacks it then fetches from the clone's
// leader like any follower (storage.CreateCloneLog).
func (r *ReplicaManager) openLog(tp storage.TopicPartition, id storage.TopicID, cfg storage.LogConfig, img *raftmeta.Image) (*storage.Log, error) {
	v, ok := img.TopicConfig(tp.Topic)[raftmeta.MirrorCloneConfig]
	if !ok {
		return r.logs.GetOrCreateLog(tp, id, cfg)
	}
	spec, err := raftmeta.ParseCloneSpec(v)
	if err != nil || int(tp.Partition) >= len(spec.UpTo) {
		// The controller checked it; an unreadable one makes an empty
		// replica, which fetches the clone from its leader.
		r.logger.Error("unreadable clone point; creating the partition empty", "partition", tp.String(), "value", v, "err", err)
		return r.logs.GetOrCreateLog(tp, id, cfg)
	}
	return r.logs.CreateCloneLog(tp, id, cfg, storage.CloneSource{
		TP:   storage.TopicPartition{Topic: spec.Topic, Partition: tp.Partition},
		ID:   storage.TopicID(spec.TopicID),
		UpTo: spec.UpTo[tp.Partition],
	})
}

// cloneSettleTimeout bounds one attempt of settleCloneLeader's acks=all
// appends; cloneSettleRetry is the pause before the next attempt.
const (
	cloneSettleTimeout = 30 * time.Second
	cloneSettleRetry   = 500 * time.Millisecond
)

// checkCloneWrite refuses a client write to a drill clone's partition
// until its leader has settled it in the current leader epoch
// (settleCloneLeader): before that the partition still holds the source's
// producer state and open transactions, and a record appended then would
// land before the MIRROR_PID_RESET (validated against the source's
// producers, or stuck behind a source transaction). The answer is
// LEADER_NOT_AVAILABLE, as for a mirror topic whose access is not decided
// yet: retriable, so clients retry until the leader is ready, as they do
// while a new leader is being elected. leaderIsrUpdateLock is held.
func (p *Partition) checkCloneWrite(st *partitionState) error {
	if p.mirrorAccessIn(st) == MirrorAccessWritable {
		return nil
	}
	return fmt.Errorf("replication: %s is a drill clone whose leader has not reset the source's producers in leader epoch %d yet: %w",
		p.tp, st.leaderEpoch, kerr.LeaderNotAvailable)
}

// settleCloneLeader is a LeadershipListener: when this node leads a drill
// clone's partition it makes it writable, in every leader epoch, the way a
// mirror topic's promotion does (KIP-1279): unless the log past the clone
// point already holds the reset (an earlier epoch settled it), open
// transactions of the source are aborted (else they would hold the
// clone's last stable offset forever) and a MIRROR_PID_RESET expires the
// source's producers, whose ids this cluster's own producers may be
// given; both acks=all. Only then are client writes accepted
// (checkCloneWrite), so every produced record lands after the reset. A
// failed attempt is retried until it succeeds or the epoch ends.
func (r *ReplicaManager) settleCloneLeader(tp storage.TopicPartition, leader bool, epoch int32) {
	if !leader {
		return
	}
	v, ok := r.image.Load().TopicConfig(tp.Topic)[raftmeta.MirrorCloneConfig]
	if !ok {
		return
	}
	spec, err := raftmeta.ParseCloneSpec(v)
	if err != nil || int(tp.Partition) >= len(spec.UpTo) {
		return
	}
	point := spec.UpTo[tp.Partition]
	r.wg.Add(1) // Stop waits for it (its acks=all waits end with r.ctx)
	go func() {
		defer r.wg.Done()
		for {
			h, err := r.MirrorLeader(tp, epoch)
			if err != nil {
				return // no longer led here in this epoch
			}
			err = r.settleClone(h, point)
			if err == nil {
				r.SetMirrorAccess(tp, epoch, MirrorAccessWritable)
				return
			}
			r.logger.Warn("could not settle a clone's producer state; retrying", "partition", tp.String(), "epoch", epoch, "err", err)
			select {
			case <-r.ctx.Done():
				return
			case <-time.After(cloneSettleRetry):
			}
		}
	}()
}

// settleClone aborts the source's open transactions and appends
// MIRROR_PID_RESET at the end of a clone partition's log, unless the log
// past point already holds a MIRROR_PID_RESET or a record (settled in an
// earlier leader epoch). A log that ends below the point (this leader
// lacked part of the source) is settled at its end.
func (r *ReplicaManager) settleClone(h *MirrorLeaderPartition, point int64) error {
	if settled, err := settledPast(h.p.Log(), point); err != nil || settled {
		return err
	}
	ctx, cancel := context.WithTimeout(r.ctx, cloneSettleTimeout)
	defer cancel()
	aborted, err := h.AbortOpenTransactions(ctx)
	if err != nil {
		return err
	}
	if err := h.AppendMirrorPIDReset(ctx); err != nil {
		return err
	}
	r.logger.Info("clone writable: source transactions aborted, producers reset", "partition", h.p.tp.String(),
		"clonePoint", point, "abortedTransactions", len(aborted))
	return nil
}

// errSettled ends settledPast's scan.
var errSettled = errors.New("settled")

// settledPast reports whether l past point holds a MIRROR_PID_RESET or
// any record batch (only a settled clone takes records): transaction
// markers alone (an abort whose reset did not follow) do not count.
func settledPast(l *storage.Log, point int64) (bool, error) {
	d := record.NewDecompressor()
	err := l.ForEachBatch(point, l.LogEndOffset(), func(b record.Batch) error {
		if !b.IsControl() || d.IsMirrorPidReset(b) {
			return errSettled
		}
		return nil
	})
	if errors.Is(err, errSettled) {
		return true, nil
	}
	return false, err
}
