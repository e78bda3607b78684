package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/runtime"
)

// consumerGroupLeave handles member epochs -1 and -2
// (GroupMetadataManager.consumerGroupLeave). Called with mu held.
func (s *shard) consumerGroupLeave(req *kmsg.ConsumerGroupHeartbeatRequest) (*kmsg.ConsumerGroupHeartbeatResponse, []cgRecord, *cgError) {
	g, e := s.consumerGroup(req.Group)
	if e != nil {
		return nil, nil, e
	}
	resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	resp.MemberID = kmsg.StringPtr(req.MemberID)
	resp.MemberEpoch = req.MemberEpoch
	var m *consumerMember
	if req.InstanceID == nil {
		if m = g.member(req.MemberID); m == nil {
			return nil, nil, cgErrorf(unknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.id)
		}
		s.log.Info("consumer group member left", "group", g.id, "member", m.id)
		return resp, s.fenceConsumerMember(g, m), nil
	}
	instanceID := *req.InstanceID
	if m = g.staticMember(instanceID); m == nil {
		return nil, nil, cgErrorf(unknownMemberID, "Instance id %s is unknown.", instanceID)
	}
	if m.id != req.MemberID {
		return nil, nil, cgErrorf(fencedInstanceID, "Static member %s with instance id %s was fenced by member %s.",
			req.MemberID, instanceID, m.id)
	}
	if req.MemberEpoch == leaveGroupStaticMemberEpoch {
		// The static member restarts: it keeps its assignment (its
		// partitions stay reserved) until it rejoins or its session
		// expires (consumerGroupStaticMemberGroupLeave).
		s.log.Info("static consumer group member left temporarily", "group", g.id, "member", m.id, "instance_id", instanceID)
		left := *m
		left.memberEpoch = leaveGroupStaticMemberEpoch
		left.pendingRevocation = assignment{}
		left = left.withAssignmentEpochs(m.assignmentEpochs)
		s.timer.Cancel(consumerRebalanceKey(g.id, m.id))
		return resp, []cgRecord{newCurrentAssignmentRecord(g.id, left)}, nil
	}
	s.log.Info("static consumer group member left", "group", g.id, "member", m.id, "instance_id", instanceID)
	return resp, s.fenceConsumerMember(g, m), nil
}

// consumerGroup returns an existing consumer group (GroupMetadataManager.consumerGroup).
func (s *shard) consumerGroup(id string) (*consumerGroup, *cgError) {
	if g := s.consumerGroups[id]; g != nil {
		return g, nil
	}
	if s.groups[id] != nil || s.shareGroups[id] != nil {
		return nil, cgErrorf(groupIDNotFound, "Group %s is not a consumer group.", id)
	}
	return nil, cgErrorf(groupIDNotFound, "Consumer group %s not found.", id)
}

// fenceConsumerMember removes a member and bumps the group epoch, so the
// others get its partitions (consumerGroupFenceMember). It returns the
// records; its timers are cancelled. Called with mu held.
func (s *shard) fenceConsumerMember(g *consumerGroup, m *consumerMember) []cgRecord {
	recs := memberTombstones(g.id, m.id)
	regexes := g.regexes
	if re := m.subscribedTopicRegex; re != "" && g.numRegexSubscribers(re) == 1 {
		recs = append(recs, cgTombstone(cgRecordRegularExpression, g.id, "", re))
		regexes = withoutRegex(regexes, re)
	}
	img := s.c.image()
	hash := metadataHash(img, g.subscribedTopicNamesWith([]string{m.id}, nil, regexes))
	recs = append(recs, newConsumerGroupEpochRecord(g.id, g.groupEpoch+1, hash))
	g.noteMetadataRefresh(img, g.groupEpoch+1)
	s.cancelConsumerTimers(g.id, m.id)
	return recs
}

func withoutRegex(regexes map[string]resolvedRegex, re string) map[string]resolvedRegex {
	out := make(map[string]resolvedRegex, len(regexes))
	for k, v := range regexes {
		if k != re {
			out[k] = v
		}
	}
	return out
}

func consumerSessionKey(group, member string) timerKey {
	return timerKey{kind: timerConsumerSession, group: group, member: member}
}

func consumerRebalanceKey(group, member string) timerKey {
	return timerKey{kind: timerConsumerRebalance, group: group, member: member}
}

func (s *shard) cancelConsumerTimers(group, member string) {
	s.timer.Cancel(consumerSessionKey(group, member))
	s.timer.Cancel(consumerRebalanceKey(group, member))
}

// scheduleConsumerSession (re)starts a member's session timeout: a member
// that does not heartbeat within its group's consumer.session.timeout.ms
// (else group.consumer.session.timeout.ms) is fenced.
func (s *shard) scheduleConsumerSession(group, member string) {
	s.scheduleConsumerSessionAfter(group, member, s.c.consumerSessionTimeout(group))
}

func (s *shard) scheduleConsumerSessionAfter(group, member string, d time.Duration) {
	s.timer.Schedule(consumerSessionKey(group, member), d, func() {
		g := s.consumerGroups[group]
		if g == nil || g.member(member) == nil {
			return
		}
		s.log.Info("consumer group member's session expired; fencing it", "group", group, "member", member)
		s.writeConsumerRecords(s.fenceConsumerMember(g, g.member(member)), false)
	})
}

// scheduleConsumerRebalance gives a member that must revoke partitions its
// rebalance timeout to do it and move past epoch; one still at epoch then
// is fenced (scheduleConsumerGroupRebalanceTimeout).
func (s *shard) scheduleConsumerRebalance(group, member string, epoch, timeoutMs int32) {
	s.timer.Schedule(consumerRebalanceKey(group, member), ms(timeoutMs), func() {
		g := s.consumerGroups[group]
		if g == nil || g.member(member) == nil || g.member(member).memberEpoch != epoch {
			return
		}
		s.log.Info("consumer group member did not revoke its partitions within its rebalance timeout; fencing it",
			"group", group, "member", member, "epoch", epoch, "rebalance_timeout_ms", timeoutMs)
		s.writeConsumerRecords(s.fenceConsumerMember(g, g.member(member)), false)
	})
}

// onConsumerGroupsLoaded starts the loaded members' session timeouts, and
// the rebalance timeouts of those revoking partitions (GroupMetadataManager.onLoaded).
func (s *shard) onConsumerGroupsLoaded() {
	for _, id := range sortedKeysOf(s.consumerGroups) {
		g := s.consumerGroups[id]
		for _, mid := range g.sortedMemberIDs() {
			m := g.member(mid)
			s.scheduleConsumerSession(id, mid)
			if m.state == memberUnrevokedPartitions {
				s.scheduleConsumerRebalance(id, mid, m.memberEpoch, m.rebalanceTimeoutMs)
			}
		}
	}
}

// writeConsumerRecords replays decided records into memory and queues
// them for the log (eager: a failed append reloads the shard). With wait
// it returns the channel the append's outcome arrives on. A record the
// state refuses is a bug: the shard reloads from the log rather than serve
// a state it cannot write. Called with mu held.
func (s *shard) writeConsumerRecords(recs []cgRecord, wait bool) <-chan error {
	out := make([]coordRecord, 0, len(recs))
	for _, r := range recs {
		if err := s.replayConsumer(r); err != nil {
			s.log.Error("a consumer group record contradicts the group state; reloading the partition", "group", r.group, "err", err)
			s.writeDiverged(err)
			done := make(chan error, 1)
			done <- runtime.ErrUnloaded
			return done
		}
		out = append(out, encodeCGRecord(r))
	}
	if wait {
		return s.appendAndWait(out, true)
	}
	s.append(out, true, func(err error) {
		if err != nil {
			s.log.Warn("writing consumer group records failed", "err", err)
		}
	})
	return nil
}
