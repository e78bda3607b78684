package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetDelete: v0
//
// Behavior:
//   - Unknown topics and partitions answer UNKNOWN_TOPIC_OR_PARTITION
//     (KafkaApis.handleOffsetDeleteRequest).
//   - A group with members (and not using the "consumer" protocol type)
//     answers NON_EMPTY_GROUP; partitions of topics a consumer group
//     subscribes to answer GROUP_SUBSCRIBED_TO_TOPIC.
//   - Tombstones for the deleted offsets are written with acks=all first;
//     they delete the offsets open transactions committed for the
//     partitions too.
func (c *GroupCoordinator) OffsetDelete(ctx context.Context, req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	resp := kmsg.NewPtrOffsetDeleteResponse()
	resp.Version = req.Version
	if req.Group == "" {
		resp.ErrorCode = invalidGroupID
		return resp
	}
	img := c.image()
	type pos struct{ t, p int }
	var valid []pos
	for ti, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		topic := img.Topics[t.Topic]
		for pi, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			if topic == nil || p.Partition < 0 || int(p.Partition) >= len(topic.Partitions) {
				rp.ErrorCode = unknownTopicOrPartition
			} else {
				valid = append(valid, pos{ti, pi})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	groupError := func(code int16) *kmsg.OffsetDeleteResponse {
		resp.ErrorCode = code
		resp.Topics = nil
		return resp
	}

	s, code := c.lockShard(req.Group)
	if code != 0 {
		return groupError(code)
	}
	var subscribed func(topic string) bool
	if cg := s.consumerGroups[req.Group]; cg != nil {
		// Any consumer group may delete offsets of topics it does not
		// subscribe to (ConsumerGroup.validateOffsetDelete).
		subscribed = cg.isSubscribedToTopic
	} else {
		g := s.group(req.Group)
		if g == nil || g.is(stateDead) {
			s.mu.Unlock()
			return groupError(groupIDNotFound)
		}
		switch g.state {
		case stateStable, statePreparingRebalance, stateCompletingRebalance:
			if !g.usesConsumerProtocol() {
				s.mu.Unlock()
				return groupError(nonEmptyGroup)
			}
		}
		subscribed = g.isSubscribedToTopic
	}
	var recs []coordRecord
	for _, v := range valid {
		topic := req.Topics[v.t].Topic
		p := req.Topics[v.t].Partitions[v.p].Partition
		if subscribed(topic) {
			resp.Topics[v.t].Partitions[v.p].ErrorCode = groupSubscribedToTopic
			continue
		}
		// Offsets open transactions committed for the partition go too
		// (OffsetMetadataManager.deleteOffsets).
		if _, ok := s.offsets.get(req.Group, topic, p); ok || s.pending.has(req.Group, topic, p) {
			recs = append(recs, newOffsetCommitTombstone(req.Group, topic, p))
			s.removeOffset(req.Group, topic, p)
		}
	}
	if len(recs) == 0 {
		s.mu.Unlock()
		return resp
	}
	done := s.appendAndWait(recs, true)
	s.mu.Unlock()
	if code := appendErrorCode(awaitAppend(ctx, done)); code != 0 {
		return groupError(code)
	}
	return resp
}
