package coordinator

import "fmt"

// The consumer group records of __consumer_offsets (Kafka 4.x,
// GroupCoordinatorRecordHelpers): every change to a consumer group is one
// of these, built here and nowhere else, encoded by consumer_codec.go and
// replayed by replayConsumer, whether it was just decided or read back
// while loading.

// cgRecordType is the record type a consumer group record's key carries
// (CoordinatorRecordType).
type cgRecordType int16

const (
	// cgRecordClassicGroup is a classic group's GroupMetadata, used here
	// only as the tombstone that removes an empty classic group replaced
	// by a consumer group.
	cgRecordClassicGroup             cgRecordType = 2
	cgRecordGroupMetadata            cgRecordType = 3  // ConsumerGroupMetadata: group epoch, metadata hash
	cgRecordMemberMetadata           cgRecordType = 5  // ConsumerGroupMemberMetadata: a member's subscription
	cgRecordTargetAssignmentMetadata cgRecordType = 6  // ConsumerGroupTargetAssignmentMetadata: assignment epoch
	cgRecordTargetAssignmentMember   cgRecordType = 7  // ConsumerGroupTargetAssignmentMember: a member's target
	cgRecordCurrentAssignment        cgRecordType = 8  // ConsumerGroupCurrentMemberAssignment: a member's epochs and partitions
	cgRecordRegularExpression        cgRecordType = 16 // ConsumerGroupRegularExpression: a resolved regex
)

// cgRecord is one consumer group record. The key fields are group and, by
// type, member or regex; tombstone marks a null value; the value fields
// used depend on the type.
type cgRecord struct {
	typ       cgRecordType
	group     string
	member    string // MemberMetadata, TargetAssignmentMember, CurrentAssignment
	regex     string // RegularExpression
	tombstone bool

	epoch        int32          // GroupMetadata: group epoch; TargetAssignmentMetadata: assignment epoch
	metadataHash int64          // GroupMetadata
	subscription consumerMember // MemberMetadata: the metadata fields; CurrentAssignment: the assignment fields
	target       assignment     // TargetAssignmentMember
	resolved     resolvedRegex  // RegularExpression
}

func newConsumerGroupEpochRecord(group string, epoch int32, metadataHash int64) cgRecord {
	return cgRecord{typ: cgRecordGroupMetadata, group: group, epoch: epoch, metadataHash: metadataHash}
}

func newMemberSubscriptionRecord(group string, m consumerMember) cgRecord {
	return cgRecord{typ: cgRecordMemberMetadata, group: group, member: m.id, subscription: m}
}

func newTargetAssignmentRecord(group, member string, a assignment) cgRecord {
	return cgRecord{typ: cgRecordTargetAssignmentMember, group: group, member: member, target: a}
}

func newTargetAssignmentEpochRecord(group string, epoch int32) cgRecord {
	return cgRecord{typ: cgRecordTargetAssignmentMetadata, group: group, epoch: epoch}
}

func newCurrentAssignmentRecord(group string, m consumerMember) cgRecord {
	return cgRecord{typ: cgRecordCurrentAssignment, group: group, member: m.id, subscription: m}
}

func newRegexRecord(group, regex string, r resolvedRegex) cgRecord {
	return cgRecord{typ: cgRecordRegularExpression, group: group, regex: regex, resolved: r}
}

func cgTombstone(typ cgRecordType, group, member, regex string) cgRecord {
	return cgRecord{typ: typ, group: group, member: member, regex: regex, tombstone: true}
}

// memberTombstones remove a member: current assignment, target, then
// subscription (GroupMetadataManager.removeMember; replay checks this order).
func memberTombstones(group, member string) []cgRecord {
	return []cgRecord{
		cgTombstone(cgRecordCurrentAssignment, group, member, ""),
		cgTombstone(cgRecordTargetAssignmentMember, group, member, ""),
		cgTombstone(cgRecordMemberMetadata, group, member, ""),
	}
}

// groupTombstones delete a consumer group (ConsumerGroup.createGroupTombstoneRecords):
// its members, its regexes, its assignment epoch and its epoch.
func groupTombstones(g *consumerGroup) []cgRecord {
	var recs []cgRecord
	for _, id := range g.sortedMemberIDs() {
		recs = append(recs, memberTombstones(g.id, id)...)
	}
	for _, re := range sortedKeysOf(g.regexes) {
		recs = append(recs, cgTombstone(cgRecordRegularExpression, g.id, "", re))
	}
	return append(recs,
		cgTombstone(cgRecordTargetAssignmentMetadata, g.id, "", ""),
		cgTombstone(cgRecordGroupMetadata, g.id, "", ""))
}

func sortedKeysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

// replayConsumer applies one consumer group record to the shard
// (GroupMetadataManager.replay for the consumer group record types). A
// record that contradicts the state (a member's tombstone before its
// assignment's, a group deleted with members) is an error: the partition
// does not load, as Kafka's IllegalStateException stops its loader.
func (s *shard) replayConsumer(r cgRecord) error {
	if r.typ == cgRecordClassicGroup {
		s.removeGroup(r.group)
		s.holdOrphanedOffsets(r.group)
		return nil
	}
	g := s.consumerGroups[r.group]
	if r.tombstone {
		if g == nil {
			return nil // deleted already: tombstones may repeat after compaction
		}
		return replayConsumerTombstone(s, g, r)
	}
	if g == nil {
		switch r.typ {
		case cgRecordGroupMetadata, cgRecordMemberMetadata, cgRecordCurrentAssignment:
		default:
			return fmt.Errorf("consumer group %s: record type %d for a group that does not exist", r.group, r.typ)
		}
		if s.shareGroups[r.group] != nil {
			return fmt.Errorf("consumer group %s: a share group with that id exists", r.group)
		}
		if cg := s.groups[r.group]; cg != nil {
			if cg.protocolType != "" || len(cg.members) > 0 {
				return fmt.Errorf("consumer group %s: a classic group with that id exists", r.group)
			}
			// A simple group created to hold offsets is replaced
			// (getOrMaybeCreatePersistedConsumerGroup).
			s.removeGroup(r.group)
		}
		g = newConsumerGroup(r.group)
		if j := s.joiningGroup; j != nil && j.id == r.group && j.isEmpty() {
			g = j
		}
		s.consumerGroups[r.group] = g
	}
	switch r.typ {
	case cgRecordGroupMetadata:
		g.groupEpoch, g.metadataHash = r.epoch, r.metadataHash
	case cgRecordMemberMetadata:
		m := newConsumerMember(r.member)
		if old := g.member(r.member); old != nil {
			m = *old
		}
		v := r.subscription
		m.instanceID, m.rackID, m.clientID, m.clientHost = v.instanceID, v.rackID, v.clientID, v.clientHost
		m.subscribedTopicNames, m.subscribedTopicRegex = v.subscribedTopicNames, v.subscribedTopicRegex
		m.rebalanceTimeoutMs, m.serverAssignor = v.rebalanceTimeoutMs, v.serverAssignor
		g.updateMember(m)
	case cgRecordCurrentAssignment:
		m := newConsumerMember(r.member)
		if old := g.member(r.member); old != nil {
			m = *old
		}
		v := r.subscription
		m.state, m.memberEpoch, m.previousMemberEpoch = v.state, v.memberEpoch, v.previousMemberEpoch
		m.assigned, m.pendingRevocation, m.assignmentEpochs = v.assigned, v.pendingRevocation, v.assignmentEpochs
		g.updateMember(m)
	case cgRecordTargetAssignmentMetadata:
		g.assignmentEpoch = r.epoch
	case cgRecordTargetAssignmentMember:
		g.target[r.member] = r.target
	case cgRecordRegularExpression:
		g.regexes[r.regex] = r.resolved
	}
	return nil
}

func replayConsumerTombstone(s *shard, g *consumerGroup, r cgRecord) error {
	switch r.typ {
	case cgRecordGroupMetadata:
		if len(g.members) > 0 {
			return fmt.Errorf("consumer group %s: deleted while it has %d members", g.id, len(g.members))
		}
		s.removeConsumerGroup(g.id)
		s.holdOrphanedOffsets(g.id)
	case cgRecordMemberMetadata:
		m := g.member(r.member)
		if m == nil {
			return nil
		}
		if m.memberEpoch != leaveGroupMemberEpoch {
			return fmt.Errorf("consumer group %s: member %s removed before its assignment", g.id, r.member)
		}
		if _, ok := g.target[r.member]; ok {
			return fmt.Errorf("consumer group %s: member %s removed before its target assignment", g.id, r.member)
		}
		g.removeMember(r.member)
	case cgRecordCurrentAssignment:
		m := g.member(r.member)
		if m == nil {
			return nil
		}
		left := *m
		left.memberEpoch, left.previousMemberEpoch, left.state = leaveGroupMemberEpoch, leaveGroupMemberEpoch, memberStable
		left.assigned, left.pendingRevocation, left.assignmentEpochs = assignment{}, assignment{}, assignmentEpochs{}
		g.updateMember(left)
	case cgRecordTargetAssignmentMetadata:
		if len(g.members) > 0 {
			return fmt.Errorf("consumer group %s: assignment epoch deleted while it has %d members", g.id, len(g.members))
		}
		g.assignmentEpoch = -1
	case cgRecordTargetAssignmentMember:
		delete(g.target, r.member)
	case cgRecordRegularExpression:
		delete(g.regexes, r.regex)
	}
	return nil
}
