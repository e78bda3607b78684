package replication

import (
	"context"
	"time"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
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

// cloneSettleTimeout bounds settleClone's acks=all appends.
const cloneSettleTimeout = 30 * time.Second

// settleCloneLeader is a LeadershipListener: when this node leads a drill
// clone's partition that holds exactly the cloned records, it makes the
// clone writable the way a mirror topic's promotion does (KIP-1279): open
// transactions of the source are aborted (else they would hold the
// clone's last stable offset forever) and a MIRROR_PID_RESET expires the
// source's producers, whose ids this cluster's own producers may be given.
// It runs once per clone partition in practice: after it, or after any
// produce, the log ends past the clone point. A produce that lands before
// it (the topic was just created) leaves the source's producer state in
// place.
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
	go func() {
		h, err := r.MirrorLeader(tp, epoch)
		if err != nil {
			return
		}
		l := h.p.log
		if l.LogEndOffset() != point {
			return
		}
		producers, err := l.ActiveProducers()
		if err != nil || (len(producers) == 0 && len(l.OpenTransactions()) == 0) {
			return
		}
		ctx, cancel := context.WithTimeout(r.ctx, cloneSettleTimeout)
		defer cancel()
		aborted, err := h.AbortOpenTransactions(ctx)
		if err == nil {
			err = h.AppendMirrorPIDReset(ctx)
		}
		if err != nil {
			r.logger.Warn("could not settle a clone's producer state", "partition", tp.String(), "err", err)
			return
		}
		r.logger.Info("clone writable: source transactions aborted, producers reset", "partition", tp.String(),
			"clonePoint", point, "abortedTransactions", len(aborted), "producers", len(producers))
	}()
}
