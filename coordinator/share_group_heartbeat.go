package coordinator

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// ShareGroupHeartbeat: v1 (KIP-932; v0 was Kafka 4.0's early access,
// which 4.1 removed)
//
// Behavior (GroupCoordinatorService.shareGroupHeartbeat,
// GroupMetadataManager.shareGroupHeartbeat):
//   - Member epoch 0 joins, -1 leaves; any other epoch heartbeats and must
//     be the member's epoch, or its previous one (the response with the
//     new epoch was lost): FENCED_MEMBER_EPOCH otherwise. The member id is
//     the client's (an empty one is INVALID_REQUEST).
//   - A change of subscription, of the subscribed topics' metadata or of
//     the partitions whose share state is initialized bumps the group
//     epoch; the heartbeat then computes the target assignment with the
//     simple assignor over the initialized partitions only.
//   - There is no revocation: a member moves to its target assignment at
//     once (ShareGroupAssignmentBuilder); a partition may be shared by
//     several members.
//   - The records are written with acks=all before the answer. The
//     subscribed partitions whose share state is not initialized are
//     written as initializing, and once the answer is written the share
//     coordinator is asked to initialize them (start offset -1: the share
//     partition starts where share.auto.offset.reset says when it is first
//     fetched); when it has, they are written as initialized and the next
//     heartbeat assigns them.
//   - A group id of another type answers GROUP_ID_NOT_FOUND ("Group %s is
//     not a share group."): groups never change between share and the
//     other protocols.
func (c *GroupCoordinator) ShareGroupHeartbeat(ctx context.Context, req *kmsg.ShareGroupHeartbeatRequest) *kmsg.ShareGroupHeartbeatResponse {
	fail := func(e *cgError) *kmsg.ShareGroupHeartbeatResponse {
		resp := kmsg.NewPtrShareGroupHeartbeatResponse()
		resp.Version = req.Version
		resp.ErrorCode = e.code
		if e.msg != "" {
			resp.ErrorMessage = kmsg.StringPtr(e.msg)
		}
		return resp
	}
	if c.cfg.Share.Persister == nil {
		return fail(&cgError{code: unsupportedVersion})
	}
	if e := validateShareHeartbeat(req); e != nil {
		return fail(e)
	}
	info := reqctx.From(ctx)
	s, code := c.lockShard(req.GroupID)
	if code != 0 {
		return fail(&cgError{code: code})
	}
	resp, recs, init, e := s.shareGroupHeartbeat(req, info.ClientID, info.ClientHost)
	if e != nil {
		s.mu.Unlock()
		return fail(e)
	}
	var done <-chan error
	if len(recs) > 0 {
		done = s.writeShareRecords(recs, true)
	}
	s.mu.Unlock()
	if done != nil {
		if code := appendErrorCode(awaitAppend(ctx, done)); code != 0 {
			return fail(&cgError{code: code})
		}
	}
	if init != nil {
		// As Kafka's, after the answer's records are written and apart
		// from the heartbeat: the share coordinator may be slow.
		go s.initializeShareState(*init)
	}
	resp.Version = req.Version
	return resp
}

// validateShareHeartbeat is GroupCoordinatorService.throwIfShareGroupHeartbeatRequestIsInvalid.
func validateShareHeartbeat(req *kmsg.ShareGroupHeartbeatRequest) *cgError {
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	invalid := func(msg string) *cgError { return &cgError{code: invalidRequest, msg: msg} }
	switch {
	case blank(req.MemberID):
		return invalid("MemberId can't be empty.")
	case blank(req.GroupID):
		return invalid("GroupId can't be empty.")
	case req.RackID != nil && blank(*req.RackID):
		return invalid("RackId can't be empty.")
	case req.MemberEpoch == joinGroupMemberEpoch && len(req.SubscribedTopicNames) == 0:
		return invalid("SubscribedTopicNames must be set in first request.")
	case req.MemberEpoch < leaveGroupMemberEpoch:
		return invalid("MemberEpoch is invalid.")
	}
	return nil
}

// shareGroupHeartbeat decides a heartbeat: the response, the records that
// carry it out (not yet replayed), the share state to initialize once
// they are written, or the error to answer. Called with mu held.
func (s *shard) shareGroupHeartbeat(req *kmsg.ShareGroupHeartbeatRequest, clientID, clientHost string) (*kmsg.ShareGroupHeartbeatResponse, []shareRecord, *shareInit, *cgError) {
	if req.MemberEpoch == leaveGroupMemberEpoch {
		resp, recs, e := s.shareGroupLeave(req)
		return resp, recs, nil, e
	}
	img := s.c.image()
	joining := req.MemberEpoch == joinGroupMemberEpoch
	g, e := s.getOrMaybeCreateShareGroup(req.GroupID, joining)
	if e != nil {
		return nil, nil, nil, e
	}
	if max := s.c.cfg.Share.MaxGroupSize; len(g.members) >= int(max) && g.members[req.MemberID] == nil {
		return nil, nil, nil, cgErrorf(groupMaxSizeReached, "The share group has reached its maximum capacity of %d members.", max)
	}
	member, e := shareMemberFor(g, req.MemberID, req.MemberEpoch, joining)
	if e != nil {
		return nil, nil, nil, e
	}
	if joining {
		s.log.Info("member joins the share group", "group", g.id, "member", member.id)
	}
	var recs []shareRecord

	// 1. Update the member; a changed subscription, or initialized
	// partitions the target does not hold yet, bump the group epoch.
	updated := member
	if req.RackID != nil {
		updated.rackID = *req.RackID
	}
	if req.SubscribedTopicNames != nil {
		updated.subscribedTopicNames = sortedNames(req.SubscribedTopicNames)
	}
	updated.clientID, updated.clientHost = clientID, clientHost
	bump := false
	if g.members[updated.id] == nil || !updated.sameSubscription(&member) {
		recs = append(recs, newShareMemberSubscriptionRecord(g.id, updated))
		bump = !slices.Equal(updated.subscribedTopicNames, member.subscribedTopicNames)
	}
	bump = bump || s.initializedAssignmentPending(g)

	groupEpoch := g.groupEpoch
	subscribed := g.subscribedTopicNames(&member, &updated)
	if bump || g.refresh.expired(img, groupEpoch) {
		hash := metadataHash(img, topicSet(subscribed))
		if hash != g.metadataHash {
			bump = true
		}
		if bump {
			groupEpoch++
			recs = append(recs, newShareGroupEpochRecord(g.id, groupEpoch, hash))
			s.log.Info("bumped share group epoch", "group", g.id, "epoch", groupEpoch, "member", updated.id)
		}
		g.refresh.note(img, groupEpoch)
	}

	// 2. Compute the target assignment if the group epoch moved past it.
	targetEpoch, target := g.assignmentEpoch, g.target[updated.id]
	if groupEpoch > g.assignmentEpoch {
		numMembers := len(g.members)
		if g.members[updated.id] == nil {
			numMembers++
		}
		target, e = s.updateShareTargetAssignment(g, groupEpoch, &updated, shareSubscriptionType(subscribed, numMembers), img, &recs)
		if e != nil {
			return nil, nil, nil, e
		}
		targetEpoch = groupEpoch
	}

	// 3. Move the member to its target: no revocation in share groups.
	next := reconcileShareMember(updated, targetEpoch, target, bump, img)
	if !next.sameAssignmentState(&updated) {
		recs = append(recs, newShareCurrentAssignmentRecord(g.id, next))
		s.log.Debug("share group member's new assignment", "group", g.id, "member", next.id,
			"epoch", next.memberEpoch, "previous_epoch", next.previousMemberEpoch, "assigned", next.assigned.count())
	}
	s.scheduleShareSession(g.id, next.id)

	resp := kmsg.NewPtrShareGroupHeartbeatResponse()
	resp.MemberID = kmsg.StringPtr(next.id)
	resp.MemberEpoch = next.memberEpoch
	resp.HeartbeatIntervalMillis = int32(s.c.shareHeartbeatInterval(g.id).Milliseconds())
	// The assignment goes out on a join, a full request (one with the
	// subscription) or a change (Kafka's isFullRequest).
	if joining || req.SubscribedTopicNames != nil || !equalAssignments(member.assigned, next.assigned) {
		resp.Assignment = shareResponseAssignment(next.assigned)
	}
	init := s.maybeInitializeShareState(g, groupEpoch, subscribed, img, &recs)
	return resp, recs, init, nil
}

func shareResponseAssignment(a assignment) *kmsg.ShareGroupHeartbeatResponseAssignment {
	out := &kmsg.ShareGroupHeartbeatResponseAssignment{TopicPartitions: []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{}}
	for _, t := range a.sortedTopics() {
		tp := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
		tp.TopicID = t
		tp.Partitions = append([]int32{}, a[t]...)
		out.TopicPartitions = append(out.TopicPartitions, tp)
	}
	return out
}

// getOrMaybeCreateShareGroup returns the share group, or a new one (not
// yet in the shard: replaying the records adds it) when joining
// (GroupMetadataManager.getOrMaybeCreateShareGroup).
func (s *shard) getOrMaybeCreateShareGroup(id string, create bool) (*shareGroup, *cgError) {
	if g := s.shareGroups[id]; g != nil {
		return g, nil
	}
	if s.groups[id] != nil || s.consumerGroups[id] != nil {
		return nil, cgErrorf(groupIDNotFound, "Group %s is not a share group.", id)
	}
	if !create {
		return nil, cgErrorf(groupIDNotFound, "Share group %s not found.", id)
	}
	return newShareGroup(id), nil
}

// shareGroup returns an existing share group (GroupMetadataManager.shareGroup).
func (s *shard) shareGroup(id string) (*shareGroup, *cgError) {
	return s.getOrMaybeCreateShareGroup(id, false)
}

// shareMemberFor is getOrMaybeSubscribeShareGroupMember with
// throwIfShareGroupMemberEpochIsInvalid: unlike a consumer group's, the
// epoch is checked on a join too, so a member rejoining with epoch 0 is
// fenced unless 0 was its previous epoch (its join's answer was lost).
func shareMemberFor(g *shareGroup, memberID string, epoch int32, create bool) (shareMember, *cgError) {
	m := g.memberOrNew(memberID)
	if g.members[memberID] == nil && !create {
		return m, cgErrorf(unknownMemberID, "Member %s is not a member of group %s.", memberID, g.id)
	}
	switch {
	case epoch > m.memberEpoch:
		return m, cgErrorf(fencedMemberEpoch, "The share group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.",
			epoch, m.memberEpoch)
	case epoch < m.memberEpoch && epoch != m.previousMemberEpoch:
		return m, cgErrorf(fencedMemberEpoch, "The share group member has a smaller member epoch (%d) than the one known by the group coordinator (%d), and it does not match the previous member epoch (%d). The member must abandon all its partitions and rejoin.",
			epoch, m.memberEpoch, m.previousMemberEpoch)
	}
	return m, nil
}

// shareGroupLeave handles member epoch -1 (GroupMetadataManager.shareGroupLeave).
func (s *shard) shareGroupLeave(req *kmsg.ShareGroupHeartbeatRequest) (*kmsg.ShareGroupHeartbeatResponse, []shareRecord, *cgError) {
	g, e := s.shareGroup(req.GroupID)
	if e != nil {
		return nil, nil, e
	}
	m := g.members[req.MemberID]
	if m == nil {
		return nil, nil, cgErrorf(unknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.id)
	}
	s.log.Info("member left the share group", "group", g.id, "member", m.id)
	resp := kmsg.NewPtrShareGroupHeartbeatResponse()
	resp.MemberID = kmsg.StringPtr(req.MemberID)
	resp.MemberEpoch = req.MemberEpoch
	return resp, s.fenceShareMember(g, m), nil
}

// fenceShareMember removes a member and bumps the group epoch so the
// others get its partitions at their next heartbeat
// (shareGroupFenceMember). Called with mu held.
func (s *shard) fenceShareMember(g *shareGroup, m *shareMember) []shareRecord {
	recs := shareMemberTombstones(g.id, m.id)
	img := s.c.image()
	hash := metadataHash(img, topicSet(g.subscribedTopicNames(m, nil)))
	recs = append(recs, newShareGroupEpochRecord(g.id, g.groupEpoch+1, hash))
	s.timer.Cancel(shareSessionKey(g.id, m.id))
	return recs
}

func shareSessionKey(group, member string) timerKey {
	return timerKey{kind: timerShareSession, group: group, member: member}
}

// scheduleShareSession (re)starts a member's session timeout: a member
// that does not heartbeat within its group's share.session.timeout.ms
// (else group.share.session.timeout.ms) is fenced
// (scheduleShareGroupSessionTimeout).
func (s *shard) scheduleShareSession(group, member string) {
	s.timer.Schedule(shareSessionKey(group, member), s.c.shareSessionTimeout(group), func() {
		g := s.shareGroups[group]
		if g == nil || g.members[member] == nil {
			return
		}
		s.log.Info("share group member's session expired; fencing it", "group", group, "member", member)
		s.writeShareRecords(s.fenceShareMember(g, g.members[member]), false)
	})
}

// onShareGroupsLoaded starts every loaded member's session timeout
// (GroupMetadataManager.onLoaded).
func (s *shard) onShareGroupsLoaded() {
	for _, id := range sortedKeysOf(s.shareGroups) {
		g := s.shareGroups[id]
		s.log.Info("loaded share group", "group", id, "members", len(g.members))
		for _, mid := range g.sortedMemberIDs() {
			s.scheduleShareSession(id, mid)
		}
	}
}

// writeShareRecords replays decided records into memory and queues them
// for the log, as writeConsumerRecords does for consumer groups: with
// wait it returns the channel the append's outcome arrives on. Called
// with mu held.
func (s *shard) writeShareRecords(recs []shareRecord, wait bool) <-chan error {
	out := make([]coordRecord, 0, len(recs))
	for _, r := range recs {
		if err := s.replayShare(r); err != nil {
			s.log.Error("a share group record contradicts the group state; reloading the partition", "group", r.group, "err", err)
			s.writeDiverged(err)
			done := make(chan error, 1)
			done <- runtime.ErrUnloaded
			return done
		}
		out = append(out, r.encode())
	}
	if wait {
		return s.appendAndWait(out, true)
	}
	s.append(out, true, func(err error) {
		if err != nil {
			s.log.Warn("writing share group records failed", "err", err)
		}
	})
	return nil
}
