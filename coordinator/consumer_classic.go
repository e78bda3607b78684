package coordinator

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The classic group APIs (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)
// sent to a consumer group. Kafka lets classic members join a consumer
// group (a mixed group); Strait does not serve mixed groups, so every
// member of a consumer group uses the consumer protocol and these answer
// as Kafka answers a classic request naming a consumer-protocol member.

// classicMemberOfConsumerGroup is validateConsumerGroupMember followed by
// throwIfMemberDoesNotUseClassicProtocol: FENCED_INSTANCE_ID for an
// instance id held by another member, UNKNOWN_MEMBER_ID otherwise (no
// member of a consumer group uses the classic protocol here).
func classicMemberOfConsumerGroup(g *consumerGroup, memberID string, instanceID *string) int16 {
	if instanceID != nil {
		if m := g.staticMember(*instanceID); m != nil && m.id != memberID {
			return fencedInstanceID
		}
	}
	return unknownMemberID
}

// joinConsumerGroup handles a classic JoinGroup for a consumer group: an
// empty consumer group is deleted, so the join creates a classic group
// (the online downgrade of an empty group, maybeDeleteEmptyConsumerGroup);
// one with members answers INCONSISTENT_GROUP_PROTOCOL, as Kafka answers
// a JoinGroup for a group of another type, since mixed groups are not
// served. It reports whether the join may go on. Called with mu held.
func (s *shard) joinConsumerGroup(j *joinRequest, ch chan *kmsg.JoinGroupResponse) bool {
	g := s.consumerGroups[j.group]
	if g == nil {
		return true
	}
	if !g.isEmpty() {
		ch <- &kmsg.JoinGroupResponse{ErrorCode: inconsistentGroupProtocol, Generation: -1, MemberID: j.memberID}
		return false
	}
	s.log.Info("replacing an empty consumer group by a classic group", "group", g.id)
	s.writeConsumerRecords(groupTombstones(g), false)
	return true
}

// leaveConsumerGroup is classicGroupLeaveToConsumerGroup: a static member
// named by its instance id alone (the admin client's removal) is removed
// whatever its protocol; any other member id answers UNKNOWN_MEMBER_ID
// (or FENCED_INSTANCE_ID). Called with mu held.
func (s *shard) leaveConsumerGroup(g *consumerGroup, members []kmsg.LeaveGroupRequestMember) []kmsg.LeaveGroupResponseMember {
	var out []kmsg.LeaveGroupResponseMember
	for _, lm := range members {
		if lm.MemberID != "" || lm.InstanceID == nil {
			out = append(out, leaveMember(lm, classicMemberOfConsumerGroup(g, lm.MemberID, lm.InstanceID)))
			continue
		}
		m := g.staticMember(*lm.InstanceID)
		if m == nil {
			out = append(out, leaveMember(lm, unknownMemberID))
			continue
		}
		s.log.Info("static consumer group member removed by LeaveGroup", "group", g.id, "member", m.id, "instance_id", *lm.InstanceID)
		s.writeConsumerRecords(s.fenceConsumerMember(g, m), false)
		out = append(out, leaveMember(lm, 0))
	}
	return out
}
