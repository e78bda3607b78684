package replication

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
)

// DescribeProducers: v0 (the wire layer gates versions)
//
// Behavior (Kafka's KafkaApis.handleDescribeProducersRequest,
// ReplicaManager.activeProducerState, KIP-664): the idempotent and
// transactional producers each requested partition's local log remembers,
// with epoch, last sequence, last timestamp, the coordinator epoch of
// their last marker and the first offset of their open transaction (-1
// without one) — what an operator needs to find a hanging transaction.
//   - An invalid topic name: INVALID_TOPIC_EXCEPTION with Kafka's message;
//     a topic the metadata does not know: UNKNOWN_TOPIC_OR_PARTITION.
//   - A partition without a local replica: NOT_LEADER_OR_FOLLOWER when the
//     metadata knows it, else UNKNOWN_TOPIC_OR_PARTITION; a local replica
//     whose log is offline or failed: KAFKA_STORAGE_ERROR.
//   - A follower answers from its own log, as Kafka's does: the admin
//     client asks the leader unless told a broker id, and a follower's
//     view helps find a replica whose producer state diverged.
//   - No authorization: Kafka requires READ on the topic; Strait enforces
//     no ACLs yet.

// DescribeProducers answers the active producers of the requested
// partitions.
func (r *ReplicaManager) DescribeProducers(ctx context.Context, req *kmsg.DescribeProducersRequest) *kmsg.DescribeProducersResponse {
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	img := r.currentImage()
	for _, rt := range req.Topics {
		st := kmsg.NewDescribeProducersResponseTopic()
		st.Topic = rt.Topic
		var topicCode int16
		var topicMsg *string
		if err := raftmeta.ValidateTopicName(rt.Topic); err != nil {
			msg := err.Error()
			topicCode, topicMsg = kerr.InvalidTopicException.Code, &msg
		} else if img.Topics[rt.Topic] == nil {
			topicCode = kerr.UnknownTopicOrPartition.Code
		}
		for _, partition := range rt.Partitions {
			sp := kmsg.NewDescribeProducersResponseTopicPartition()
			sp.Partition = partition
			if topicCode != 0 {
				sp.ErrorCode, sp.ErrorMessage = topicCode, topicMsg
			} else {
				r.activeProducerState(img, storage.TopicPartition{Topic: rt.Topic, Partition: partition}, &sp)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// activeProducerState fills one partition's answer from its local log.
func (r *ReplicaManager) activeProducerState(img *raftmeta.Image, tp storage.TopicPartition, sp *kmsg.DescribeProducersResponseTopicPartition) {
	p, err := r.getPartitionOrError(tp, img)
	if err == nil && p.removed.Load() {
		err = kerr.NotLeaderForPartition
	}
	if err != nil {
		sp.ErrorCode = errorCode(err)
		return
	}
	producers, err := p.Log().ActiveProducers()
	if err != nil {
		sp.ErrorCode = errorCode(err)
		return
	}
	sp.ActiveProducers = make([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, 0, len(producers))
	for _, v := range producers {
		ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
		ap.ProducerID = v.ProducerID
		ap.ProducerEpoch = int32(v.ProducerEpoch)
		ap.LastSequence = v.LastSequence
		ap.LastTimestamp = v.LastTimestamp
		ap.CoordinatorEpoch = v.CoordinatorEpoch
		ap.CurrentTxnStartOffset = v.CurrentTxnStartOffset
		sp.ActiveProducers = append(sp.ActiveProducers, ap)
	}
}
