package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Heartbeat: v0-4
//
// Behavior:
//   - While the partition loads the answer is NONE, as Kafka's: the member
//     is not kicked out for a coordinator failover.
//
// Version notes:
//   - v3: GroupInstanceID (KIP-345).
func (c *GroupCoordinator) Heartbeat(ctx context.Context, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := kmsg.NewPtrHeartbeatResponse()
	resp.Version = req.Version
	if req.Group == "" {
		resp.ErrorCode = invalidGroupID
		return resp
	}
	s, code := c.lockShard(req.Group)
	if code == coordinatorLoadInProgress {
		return resp
	}
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	defer s.mu.Unlock()
	var instanceID *string
	if req.Version >= 3 {
		instanceID = req.InstanceID
	}
	resp.ErrorCode = s.heartbeat(req.Group, req.MemberID, instanceID, req.Generation)
	return resp
}

// heartbeat is GroupMetadataManager.classicGroupHeartbeatToClassicGroup.
func (s *shard) heartbeat(groupID, memberID string, instanceID *string, generation int32) int16 {
	if cg := s.consumerGroups[groupID]; cg != nil {
		return classicMemberOfConsumerGroup(cg, memberID, instanceID)
	}
	g := s.group(groupID)
	if g == nil {
		return unknownMemberID
	}
	if g.is(stateDead) {
		return coordinatorNotAvailable
	}
	if code := g.validateMember(memberID, instanceID); code != 0 {
		return code
	}
	if generation != g.generationID {
		return illegalGeneration
	}
	switch g.state {
	case stateEmpty:
		return unknownMemberID
	case statePreparingRebalance:
		s.rescheduleHeartbeat(g, g.member(memberID))
		return rebalanceInProgress
	default:
		// Members heartbeat from their JoinGroup response on, while the
		// group is still CompletingRebalance: a normal heartbeat.
		s.rescheduleHeartbeat(g, g.member(memberID))
		return 0
	}
}
