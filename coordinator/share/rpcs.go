package share

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// The five RPCs of the share coordinator (KIP-932), sent by the
// share-partition leaders' persister and, for initialize, delete and the
// summary, by the group coordinator. Each names one group and
// share-partitions of it; a request with no group id, no topics, or a
// topic without partitions is answered with no results, as Kafka's
// ShareCoordinatorService answers it. Every share-partition is answered on
// its own: NOT_COORDINATOR when this broker does not lead its
// __share_group_state partition, COORDINATOR_LOAD_IN_PROGRESS while it
// loads it, and the operation's own errors otherwise. A topic named twice
// is answered once, with the partitions of both in request order.

// InitializeShareGroupState (83) starts or resets share-partitions' state.
func (c *Coordinator) InitializeShareGroupState(ctx context.Context, req *kmsg.InitializeShareGroupStateRequest) *kmsg.InitializeShareGroupStateResponse {
	resp := req.ResponseKind().(*kmsg.InitializeShareGroupStateResponse)
	targets, parts, ok := gather(req.GroupID, req.Topics,
		func(t kmsg.InitializeShareGroupStateRequestTopic) ([16]byte, []kmsg.InitializeShareGroupStateRequestTopicPartition) {
			return t.TopicID, t.Partitions
		},
		func(p kmsg.InitializeShareGroupStateRequestTopicPartition) int32 { return p.Partition })
	if !ok {
		return resp
	}
	outs := c.run(ctx, req.GroupID, targets, "initialize", func(s *shard, k Key, i int) decision { return s.initialize(k, parts[i]) })
	resp.Topics = answer(targets, func(id raftmeta.Uuid, indexes []int) kmsg.InitializeShareGroupStateResponseTopic {
		rt := kmsg.NewInitializeShareGroupStateResponseTopic()
		rt.TopicID = id
		for _, i := range indexes {
			rp := kmsg.NewInitializeShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = targets[i].partition, outs[i].code, outs[i].msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		return rt
	})
	return resp
}

// ReadShareGroupState (84) answers share-partitions' state to their
// leader, fencing older leaders.
func (c *Coordinator) ReadShareGroupState(ctx context.Context, req *kmsg.ReadShareGroupStateRequest) *kmsg.ReadShareGroupStateResponse {
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateResponse)
	targets, parts, ok := gather(req.GroupID, req.Topics,
		func(t kmsg.ReadShareGroupStateRequestTopic) ([16]byte, []kmsg.ReadShareGroupStateRequestTopicPartition) {
			return t.TopicID, t.Partitions
		},
		func(p kmsg.ReadShareGroupStateRequestTopicPartition) int32 { return p.Partition })
	if !ok {
		return resp
	}
	outs := c.run(ctx, req.GroupID, targets, "read", func(s *shard, k Key, i int) decision { return s.read(k, parts[i].LeaderEpoch) })
	resp.Topics = answer(targets, func(id raftmeta.Uuid, indexes []int) kmsg.ReadShareGroupStateResponseTopic {
		rt := kmsg.NewReadShareGroupStateResponseTopic()
		rt.TopicID = id
		for _, i := range indexes {
			o := outs[i]
			rp := kmsg.NewReadShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = targets[i].partition, o.code, o.msg
			if o.code == 0 {
				rp.StateEpoch, rp.StartOffset = o.view.stateEpoch, o.view.startOffset
				for _, b := range o.view.batches {
					rb := kmsg.NewReadShareGroupStateResponseTopicPartitionStateBatch()
					rb.FirstOffset, rb.LastOffset, rb.DeliveryState, rb.DeliveryCount = b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount
					rp.StateBatches = append(rp.StateBatches, rb)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		return rt
	})
	return resp
}

// WriteShareGroupState (85) records share-partition leaders' changes.
func (c *Coordinator) WriteShareGroupState(ctx context.Context, req *kmsg.WriteShareGroupStateRequest) *kmsg.WriteShareGroupStateResponse {
	resp := req.ResponseKind().(*kmsg.WriteShareGroupStateResponse)
	targets, parts, ok := gather(req.GroupID, req.Topics,
		func(t kmsg.WriteShareGroupStateRequestTopic) ([16]byte, []kmsg.WriteShareGroupStateRequestTopicPartition) {
			return t.TopicID, t.Partitions
		},
		func(p kmsg.WriteShareGroupStateRequestTopicPartition) int32 { return p.Partition })
	if !ok {
		return resp
	}
	outs := c.run(ctx, req.GroupID, targets, "write", func(s *shard, k Key, i int) decision { return s.write(k, parts[i]) })
	resp.Topics = answer(targets, func(id raftmeta.Uuid, indexes []int) kmsg.WriteShareGroupStateResponseTopic {
		rt := kmsg.NewWriteShareGroupStateResponseTopic()
		rt.TopicID = id
		for _, i := range indexes {
			rp := kmsg.NewWriteShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = targets[i].partition, outs[i].code, outs[i].msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		return rt
	})
	return resp
}

// DeleteShareGroupState (86) removes share-partitions' state.
func (c *Coordinator) DeleteShareGroupState(ctx context.Context, req *kmsg.DeleteShareGroupStateRequest) *kmsg.DeleteShareGroupStateResponse {
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupStateResponse)
	targets, _, ok := gather(req.GroupID, req.Topics,
		func(t kmsg.DeleteShareGroupStateRequestTopic) ([16]byte, []kmsg.DeleteShareGroupStateRequestTopicPartition) {
			return t.TopicID, t.Partitions
		},
		func(p kmsg.DeleteShareGroupStateRequestTopicPartition) int32 { return p.Partition })
	if !ok {
		return resp
	}
	outs := c.run(ctx, req.GroupID, targets, "delete", func(s *shard, k Key, _ int) decision { return s.remove(k) })
	resp.Topics = answer(targets, func(id raftmeta.Uuid, indexes []int) kmsg.DeleteShareGroupStateResponseTopic {
		rt := kmsg.NewDeleteShareGroupStateResponseTopic()
		rt.TopicID = id
		for _, i := range indexes {
			rp := kmsg.NewDeleteShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = targets[i].partition, outs[i].code, outs[i].msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		return rt
	})
	return resp
}

// ReadShareGroupStateSummary (87) answers share-partitions' start offsets
// and epochs (and, from v1, their delivery complete counts, KIP-1226), for
// DescribeShareGroupOffsets; it fences nothing.
func (c *Coordinator) ReadShareGroupStateSummary(ctx context.Context, req *kmsg.ReadShareGroupStateSummaryRequest) *kmsg.ReadShareGroupStateSummaryResponse {
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateSummaryResponse)
	targets, _, ok := gather(req.GroupID, req.Topics,
		func(t kmsg.ReadShareGroupStateSummaryRequestTopic) ([16]byte, []kmsg.ReadShareGroupStateSummaryRequestTopicPartition) {
			return t.TopicID, t.Partitions
		},
		func(p kmsg.ReadShareGroupStateSummaryRequestTopicPartition) int32 { return p.Partition })
	if !ok {
		return resp
	}
	outs := c.run(ctx, req.GroupID, targets, "read summary of", func(s *shard, k Key, _ int) decision { return s.summary(k) })
	resp.Topics = answer(targets, func(id raftmeta.Uuid, indexes []int) kmsg.ReadShareGroupStateSummaryResponseTopic {
		rt := kmsg.NewReadShareGroupStateSummaryResponseTopic()
		rt.TopicID = id
		for _, i := range indexes {
			o := outs[i]
			rp := kmsg.NewReadShareGroupStateSummaryResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = targets[i].partition, o.code, o.msg
			if o.code == 0 {
				rp.StateEpoch, rp.LeaderEpoch, rp.StartOffset = o.view.stateEpoch, o.view.leaderEpoch, o.view.startOffset
				rp.DeliveryCompleteCount = o.view.deliveryCompleteCount
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		return rt
	})
	return resp
}

// gather lists the share-partitions a request names, with each one's
// request data; ok is false when the request names none: no group id, no
// topics, or a topic without partitions.
func gather[T, P any](group string, topics []T, topic func(T) ([16]byte, []P), partition func(P) int32) (targets []target, parts []P, ok bool) {
	ok = group != "" && len(topics) > 0
	for _, t := range topics {
		id, ps := topic(t)
		ok = ok && len(ps) > 0
		for _, p := range ps {
			targets = append(targets, target{raftmeta.Uuid(id), partition(p)})
			parts = append(parts, p)
		}
	}
	return targets, parts, ok
}

// answer builds a response's topics, one per topic of targets in the
// order topics first appear, from the indexes of its targets.
func answer[RT any](targets []target, topic func(id raftmeta.Uuid, indexes []int) RT) []RT {
	var out []RT
	for _, g := range byTopic(targets) {
		out = append(out, topic(g.topic, g.indexes))
	}
	return out
}
