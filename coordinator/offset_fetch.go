package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetFetch: v1-9
//
// Behavior:
//   - Partitions without a committed offset answer offset -1, leader epoch
//     -1 and empty metadata, without error; so does every partition of a
//     group that does not exist.
//   - RequireStable (v7+, KIP-447): a partition with offsets committed by
//     an open transaction (TxnOffsetCommit) answers UNSTABLE_OFFSET_COMMIT,
//     offset -1, so a read_committed consumer retries rather than start
//     from an offset about to change (OffsetMetadataManager.fetchOffsets).
//     Without it the committed offset is returned, the pending one unseen.
//
// Version notes:
//   - v2: null Topics fetches every partition of the group; top-level
//     ErrorCode (before v2 a group error is put on every partition).
//   - v5: LeaderEpoch (KIP-320).
//   - v8: several groups per request (KIP-709).
//   - v9: MemberID/MemberEpoch (KIP-848): for a consumer group, a member
//     id or epoch must name a member at its current epoch
//     (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH as the group's error,
//     ConsumerGroup.validateOffsetFetch); classic groups ignore them.
func (c *GroupCoordinator) OffsetFetch(ctx context.Context, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := kmsg.NewPtrOffsetFetchResponse()
	resp.Version = req.Version
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			resp.Groups = append(resp.Groups, c.fetchOffsets(rg, req.RequireStable))
		}
		return resp
	}

	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = req.Group
	if req.Topics != nil || req.Version < 2 {
		rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{}
		for _, t := range req.Topics {
			rg.Topics = append(rg.Topics, kmsg.OffsetFetchRequestGroupTopic{Topic: t.Topic, Partitions: t.Partitions})
		}
	}
	g := c.fetchOffsets(rg, req.Version >= 7 && req.RequireStable)
	if req.Version >= 2 {
		resp.ErrorCode = g.ErrorCode
	}
	for _, t := range g.Topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition = p.Partition
			rp.Offset, rp.LeaderEpoch, rp.Metadata, rp.ErrorCode = p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if req.Version < 2 && g.ErrorCode != 0 {
		// No top-level error before v2: every requested partition gets it.
		resp.Topics = nil
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition = p
				rp.Offset, rp.LeaderEpoch, rp.Metadata, rp.ErrorCode = -1, -1, kmsg.StringPtr(""), g.ErrorCode
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
	}
	return resp
}

// fetchOffsets answers one group (OffsetMetadataManager.fetchOffsets and
// fetchAllOffsets). A nil Topics asks for everything the group committed.
func (c *GroupCoordinator) fetchOffsets(rg kmsg.OffsetFetchRequestGroup, requireStable bool) kmsg.OffsetFetchResponseGroup {
	out := kmsg.NewOffsetFetchResponseGroup()
	out.Group = rg.Group
	s, code := c.lockShard(rg.Group)
	if code != 0 {
		out.ErrorCode = code
		return out
	}
	defer s.mu.Unlock()
	if s.isShareGroup(rg.Group) {
		out.ErrorCode = groupIDNotFound
		return out
	}
	g := s.group(rg.Group)
	exists := g != nil && !g.is(stateDead)
	if cg := s.consumerGroups[rg.Group]; cg != nil {
		if code := cg.validateOffsetFetch(rg.MemberID, rg.MemberEpoch); code != 0 {
			out.ErrorCode = code
			return out
		}
		exists = true
	}

	partition := func(topic string, p int32) kmsg.OffsetFetchResponseGroupTopicPartition {
		rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
		rp.Partition = p
		rp.Offset, rp.LeaderEpoch, rp.Metadata = -1, -1, kmsg.StringPtr("")
		if requireStable && s.pending.has(rg.Group, topic, p) {
			rp.ErrorCode = unstableOffsetCommit
			return rp
		}
		if exists {
			if om, ok := s.offsets.get(rg.Group, topic, p); ok {
				rp.Offset, rp.LeaderEpoch, rp.Metadata = om.offset, om.leaderEpoch, kmsg.StringPtr(om.metadata)
			}
		}
		return rp
	}
	if rg.Topics == nil {
		out.Topics = []kmsg.OffsetFetchResponseGroupTopic{}
		if !exists {
			return out
		}
		for _, topic := range s.offsets.topics(rg.Group) {
			rt := kmsg.NewOffsetFetchResponseGroupTopic()
			rt.Topic = topic
			for _, p := range s.offsets.partitions(rg.Group, topic) {
				rt.Partitions = append(rt.Partitions, partition(topic, p))
			}
			out.Topics = append(out.Topics, rt)
		}
		return out
	}
	for _, t := range rg.Topics {
		rt := kmsg.NewOffsetFetchResponseGroupTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, partition(t.Topic, p))
		}
		out.Topics = append(out.Topics, rt)
	}
	return out
}

// validateOffsetFetch is ConsumerGroup.validateOffsetFetch: without a
// member id and epoch anyone may fetch (the admin client); otherwise the
// member must exist and be at its current epoch.
func (g *consumerGroup) validateOffsetFetch(memberID *string, epoch int32) int16 {
	if memberID == nil && epoch < 0 {
		return 0
	}
	id := ""
	if memberID != nil {
		id = *memberID
	}
	m := g.member(id)
	if m == nil {
		return unknownMemberID
	}
	if epoch != m.memberEpoch {
		return staleMemberEpoch
	}
	return 0
}
