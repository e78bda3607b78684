package share

import "github.com/twmb/franz-go/pkg/kmsg"

// The requests about one share-partition that a persister sends (Kafka's
// PersisterStateManager sends one per share-partition, each to the
// share-partition's coordinator), and their one result. The broker's
// share-state client and the tests build them here.

// InitializeRequest starts or resets k's state at stateEpoch and
// startOffset.
func InitializeRequest(k Key, stateEpoch int32, startOffset int64) *kmsg.InitializeShareGroupStateRequest {
	req := kmsg.NewPtrInitializeShareGroupStateRequest()
	req.GroupID = k.GroupID
	t := kmsg.NewInitializeShareGroupStateRequestTopic()
	t.TopicID = k.TopicID
	p := kmsg.NewInitializeShareGroupStateRequestTopicPartition()
	p.Partition, p.StateEpoch, p.StartOffset = k.Partition, stateEpoch, startOffset
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// ReadRequest reads k's state as its leader at leaderEpoch.
func ReadRequest(k Key, leaderEpoch int32) *kmsg.ReadShareGroupStateRequest {
	req := kmsg.NewPtrReadShareGroupStateRequest()
	req.GroupID = k.GroupID
	t := kmsg.NewReadShareGroupStateRequestTopic()
	t.TopicID = k.TopicID
	p := kmsg.NewReadShareGroupStateRequestTopicPartition()
	p.Partition, p.LeaderEpoch = k.Partition, leaderEpoch
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// WriteRequest writes k's start offset and state batches as its leader at
// leaderEpoch, in state epoch stateEpoch; its DeliveryCompleteCount is -1
// (not known).
func WriteRequest(k Key, stateEpoch, leaderEpoch int32, startOffset int64, batches []StateBatch) *kmsg.WriteShareGroupStateRequest {
	req := kmsg.NewPtrWriteShareGroupStateRequest()
	req.GroupID = k.GroupID
	t := kmsg.NewWriteShareGroupStateRequestTopic()
	t.TopicID = k.TopicID
	p := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	p.Partition, p.StateEpoch, p.LeaderEpoch, p.StartOffset = k.Partition, stateEpoch, leaderEpoch, startOffset
	for _, b := range batches {
		sb := kmsg.NewWriteShareGroupStateRequestTopicPartitionStateBatch()
		sb.FirstOffset, sb.LastOffset, sb.DeliveryState, sb.DeliveryCount = b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount
		p.StateBatches = append(p.StateBatches, sb)
	}
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// DeleteRequest removes k's state.
func DeleteRequest(k Key) *kmsg.DeleteShareGroupStateRequest {
	req := kmsg.NewPtrDeleteShareGroupStateRequest()
	req.GroupID = k.GroupID
	t := kmsg.NewDeleteShareGroupStateRequestTopic()
	t.TopicID = k.TopicID
	p := kmsg.NewDeleteShareGroupStateRequestTopicPartition()
	p.Partition = k.Partition
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// SummaryRequest reads k's start offset and epochs.
func SummaryRequest(k Key) *kmsg.ReadShareGroupStateSummaryRequest {
	req := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	req.GroupID = k.GroupID
	t := kmsg.NewReadShareGroupStateSummaryRequestTopic()
	t.TopicID = k.TopicID
	p := kmsg.NewReadShareGroupStateSummaryRequestTopicPartition()
	p.Partition = k.Partition
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// InitializeResult is the one share-partition's result of r; ok is false
// when r does not hold exactly one.
func InitializeResult(r *kmsg.InitializeShareGroupStateResponse) (kmsg.InitializeShareGroupStateResponseTopicPartition, bool) {
	return onlyResult(r.Topics, func(t kmsg.InitializeShareGroupStateResponseTopic) []kmsg.InitializeShareGroupStateResponseTopicPartition {
		return t.Partitions
	})
}

// ReadResult is the one share-partition's result of r, as InitializeResult.
func ReadResult(r *kmsg.ReadShareGroupStateResponse) (kmsg.ReadShareGroupStateResponseTopicPartition, bool) {
	return onlyResult(r.Topics, func(t kmsg.ReadShareGroupStateResponseTopic) []kmsg.ReadShareGroupStateResponseTopicPartition {
		return t.Partitions
	})
}

// WriteResult is the one share-partition's result of r, as InitializeResult.
func WriteResult(r *kmsg.WriteShareGroupStateResponse) (kmsg.WriteShareGroupStateResponseTopicPartition, bool) {
	return onlyResult(r.Topics, func(t kmsg.WriteShareGroupStateResponseTopic) []kmsg.WriteShareGroupStateResponseTopicPartition {
		return t.Partitions
	})
}

// DeleteResult is the one share-partition's result of r, as InitializeResult.
func DeleteResult(r *kmsg.DeleteShareGroupStateResponse) (kmsg.DeleteShareGroupStateResponseTopicPartition, bool) {
	return onlyResult(r.Topics, func(t kmsg.DeleteShareGroupStateResponseTopic) []kmsg.DeleteShareGroupStateResponseTopicPartition {
		return t.Partitions
	})
}

// SummaryResult is the one share-partition's result of r, as
// InitializeResult.
func SummaryResult(r *kmsg.ReadShareGroupStateSummaryResponse) (kmsg.ReadShareGroupStateSummaryResponseTopicPartition, bool) {
	return onlyResult(r.Topics, func(t kmsg.ReadShareGroupStateSummaryResponseTopic) []kmsg.ReadShareGroupStateSummaryResponseTopicPartition {
		return t.Partitions
	})
}

// onlyResult is the one partition of the one topic of a response.
func onlyResult[T, P any](topics []T, partitions func(T) []P) (P, bool) {
	var zero P
	if len(topics) != 1 {
		return zero, false
	}
	ps := partitions(topics[0])
	if len(ps) != 1 {
		return zero, false
	}
	return ps[0], true
}

// ReadBatches are the state batches of a read's result.
func ReadBatches(rp kmsg.ReadShareGroupStateResponseTopicPartition) []StateBatch {
	var out []StateBatch
	for _, b := range rp.StateBatches {
		out = append(out, StateBatch{FirstOffset: b.FirstOffset, LastOffset: b.LastOffset, DeliveryState: b.DeliveryState, DeliveryCount: b.DeliveryCount})
	}
	return out
}
