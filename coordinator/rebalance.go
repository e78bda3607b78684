package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The rebalance machinery of GroupMetadataManager for classic groups.
// Every function here runs with the shard mutex held.

func ms(n int32) time.Duration { return time.Duration(n) * time.Millisecond }

func heartbeatKey(g *classicGroup, memberID string) timerKey {
	return timerKey{kind: timerHeartbeat, group: g.id, member: memberID}
}
func joinKey(g *classicGroup) timerKey { return timerKey{kind: timerJoin, group: g.id} }
func syncKey(g *classicGroup) timerKey { return timerKey{kind: timerSync, group: g.id} }

// maybePrepareRebalanceOrCompleteJoin starts a rebalance if the group can
// have one, else tries to finish the join phase under way.
func (s *shard) maybePrepareRebalanceOrCompleteJoin(g *classicGroup, reason string) {
	if g.canRebalance() {
		s.prepareRebalance(g, reason)
	} else {
		s.maybeCompleteJoinPhase(g)
	}
}

// prepareRebalance moves the group to PreparingRebalance. Members parked
// in SyncGroup are told to rejoin. A group coming from Empty waits
// group.initial.rebalance.delay.ms, extended while members keep joining,
// up to the rebalance timeout; otherwise the join phase ends when all
// members rejoined or the rebalance timeout passes.
func (s *shard) prepareRebalance(g *classicGroup, reason string) {
	if g.is(stateCompletingRebalance) {
		s.resetAndPropagateAssignmentWithError(g, rebalanceInProgress)
	}
	s.removeSyncExpiration(g)
	initial := g.is(stateEmpty)
	if initial {
		delay := int32(s.c.cfg.InitialRebalanceDelay.Milliseconds())
		remaining := max(g.rebalanceTimeoutMs()-delay, 0)
		id := g.id
		s.timer.Schedule(joinKey(g), ms(delay), func() { s.tryCompleteInitialRebalance(id, delay, remaining) })
	}
	prev := g.state
	g.transitionTo(statePreparingRebalance, s.nowMs())
	s.log.Info("preparing to rebalance group", "group", g.id, "from", prev.String(),
		"generation", g.generationID, "reason", reason)
	if !initial {
		s.maybeCompleteJoinElseSchedule(g)
	}
}

func (s *shard) maybeCompleteJoinElseSchedule(g *classicGroup) {
	if g.hasAllMembersJoined() {
		s.completeJoinPhase(g)
		return
	}
	id := g.id
	s.timer.Schedule(joinKey(g), ms(g.rebalanceTimeoutMs()), func() {
		if g := s.groups[id]; g != nil {
			s.completeJoinPhase(g)
		}
	})
}

// tryCompleteInitialRebalance ends the initial delay, or extends it if a
// member arrived meanwhile and time remains.
func (s *shard) tryCompleteInitialRebalance(id string, delay, remaining int32) {
	g := s.groups[id]
	if g == nil {
		return
	}
	if g.newMemberAdded && remaining != 0 {
		g.newMemberAdded = false
		newDelay := min(int32(s.c.cfg.InitialRebalanceDelay.Milliseconds()), remaining)
		newRemaining := max(remaining-delay, 0)
		s.timer.Schedule(joinKey(g), ms(newDelay), func() { s.tryCompleteInitialRebalance(id, newDelay, newRemaining) })
		return
	}
	s.completeJoinPhase(g)
}

// maybeCompleteJoinPhase finishes the join phase once every member
// rejoined, except during an initial rebalance, which only its delay ends.
func (s *shard) maybeCompleteJoinPhase(g *classicGroup) {
	if !g.is(statePreparingRebalance) || g.previousState == stateEmpty || !g.hasAllMembersJoined() {
		return
	}
	s.completeJoinPhase(g)
}

// completeJoinPhase ends the join phase (completeClassicGroupJoin):
// dynamic members that did not rejoin are removed, the next generation
// starts, and every parked JoinGroup is answered, the leader's with all
// members' metadata. An emptied group is persisted as such.
func (s *shard) completeJoinPhase(g *classicGroup) {
	s.timer.Cancel(joinKey(g))
	if !g.is(statePreparingRebalance) {
		// Only a join phase can complete; a stale timer or callback finds
		// the group elsewhere (Kafka would fail the operation).
		s.log.Error("not completing the join phase of a group that is not preparing a rebalance", "group", g.id, "state", g.state.String())
		return
	}
	for _, m := range g.notYetRejoinedMembers() {
		if m.isStatic() {
			continue
		}
		g.remove(m.id)
		s.timer.Cancel(heartbeatKey(g, m.id))
		s.log.Info("removed a member that did not rejoin", "group", g.id, "member", m.id)
	}
	if !g.maybeElectNewJoinedLeader() && len(g.members) > 0 {
		// Only static members are left and none rejoined: wait another
		// rebalance timeout for them (or for their sessions to expire).
		s.log.Error("group could not complete its rebalance because no members rejoined", "group", g.id)
		id := g.id
		s.timer.Schedule(joinKey(g), ms(g.rebalanceTimeoutMs()), func() {
			if g := s.groups[id]; g != nil {
				s.completeJoinPhase(g)
			}
		})
		return
	}
	g.initNextGeneration(s.nowMs())
	if g.is(stateEmpty) {
		s.log.Info("group is now empty", "group", g.id, "generation", g.generationID)
		id := g.id
		s.append([]coordRecord{newGroupMetadataRecord(g, nil)}, false, func(err error) {
			if err != nil {
				s.log.Warn("failed to write empty group metadata", "group", id, "err", err)
			}
		})
		return
	}
	s.log.Info("stabilized group", "group", g.id, "generation", g.generationID, "members", len(g.members))
	for _, m := range g.members {
		resp := s.joinResponse(g, m.id, 0)
		if g.isLeader(m.id) {
			resp.Members = g.currentMembers()
		}
		g.completeJoin(m, resp)
		s.rescheduleHeartbeat(g, m)
		m.isNew = false
		g.pendingSyncMembers[m.id] = true
	}
	s.schedulePendingSync(g)
}

// joinResponse is a JoinGroup answer carrying the group's current
// generation.
func (s *shard) joinResponse(g *classicGroup, memberID string, code int16) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.ErrorCode = code
	resp.MemberID = memberID
	resp.Generation = g.generationID
	resp.ProtocolType = optString(g.protocolType)
	resp.Protocol = optString(g.protocolName)
	resp.LeaderID = g.leaderID
	resp.Members = []kmsg.JoinGroupResponseMember{}
	return resp
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// schedulePendingSync removes, after the rebalance timeout, the members
// that did not send SyncGroup for this generation.
func (s *shard) schedulePendingSync(g *classicGroup) {
	id, gen := g.id, g.generationID
	s.timer.Schedule(syncKey(g), ms(g.rebalanceTimeoutMs()), func() { s.expirePendingSync(id, gen) })
}

func (s *shard) expirePendingSync(id string, generation int32) {
	g := s.groups[id]
	if g == nil || g.generationID != generation {
		return
	}
	if !g.is(stateCompletingRebalance) && !g.is(stateStable) {
		return
	}
	if len(g.pendingSyncMembers) == 0 {
		return
	}
	var removed []string
	for _, m := range append([]*member(nil), g.members...) {
		if g.pendingSyncMembers[m.id] {
			g.remove(m.id)
			s.timer.Cancel(heartbeatKey(g, m.id))
			removed = append(removed, m.id)
		}
	}
	s.log.Info("removed members that did not send SyncGroup", "group", id, "members", removed)
	s.prepareRebalance(g, "members did not sync in time")
}

func (s *shard) removeSyncExpiration(g *classicGroup) {
	clear(g.pendingSyncMembers)
	s.timer.Cancel(syncKey(g))
}

// removePendingSyncMember notes a member's SyncGroup, cancelling the sync
// expiration once every member synced.
func (s *shard) removePendingSyncMember(g *classicGroup, memberID string) {
	delete(g.pendingSyncMembers, memberID)
	switch g.state {
	case stateCompletingRebalance, stateStable:
		if len(g.pendingSyncMembers) == 0 {
			s.timer.Cancel(syncKey(g))
		}
	default:
		s.timer.Cancel(syncKey(g))
	}
}

// resetAndPropagateAssignmentWithError clears the assignments and answers
// every parked SyncGroup with code.
func (s *shard) resetAndPropagateAssignmentWithError(g *classicGroup, code int16) {
	for _, m := range g.members {
		m.assignment = []byte{}
	}
	s.propagateAssignment(g, code)
}

// setAndPropagateAssignment installs the leader's assignment (members it
// left out get an empty one) and answers every parked SyncGroup.
func (s *shard) setAndPropagateAssignment(g *classicGroup, assignment map[string][]byte) {
	for _, m := range g.members {
		m.assignment = assignment[m.id]
		if m.assignment == nil {
			m.assignment = []byte{}
		}
	}
	s.propagateAssignment(g, 0)
}

func (s *shard) propagateAssignment(g *classicGroup, code int16) {
	for _, m := range g.members {
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.ErrorCode = code
		resp.MemberAssignment = m.assignment
		if code == 0 {
			resp.ProtocolType = optString(g.protocolType)
			resp.Protocol = optString(g.protocolName)
		}
		if g.completeSync(m, resp) {
			// A session that expired while the member waited for the
			// leader or the append was ignored; start it again.
			s.rescheduleHeartbeat(g, m)
		}
	}
}

// rescheduleHeartbeat restarts a member's session timeout.
func (s *shard) rescheduleHeartbeat(g *classicGroup, m *member) {
	s.rescheduleHeartbeatAfter(g, m.id, ms(m.sessionTimeoutMs))
}

func (s *shard) rescheduleHeartbeatAfter(g *classicGroup, memberID string, d time.Duration) {
	id := g.id
	s.timer.Schedule(heartbeatKey(g, memberID), d, func() { s.expireHeartbeat(id, memberID) })
}

// expireHeartbeat handles a session timeout: a pending member is dropped,
// a member whose heartbeat is not satisfied by a parked request is
// removed and the group rebalances.
func (s *shard) expireHeartbeat(groupID, memberID string) {
	g := s.groups[groupID]
	if g == nil || g.is(stateDead) {
		return
	}
	if g.isPendingMember(memberID) {
		s.log.Info("pending member's session expired", "group", groupID, "member", memberID)
		g.remove(memberID)
		if g.is(statePreparingRebalance) && g.hasAllMembersJoined() {
			s.completeJoinPhase(g)
		}
		return
	}
	m := g.member(memberID)
	if m == nil || m.hasSatisfiedHeartbeat() {
		return
	}
	s.log.Info("member's session expired; removing it from the group", "group", groupID, "member", memberID)
	s.removeMemberAndUpdateGroup(g, m, "removing member "+memberID+" on heartbeat expiration")
}

// removeMemberAndUpdateGroup removes a member (answering a JoinGroup it
// has parked with UNKNOWN_MEMBER_ID, so a live client rejoins) and
// rebalances or completes the join phase.
func (s *shard) removeMemberAndUpdateGroup(g *classicGroup, m *member, reason string) {
	g.completeJoin(m, &kmsg.JoinGroupResponse{ErrorCode: unknownMemberID, Generation: -1, Members: []kmsg.JoinGroupResponseMember{}})
	g.remove(m.id)
	switch {
	case g.is(stateStable) || g.is(stateCompletingRebalance):
		s.maybePrepareRebalanceOrCompleteJoin(g, reason)
	case g.is(statePreparingRebalance) && g.hasAllMembersJoined():
		s.completeJoinPhase(g)
	}
}

// acceptJoiningMember enforces group.max.size: during a join phase the
// members already parked count; otherwise the group's size.
func (s *shard) acceptJoiningMember(g *classicGroup, memberID string) bool {
	max := int(s.c.cfg.MaxGroupSize)
	switch g.state {
	case stateEmpty, stateDead:
		return true
	case statePreparingRebalance:
		if m := g.member(memberID); m != nil && m.isAwaitingJoin() {
			return true
		}
		return g.numAwaitingJoin < max
	default:
		return g.hasMember(memberID) || len(g.members) < max
	}
}
