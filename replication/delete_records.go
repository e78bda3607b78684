package replication

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
)

// DeleteRecords: v0-2 (the wire layer gates versions)
//
// Behavior (Kafka's ReplicaManager.deleteRecords, Partition.deleteRecordsOnLeader,
// DelayedDeleteRecords): moves the log start offset of each partition to
// Offset (-1: the high watermark); records below it are no longer readable
// and whole segments below it are deleted by the next retention pass. An
// offset past the high watermark or negative: OFFSET_OUT_OF_RANGE; a topic
// whose cleanup.policy lacks delete: POLICY_VIOLATION; internal topics:
// INVALID_TOPIC_EXCEPTION; a mirror topic's partition (KIP-1279) that the
// mirror holds read-only: READ_ONLY_TOPIC, or LEADER_NOT_AVAILABLE before
// the mirror decided (mirror_access.go). The answer waits, up to TimeoutMillis, until
// every replica's log start offset reached the target (LowWatermark);
// with one replica that is at once.

// DeleteRecords deletes records below the given offsets.
func (r *ReplicaManager) DeleteRecords(ctx context.Context, req *kmsg.DeleteRecordsRequest) *kmsg.DeleteRecordsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	img := r.currentImage()
	type waiting struct {
		p      *Partition
		sp     *kmsg.DeleteRecordsResponseTopicPartition
		target int64
		done   bool
	}
	var pending []*waiting
	resp.Topics = make([]kmsg.DeleteRecordsResponseTopic, len(req.Topics))
	for i, t := range req.Topics {
		rt := &resp.Topics[i]
		*rt = kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.DeleteRecordsResponseTopicPartition, len(t.Partitions))
		for j, rp := range t.Partitions {
			sp := &rt.Partitions[j]
			*sp = kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition = rp.Partition
			p, err := r.getPartitionOrError(storage.TopicPartition{Topic: t.Topic, Partition: rp.Partition}, img)
			if err == nil && raftmeta.IsInternalTopic(t.Topic) {
				err = kerr.InvalidTopicException
			}
			var target int64
			if err == nil {
				target, err = p.deleteRecordsOnLeader(rp.Offset)
			}
			if err != nil {
				sp.ErrorCode, sp.LowWatermark = errorCode(err), -1
				continue
			}
			sp.LowWatermark = p.lowWatermark()
			if sp.LowWatermark < target {
				pending = append(pending, &waiting{p: p, sp: sp, target: target})
			}
		}
	}
	if len(pending) == 0 {
		return resp
	}
	parts := make([]*Partition, len(pending))
	for i, w := range pending {
		parts[i] = w.p
	}
	r.await(ctx, watchHighWatermark, parts, time.Duration(req.TimeoutMillis)*time.Millisecond, func() bool {
		all := true
		for _, w := range pending {
			if w.done {
				continue
			}
			if !w.p.IsLeader() || w.p.removed.Load() {
				w.done, w.sp.ErrorCode, w.sp.LowWatermark = true, kerr.NotLeaderForPartition.Code, -1
				continue
			}
			if w.sp.LowWatermark = w.p.lowWatermark(); w.sp.LowWatermark >= w.target {
				w.done = true
				continue
			}
			all = false
		}
		return all
	})
	for _, w := range pending {
		if !w.done {
			w.sp.ErrorCode = kerr.RequestTimedOut.Code
		}
	}
	return resp
}

// deleteRecordsOnLeader moves the log start offset (Kafka's
// Partition.deleteRecordsOnLeader) and returns the offset it moved to.
func (p *Partition) deleteRecordsOnLeader(offset int64) (int64, error) {
	p.leaderIsrUpdateLock.RLock()
	defer p.leaderIsrUpdateLock.RUnlock()
	if !p.IsLeader() || p.removed.Load() {
		return 0, kerr.NotLeaderForPartition
	}
	// A mirror topic's log start offset follows its source (KIP-1279).
	if err := p.checkMirrorWrite(p.mgr.currentImage(), p.state.Load()); err != nil {
		return 0, err
	}
	if !p.Log().Config().CleanupPolicy.Delete {
		return 0, kerr.PolicyViolation
	}
	if offset == -1 {
		offset = p.Log().HighWatermark()
	}
	if offset < 0 {
		return 0, kerr.OffsetOutOfRange
	}
	if _, err := p.Log().MaybeIncrementLogStartOffset(offset); err != nil {
		return 0, err
	}
	p.watchers.notifyAll()
	return offset, nil
}
