package coordinator

import (
	"context"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// LeaveGroup: v0-5
//
// Version notes:
//   - v3: batched Members, with GroupInstanceID; a member id of "" with an
//     instance id removes that static member (KIP-345 admin removal).
//     Before v3 the single MemberID's error is the top-level error.
//   - v5: Reason per member (KIP-800).
func (c *GroupCoordinator) LeaveGroup(ctx context.Context, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := kmsg.NewPtrLeaveGroupResponse()
	resp.Version = req.Version
	members := req.Members
	if req.Version < 3 {
		members = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	finish := func() *kmsg.LeaveGroupResponse {
		if req.Version < 3 {
			// One member, no member list: its error is the response's.
			if resp.ErrorCode == 0 && len(resp.Members) > 0 {
				resp.ErrorCode = resp.Members[0].ErrorCode
			}
			resp.Members = nil
		}
		return resp
	}
	if req.Group == "" {
		resp.ErrorCode = invalidGroupID
		return finish()
	}
	s, code := c.lockShard(req.Group)
	if code != 0 {
		resp.ErrorCode = code
		return finish()
	}
	defer s.mu.Unlock()
	if cg := s.consumerGroups[req.Group]; cg != nil {
		resp.Members = s.leaveConsumerGroup(cg, members)
		return finish()
	}
	g := s.group(req.Group)
	if g == nil {
		// Kafka answers a missing group member by member.
		for _, m := range members {
			resp.Members = append(resp.Members, leaveMember(m, unknownMemberID))
		}
		return finish()
	}
	if g.is(stateDead) {
		resp.ErrorCode = coordinatorNotAvailable
		return finish()
	}
	resp.Members = s.leaveGroup(g, req.Version, members)
	return finish()
}

func leaveMember(m kmsg.LeaveGroupRequestMember, code int16) kmsg.LeaveGroupResponseMember {
	r := kmsg.NewLeaveGroupResponseMember()
	r.MemberID = m.MemberID
	r.InstanceID = m.InstanceID
	r.ErrorCode = code
	return r
}

// leaveGroup is GroupMetadataManager.classicGroupLeaveToClassicGroup.
func (s *shard) leaveGroup(g *classicGroup, version int16, members []kmsg.LeaveGroupRequestMember) []kmsg.LeaveGroupResponseMember {
	var out []kmsg.LeaveGroupResponseMember
	var left []string
	for _, lm := range members {
		reason := "not provided"
		if version >= 5 && lm.Reason != nil {
			reason = *lm.Reason
		}
		switch {
		case lm.MemberID == "":
			if lm.InstanceID != nil && g.hasStaticMember(*lm.InstanceID) {
				s.removeCurrentMember(g, g.staticMemberID(*lm.InstanceID), reason)
				out = append(out, leaveMember(lm, 0))
				left = append(left, lm.MemberID)
			} else {
				out = append(out, leaveMember(lm, unknownMemberID))
			}
		case g.isPendingMember(lm.MemberID):
			g.remove(lm.MemberID)
			s.timer.Cancel(heartbeatKey(g, lm.MemberID))
			s.log.Info("pending member left the group", "group", g.id, "member", lm.MemberID, "reason", reason)
			out = append(out, leaveMember(lm, 0))
			left = append(left, lm.MemberID)
		default:
			if code := g.validateMember(lm.MemberID, lm.InstanceID); code != 0 {
				out = append(out, leaveMember(lm, code))
				continue
			}
			s.removeCurrentMember(g, lm.MemberID, reason)
			out = append(out, leaveMember(lm, 0))
			left = append(left, lm.MemberID)
		}
	}
	if len(left) > 0 {
		reason := "explicit LeaveGroup for (" + strings.Join(left, ", ") + ")"
		switch g.state {
		case stateStable, stateCompletingRebalance:
			s.maybePrepareRebalanceOrCompleteJoin(g, reason)
		case statePreparingRebalance:
			s.maybeCompleteJoinPhase(g)
		}
	}
	return out
}

// removeCurrentMember removes a member that asked to leave; a JoinGroup it
// has parked gets UNKNOWN_MEMBER_ID.
func (s *shard) removeCurrentMember(g *classicGroup, memberID, reason string) {
	m := g.member(memberID)
	s.timer.Cancel(heartbeatKey(g, memberID))
	s.log.Info("member left the group", "group", g.id, "member", memberID, "reason", reason)
	g.completeJoin(m, &kmsg.JoinGroupResponse{ErrorCode: unknownMemberID, Generation: -1, Members: []kmsg.JoinGroupResponseMember{}})
	g.remove(memberID)
}
