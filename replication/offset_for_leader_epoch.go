package replication

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

// OffsetForLeaderEpoch: v2-4 (the wire layer gates versions)
//
// Behavior (Kafka's ReplicaManager.lastOffsetForLeaderEpoch): for each
// partition, the largest epoch <= LeaderEpoch this leader knows and the
// offset where it ended (KIP-101, KIP-279); an unknown epoch answers -1/-1
// without an error. CurrentLeaderEpoch fencing (FENCED_LEADER_EPOCH,
// UNKNOWN_LEADER_EPOCH); only the leader answers.
//
// Version notes: v2 CurrentLeaderEpoch; v3 ReplicaID; v4 flexible.

// OffsetForLeaderEpoch answers where leader epochs end.
func (r *ReplicaManager) OffsetForLeaderEpoch(ctx context.Context, req *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	img := r.currentImage()
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, rp := range t.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			current := rp.CurrentLeaderEpoch
			if req.Version < 2 {
				current = -1
			}
			p, err := r.getPartitionOrError(storage.TopicPartition{Topic: t.Topic, Partition: rp.Partition}, img)
			if err == nil {
				sp.LeaderEpoch, sp.EndOffset, err = p.lastOffsetForLeaderEpoch(current, rp.LeaderEpoch, true)
			}
			if err != nil {
				sp.ErrorCode, sp.LeaderEpoch, sp.EndOffset = errorCode(err), -1, -1
			}
			rt.Partitions = append(rt.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
