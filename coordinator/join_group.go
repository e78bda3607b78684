package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// JoinGroup: v0-9
//
// Behavior:
//   - Blocks until the join phase completes (all members rejoined, the
//     rebalance timeout, or the initial rebalance delay for a new group), as
//     Kafka parks the request in the coordinator.
//   - If ctx ends first (the connection closed, the broker stopped) the
//     member stays parked, as in Kafka, and COORDINATOR_NOT_AVAILABLE is
//     returned for a response nobody reads.
//   - No empty GroupMetadata record is written for a newly created group:
//     Kafka writes it only to register the group in its timeline structures.
//
// Version notes:
//   - v0: no rebalance timeout; the session timeout is used.
//   - v4: MEMBER_ID_REQUIRED for a dynamic member's first join (KIP-394).
//   - v5: GroupInstanceID, static membership (KIP-345).
//   - v7: ProtocolType in the response.
//   - v9: SkipAssignment for a static leader that rejoined (KIP-814).
func (c *GroupCoordinator) JoinGroup(ctx context.Context, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	fail := func(code int16) *kmsg.JoinGroupResponse {
		resp := kmsg.NewPtrJoinGroupResponse()
		resp.Version = req.Version
		resp.ErrorCode = code
		resp.MemberID = req.MemberID
		return resp
	}
	if req.Group == "" {
		return fail(invalidGroupID)
	}
	if req.SessionTimeoutMillis < int32(c.cfg.MinSessionTimeout.Milliseconds()) ||
		req.SessionTimeoutMillis > int32(c.cfg.MaxSessionTimeout.Milliseconds()) {
		return fail(invalidSessionTimeout)
	}
	j := joinRequest{
		group:              req.Group,
		memberID:           req.MemberID,
		protocolType:       req.ProtocolType,
		protocols:          copyProtocols(req.Protocols),
		sessionTimeoutMs:   req.SessionTimeoutMillis,
		rebalanceTimeoutMs: req.RebalanceTimeoutMillis,
		version:            req.Version,
		reason:             "not provided",
	}
	if req.Version == 0 {
		j.rebalanceTimeoutMs = req.SessionTimeoutMillis
	}
	if req.Version >= 5 && req.InstanceID != nil {
		id := *req.InstanceID
		j.instanceID = &id
	}
	if req.Version >= 8 && req.Reason != nil && *req.Reason != "" {
		j.reason = *req.Reason
	}
	info := reqctx.From(ctx)
	j.clientID, j.clientHost = info.ClientID, info.ClientHost

	s, code := c.lockShard(req.Group)
	if code != 0 {
		return fail(code)
	}
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	s.joinGroup(&j, ch)
	s.mu.Unlock()

	select {
	case resp := <-ch:
		resp.Version = req.Version
		return resp
	case <-ctx.Done():
		return fail(coordinatorNotAvailable)
	case <-reqctx.Draining(ctx):
		// The broker is shutting down: the member rejoins elsewhere
		// (Kafka answers pending joins NOT_COORDINATOR on resignation).
		return fail(coordinatorNotAvailable)
	}
}

// joinRequest is a JoinGroup with its version gating applied.
type joinRequest struct {
	group              string
	memberID           string
	instanceID         *string
	protocolType       string
	protocols          []kmsg.JoinGroupRequestProtocol
	sessionTimeoutMs   int32
	rebalanceTimeoutMs int32
	clientID           string
	clientHost         string
	version            int16
	reason             string
}

// joinGroup is GroupMetadataManager.classicGroupJoinToClassicGroup; the
// answer goes to ch, now or when the join phase completes.
func (s *shard) joinGroup(j *joinRequest, ch chan *kmsg.JoinGroupResponse) {
	if !s.joinConsumerGroup(j, ch) || !s.joinShareGroup(j, ch) {
		return
	}
	unknown := j.memberID == ""
	g := s.group(j.group)
	if g == nil {
		if !unknown {
			// A member id for a group that does not exist.
			ch <- &kmsg.JoinGroupResponse{ErrorCode: unknownMemberID, Generation: -1, MemberID: j.memberID}
			return
		}
		g = s.getOrCreateGroup(j.group)
	}
	switch {
	case !s.acceptJoiningMember(g, j.memberID):
		g.remove(j.memberID)
		ch <- &kmsg.JoinGroupResponse{ErrorCode: groupMaxSizeReached, Generation: -1}
	case unknown:
		s.joinNewMember(j, g, ch)
	default:
		s.joinExistingMember(j, g, ch)
	}
}

func (s *shard) joinNewMember(j *joinRequest, g *classicGroup, ch chan *kmsg.JoinGroupResponse) {
	switch {
	case g.is(stateDead):
		// The group was just unloaded or deleted: let the member find
		// the coordinator again and rejoin.
		ch <- &kmsg.JoinGroupResponse{ErrorCode: coordinatorNotAvailable, Generation: -1}
	case !g.supportsProtocols(j.protocolType, j.protocols):
		ch <- &kmsg.JoinGroupResponse{ErrorCode: inconsistentGroupProtocol, Generation: -1}
	default:
		newID := newMemberID(j.clientID, j.instanceID)
		if j.instanceID != nil {
			s.joinNewStaticMember(j, g, newID, ch)
			return
		}
		if j.version >= 4 {
			// KIP-394: hand out the id and have the member rejoin with
			// it, so a client that retries after a timeout does not leave
			// a member behind. The pending id expires with the session.
			s.log.Info("dynamic member joins with an unknown member id; asking it to rejoin with a new one",
				"group", g.id, "state", g.state.String(), "member", newID)
			g.addPendingMember(newID)
			s.rescheduleHeartbeatAfter(g, newID, ms(j.sessionTimeoutMs))
			ch <- &kmsg.JoinGroupResponse{ErrorCode: memberIDRequired, Generation: -1, MemberID: newID}
			return
		}
		s.addMemberThenRebalanceOrCompleteJoin(j, g, newID, ch)
	}
}

// joinNewStaticMember replaces the member id of a known group.instance.id,
// or adds the static member.
func (s *shard) joinNewStaticMember(j *joinRequest, g *classicGroup, newID string, ch chan *kmsg.JoinGroupResponse) {
	if old := g.staticMemberID(*j.instanceID); old != "" {
		s.log.Info("static member rejoins with an unknown member id; replacing its previous member id",
			"group", g.id, "instance_id", *j.instanceID, "old_member", old, "member", newID)
		s.updateStaticMemberThenRebalanceOrCompleteJoin(j, g, old, newID, ch)
		return
	}
	s.addMemberThenRebalanceOrCompleteJoin(j, g, newID, ch)
}

func (s *shard) joinExistingMember(j *joinRequest, g *classicGroup, ch chan *kmsg.JoinGroupResponse) {
	errResp := func(code int16) *kmsg.JoinGroupResponse {
		return &kmsg.JoinGroupResponse{ErrorCode: code, Generation: -1, MemberID: j.memberID}
	}
	switch {
	case g.is(stateDead):
		ch <- errResp(coordinatorNotAvailable)
		return
	case !g.supportsProtocols(j.protocolType, j.protocols):
		ch <- errResp(inconsistentGroupProtocol)
		return
	case g.isPendingMember(j.memberID):
		if j.instanceID != nil {
			// A pending member is dynamic by construction.
			ch <- errResp(unknownMemberID)
			return
		}
		s.log.Info("pending member joins", "group", g.id, "member", j.memberID)
		s.addMemberThenRebalanceOrCompleteJoin(j, g, j.memberID, ch)
		return
	}
	if code := g.validateMember(j.memberID, j.instanceID); code != 0 {
		ch <- errResp(code)
		return
	}
	m := g.member(j.memberID)
	switch g.state {
	case statePreparingRebalance:
		s.updateMemberThenRebalanceOrCompleteJoin(j, g, m, ch, "member joins during PreparingRebalance; client reason: "+j.reason)
	case stateCompletingRebalance:
		if m.matches(j.protocols) {
			// The member lost its JoinGroup response: send it again.
			resp := s.joinResponse(g, j.memberID, 0)
			if g.isLeader(j.memberID) {
				resp.Members = g.currentMembers()
			}
			ch <- resp
			return
		}
		s.updateMemberThenRebalanceOrCompleteJoin(j, g, m, ch, "member updates its metadata during CompletingRebalance; client reason: "+j.reason)
	case stateStable:
		switch {
		case g.isLeader(j.memberID):
			// The leader rejoining forces a rebalance: it may have seen
			// a change the metadata does not show (new partitions).
			s.updateMemberThenRebalanceOrCompleteJoin(j, g, m, ch, "leader rejoins during Stable; client reason: "+j.reason)
		case !m.matches(j.protocols):
			s.updateMemberThenRebalanceOrCompleteJoin(j, g, m, ch, "member updates its metadata during Stable; client reason: "+j.reason)
		default:
			ch <- s.joinResponse(g, j.memberID, 0)
		}
	default:
		s.log.Warn("rejoining member found the group in an unexpected state", "group", g.id, "member", j.memberID, "state", g.state.String())
		ch <- errResp(unknownMemberID)
	}
}

func (s *shard) updateMemberThenRebalanceOrCompleteJoin(j *joinRequest, g *classicGroup, m *member, ch chan *kmsg.JoinGroupResponse, reason string) {
	g.updateMember(m, j.protocols, j.rebalanceTimeoutMs, j.sessionTimeoutMs, ch)
	s.maybePrepareRebalanceOrCompleteJoin(g, reason)
}

func (s *shard) addMemberThenRebalanceOrCompleteJoin(j *joinRequest, g *classicGroup, memberID string, ch chan *kmsg.JoinGroupResponse) {
	m := &member{
		id:                 memberID,
		instanceID:         j.instanceID,
		clientID:           j.clientID,
		clientHost:         j.clientHost,
		rebalanceTimeoutMs: j.rebalanceTimeoutMs,
		sessionTimeoutMs:   j.sessionTimeoutMs,
		protocolType:       j.protocolType,
		protocols:          j.protocols,
		isNew:              true,
	}
	if g.is(statePreparingRebalance) && g.previousState == stateEmpty {
		g.newMemberAdded = true
	}
	g.add(m, ch)
	// A new member cannot heartbeat (it has no id yet) and a parked
	// JoinGroup does not show a disconnect, so a new member's join is
	// bounded separately; a live client simply retries.
	s.rescheduleHeartbeatAfter(g, memberID, s.c.cfg.NewMemberJoinTimeout)
	s.maybePrepareRebalanceOrCompleteJoin(g, "adding new member "+memberID+"; client reason: "+j.reason)
}

// updateStaticMemberThenRebalanceOrCompleteJoin swaps a static member's id.
// In Stable, if the selected protocol would not change, the group only
// persists the new id and the member gets the current generation without
// a rebalance (KIP-345); otherwise the group rebalances.
func (s *shard) updateStaticMemberThenRebalanceOrCompleteJoin(j *joinRequest, g *classicGroup, oldID, newID string, ch chan *kmsg.JoinGroupResponse) {
	currentLeader := g.leaderID
	nm := g.replaceStaticMember(*j.instanceID, oldID, newID)
	s.timer.Cancel(heartbeatKey(g, oldID))
	s.rescheduleHeartbeat(g, nm)
	oldRebalance, oldSession, oldProtocols := nm.rebalanceTimeoutMs, nm.sessionTimeoutMs, nm.protocols
	g.updateMember(nm, j.protocols, j.rebalanceTimeoutMs, j.sessionTimeoutMs, ch)

	switch g.state {
	case stateStable:
		if g.protocolName != g.selectProtocol() {
			s.maybePrepareRebalanceOrCompleteJoin(g, "static member "+newID+" rejoined with a change of protocol")
			return
		}
		s.log.Info("static member rejoined during Stable without changing the protocol; no rebalance", "group", g.id, "member", newID)
		instanceID := *j.instanceID
		s.append([]coordRecord{newGroupMetadataRecord(g, g.assignments())}, false, func(err error) {
			if err != nil {
				s.log.Warn("failed to persist the static member's new id; reverting to the old one",
					"group", g.id, "instance_id", instanceID, "member", newID, "err", err)
				if g.member(newID) != nm {
					return
				}
				g.updateMember(nm, oldProtocols, oldRebalance, oldSession, nil)
				reverted := g.replaceStaticMember(instanceID, newID, oldID)
				s.timer.Cancel(heartbeatKey(g, newID))
				s.rescheduleHeartbeat(g, reverted)
				resp := s.joinResponse(g, "", appendErrorCode(err))
				resp.LeaderID = currentLeader
				select { // updateMember above detached ch from the member
				case ch <- resp:
				default:
				}
				return
			}
			if g.member(newID) != nm {
				return
			}
			resp := s.joinResponse(g, newID, 0)
			if j.version >= 9 {
				// KIP-814: the leader learns who is in the group but need
				// not compute a new assignment.
				if g.isLeader(newID) {
					resp.Members = g.currentMembers()
					resp.SkipAssignment = true
				}
			} else {
				resp.LeaderID = currentLeader
			}
			g.completeJoin(nm, resp)
		})
	case stateCompletingRebalance:
		// The leader may already be assigning to the old member id: the
		// new id would get nothing. Rebalance.
		s.prepareRebalance(g, "static member "+newID+" rejoined during CompletingRebalance")
	default:
		s.maybeCompleteJoinPhase(g)
	}
}
