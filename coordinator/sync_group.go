package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// SyncGroup: v0-5
//
// Behavior:
//   - Followers block until the leader's assignment is persisted; the
//     leader's assignment is written as a GroupMetadataValue record with
//     acks=all before anyone is answered.
//   - If ctx ends first, the member stays parked (as in Kafka) and
//     COORDINATOR_NOT_AVAILABLE is returned for a response nobody reads.
//
// Version notes:
//   - v3: GroupInstanceID (KIP-345).
//   - v5: ProtocolType and ProtocolName, checked against the group's (KIP-559).
func (c *GroupCoordinator) SyncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	fail := func(code int16) *kmsg.SyncGroupResponse {
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.Version = req.Version
		resp.ErrorCode = code
		resp.MemberAssignment = []byte{}
		return resp
	}
	if req.Group == "" {
		return fail(invalidGroupID)
	}
	s, code := c.lockShard(req.Group)
	if code != 0 {
		return fail(code)
	}
	ch := make(chan *kmsg.SyncGroupResponse, 1)
	s.syncGroup(req, ch)
	s.mu.Unlock()

	select {
	case resp := <-ch:
		resp.Version = req.Version
		if resp.MemberAssignment == nil {
			resp.MemberAssignment = []byte{}
		}
		return resp
	case <-ctx.Done():
		return fail(coordinatorNotAvailable)
	case <-reqctx.Draining(ctx):
		// The broker is shutting down: the member rejoins elsewhere
		// (Kafka answers pending joins NOT_COORDINATOR on resignation).
		return fail(coordinatorNotAvailable)
	}
}

// syncGroup is GroupMetadataManager.classicGroupSyncToClassicGroup.
func (s *shard) syncGroup(req *kmsg.SyncGroupRequest, ch chan *kmsg.SyncGroupResponse) {
	errResp := func(code int16) { ch <- &kmsg.SyncGroupResponse{ErrorCode: code} }
	if cg := s.consumerGroups[req.Group]; cg != nil {
		var instanceID *string
		if req.Version >= 3 {
			instanceID = req.InstanceID
		}
		errResp(classicMemberOfConsumerGroup(cg, req.MemberID, instanceID))
		return
	}
	g := s.group(req.Group)
	if g == nil || g.isEmpty() {
		errResp(unknownMemberID)
		return
	}
	if code := s.validateSyncGroup(g, req); code != 0 {
		errResp(code)
		return
	}
	switch g.state {
	case statePreparingRebalance:
		errResp(rebalanceInProgress)
	case stateCompletingRebalance:
		m := g.member(req.MemberID)
		g.setAwaitingSync(m, ch)
		s.removePendingSyncMember(g, req.MemberID)
		if g.isLeader(req.MemberID) {
			s.storeLeaderAssignment(g, req)
		}
	case stateStable:
		s.removePendingSyncMember(g, req.MemberID)
		m := g.member(req.MemberID)
		ch <- &kmsg.SyncGroupResponse{
			ProtocolType:     optString(g.protocolType),
			Protocol:         optString(g.protocolName),
			MemberAssignment: m.assignment,
		}
	}
}

// storeLeaderAssignment persists the leader's assignment, then hands it
// out and makes the group Stable; members the leader left out get an
// empty assignment.
func (s *shard) storeLeaderAssignment(g *classicGroup, req *kmsg.SyncGroupRequest) {
	assignment := make(map[string][]byte, len(g.members))
	for _, a := range req.GroupAssignment {
		assignment[a.MemberID] = append([]byte(nil), a.MemberAssignment...)
	}
	var missing []string
	for _, m := range g.members {
		if _, ok := assignment[m.id]; !ok {
			assignment[m.id] = []byte{}
			missing = append(missing, m.id)
		}
	}
	if len(missing) > 0 {
		s.log.Warn("setting empty assignments for members the leader did not assign", "group", g.id,
			"generation", g.generationID, "members", missing)
	}
	s.log.Info("assignment received from the leader", "group", g.id, "leader", req.MemberID,
		"generation", g.generationID, "members", len(g.members))
	generation := req.Generation
	s.append([]coordRecord{newGroupMetadataRecord(g, assignment)}, false, func(err error) {
		// Members may have joined (or the shard unloaded) meanwhile:
		// only the same generation, still awaiting its assignment, moves on.
		if !g.is(stateCompletingRebalance) || g.generationID != generation {
			return
		}
		if err != nil {
			code := appendErrorCode(err)
			s.resetAndPropagateAssignmentWithError(g, code)
			s.maybePrepareRebalanceOrCompleteJoin(g, "error storing the group assignment")
			return
		}
		s.setAndPropagateAssignment(g, assignment)
		g.transitionTo(stateStable, s.nowMs())
	})
}

// validateSyncGroup checks member, generation and protocol
// (GroupMetadataManager.validateSyncGroup).
func (s *shard) validateSyncGroup(g *classicGroup, req *kmsg.SyncGroupRequest) int16 {
	if g.is(stateDead) {
		return coordinatorNotAvailable
	}
	var instanceID *string
	if req.Version >= 3 {
		instanceID = req.InstanceID
	}
	if code := g.validateMember(req.MemberID, instanceID); code != 0 {
		return code
	}
	if req.Generation != g.generationID {
		return illegalGeneration
	}
	if req.Version >= 5 && (isProtocolInconsistent(req.ProtocolType, g.protocolType) || isProtocolInconsistent(req.Protocol, g.protocolName)) {
		return inconsistentGroupProtocol
	}
	return 0
}

// isProtocolInconsistent: both sides known and different.
func isProtocolInconsistent(requested *string, group string) bool {
	return requested != nil && group != "" && *requested != group
}
