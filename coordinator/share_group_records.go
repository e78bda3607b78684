package coordinator

import (
	"fmt"

	"github.com/strait-io/strait/coordinator/records"
	"github.com/strait-io/strait/raftmeta"
)

// The share group records of __consumer_offsets (KIP-932, Kafka 4.1+;
// GroupCoordinatorRecordHelpers.newShareGroup*): every change to a share
// group is one of these, built here, encoded with coordinator/records and
// replayed by replayShare whether just decided or read back while
// loading. Type 9 (ShareGroupPartitionMetadata, Kafka 4.0 only) is
// skipped as unknown, as Kafka 4.1's loader does.

// shareRecord is one share group record: the key fields (group and, for
// the member-keyed types, member), tombstone for a null value, and the
// value fields its type uses.
type shareRecord struct {
	typ       records.RecordType
	group     string
	member    string
	tombstone bool

	epoch        int32                // ShareGroupMetadata: group epoch; TargetAssignmentMetadata: assignment epoch
	metadataHash int64                // ShareGroupMetadata
	m            shareMember          // MemberMetadata: the subscription fields; CurrentMemberAssignment: the assignment fields
	target       assignment           // TargetAssignmentMember
	partitions   sharePartitionsState // StatePartitionMetadata
	// topicNames names the deleting topics of a StatePartitionMetadata
	// record (the record stores names; the state keeps ids).
	topicNames map[topicID]string
}

func newShareGroupEpochRecord(group string, epoch int32, hash int64) shareRecord {
	return shareRecord{typ: records.TypeShareGroupMetadata, group: group, epoch: epoch, metadataHash: hash}
}

func newShareMemberSubscriptionRecord(group string, m shareMember) shareRecord {
	return shareRecord{typ: records.TypeShareGroupMemberMetadata, group: group, member: m.id, m: m}
}

func newShareTargetAssignmentRecord(group, member string, a assignment) shareRecord {
	return shareRecord{typ: records.TypeShareGroupTargetAssignmentMember, group: group, member: member, target: a}
}

func newShareTargetAssignmentEpochRecord(group string, epoch int32) shareRecord {
	return shareRecord{typ: records.TypeShareGroupTargetAssignmentMetadata, group: group, epoch: epoch}
}

func newShareCurrentAssignmentRecord(group string, m shareMember) shareRecord {
	return shareRecord{typ: records.TypeShareGroupCurrentMemberAssignment, group: group, member: m.id, m: m}
}

// newSharePartitionsRecord is newShareGroupStatePartitionMetadataRecord;
// the deleting topics are named from the image, "<UNKNOWN>" when gone
// (GroupMetadataManager.attachTopicName).
func newSharePartitionsRecord(group string, p sharePartitionsState, img *raftmeta.Image) shareRecord {
	names := map[topicID]string{}
	for t := range p.deleting {
		names[t] = "<UNKNOWN>"
		if topic := img.TopicsByID[raftmeta.Uuid(t)]; topic != nil {
			names[t] = topic.Name
		}
	}
	return shareRecord{typ: records.TypeShareGroupStatePartitionMetadata, group: group, partitions: p, topicNames: names}
}

func shareTombstone(typ records.RecordType, group, member string) shareRecord {
	return shareRecord{typ: typ, group: group, member: member, tombstone: true}
}

// shareMemberTombstones remove a member: current assignment, target, then
// subscription (shareGroupFenceMember; replay checks this order).
func shareMemberTombstones(group, member string) []shareRecord {
	return []shareRecord{
		shareTombstone(records.TypeShareGroupCurrentMemberAssignment, group, member),
		shareTombstone(records.TypeShareGroupTargetAssignmentMember, group, member),
		shareTombstone(records.TypeShareGroupMemberMetadata, group, member),
	}
}

// shareGroupTombstones delete a share group (ShareGroup.createGroupTombstoneRecords):
// current assignments, targets, the assignment epoch, subscriptions, the
// state partition metadata and the epoch.
func shareGroupTombstones(g *shareGroup) []shareRecord {
	ids := g.sortedMemberIDs()
	var recs []shareRecord
	for _, id := range ids {
		recs = append(recs, shareTombstone(records.TypeShareGroupCurrentMemberAssignment, g.id, id))
	}
	for _, id := range ids {
		recs = append(recs, shareTombstone(records.TypeShareGroupTargetAssignmentMember, g.id, id))
	}
	recs = append(recs, shareTombstone(records.TypeShareGroupTargetAssignmentMetadata, g.id, ""))
	for _, id := range ids {
		recs = append(recs, shareTombstone(records.TypeShareGroupMemberMetadata, g.id, id))
	}
	return append(recs,
		shareTombstone(records.TypeShareGroupStatePartitionMetadata, g.id, ""),
		shareTombstone(records.TypeShareGroupMetadata, g.id, ""))
}

// isShareRecordType reports whether t is a share group record this
// coordinator reads (10-15).
func isShareRecordType(t records.RecordType) bool {
	return t >= records.TypeShareGroupMemberMetadata && t <= records.TypeShareGroupStatePartitionMetadata
}

// encode is the record's key and value bytes.
func (r shareRecord) encode() coordRecord {
	key := records.Key{Type: r.typ, GroupID: r.group, MemberID: r.member}
	out := coordRecord{key: key.AppendTo(nil)}
	if r.tombstone {
		return out
	}
	var v records.Value
	switch r.typ {
	case records.TypeShareGroupMetadata:
		v = &records.ShareGroupMetadataValue{Epoch: r.epoch, MetadataHash: r.metadataHash}
	case records.TypeShareGroupMemberMetadata:
		v = &records.ShareGroupMemberMetadataValue{
			RackID:               optString(r.m.rackID),
			ClientID:             r.m.clientID,
			ClientHost:           r.m.clientHost,
			SubscribedTopicNames: append([]string{}, r.m.subscribedTopicNames...),
		}
	case records.TypeShareGroupTargetAssignmentMetadata:
		v = &records.ShareGroupTargetAssignmentMetadataValue{AssignmentEpoch: r.epoch}
	case records.TypeShareGroupTargetAssignmentMember:
		v = &records.ShareGroupTargetAssignmentMemberValue{TopicPartitions: recordTopicPartitions(r.target)}
	case records.TypeShareGroupCurrentMemberAssignment:
		v = &records.ShareGroupCurrentMemberAssignmentValue{
			MemberEpoch:         r.m.memberEpoch,
			PreviousMemberEpoch: r.m.previousMemberEpoch,
			State:               int8(r.m.state),
			AssignedPartitions:  recordTopicPartitions(r.m.assigned),
		}
	case records.TypeShareGroupStatePartitionMetadata:
		pv := &records.ShareGroupStatePartitionMetadataValue{
			InitializingTopics: recordInitTopics(r.partitions.initializing),
			InitializedTopics:  recordInitTopics(r.partitions.initialized),
			DeletingTopics:     []records.TopicInfo{},
		}
		for _, t := range sortedTopicIDs(r.partitions.deleting) {
			pv.DeletingTopics = append(pv.DeletingTopics, records.TopicInfo{TopicID: t, TopicName: r.topicNames[t]})
		}
		v = pv
	default:
		panic(fmt.Sprintf("coordinator: share record of type %s", r.typ))
	}
	out.value = v.AppendTo(nil)
	return out
}

func recordTopicPartitions(a assignment) []records.TopicPartitions {
	out := make([]records.TopicPartitions, 0, len(a))
	for _, t := range a.sortedTopics() {
		out = append(out, records.TopicPartitions{TopicID: t, Partitions: append([]int32{}, a[t]...)})
	}
	return out
}

func recordInitTopics(m map[topicID]shareInitTopic) []records.TopicPartitionsInfo {
	out := make([]records.TopicPartitionsInfo, 0, len(m))
	for _, t := range sortedTopicIDs(m) {
		out = append(out, records.TopicPartitionsInfo{TopicID: t, TopicName: m[t].name, Partitions: append([]int32{}, m[t].partitions...)})
	}
	return out
}

func assignmentFromRecord(tps []records.TopicPartitions) assignment {
	a := assignment{}
	for _, tp := range tps {
		a[tp.TopicID] = append(a[tp.TopicID], tp.Partitions...)
	}
	return normalizeAssignment(a)
}

func initTopicsFromRecord(tps []records.TopicPartitionsInfo, nowMs int64) map[topicID]shareInitTopic {
	out := make(map[topicID]shareInitTopic, len(tps))
	for _, tp := range tps {
		old := out[tp.TopicID]
		out[tp.TopicID] = shareInitTopic{name: tp.TopicName, partitions: unionPartitions(old.partitions, tp.Partitions), timestampMs: nowMs}
	}
	return out
}

// decodeShareRecord parses a share group record (types 10-15); nowMs
// stamps the topics of a StatePartitionMetadata value, as Kafka's replay
// does.
func decodeShareRecord(key, value []byte, tombstone bool, nowMs int64) (shareRecord, error) {
	var k records.Key
	if err := k.ReadFrom(key); err != nil {
		return shareRecord{}, err
	}
	r := shareRecord{typ: k.Type, group: k.GroupID, member: k.MemberID, tombstone: tombstone}
	if tombstone {
		return r, nil
	}
	v, err := records.NewValue(k.Type)
	if err != nil {
		return r, err
	}
	if err := v.ReadFrom(value); err != nil {
		return r, fmt.Errorf("share group %s: %w", k.GroupID, err)
	}
	switch v := v.(type) {
	case *records.ShareGroupMetadataValue:
		r.epoch, r.metadataHash = v.Epoch, v.MetadataHash
	case *records.ShareGroupMemberMetadataValue:
		r.m = newShareMember(k.MemberID)
		if v.RackID != nil {
			r.m.rackID = *v.RackID
		}
		r.m.clientID, r.m.clientHost = v.ClientID, v.ClientHost
		r.m.subscribedTopicNames = sortedNames(v.SubscribedTopicNames)
	case *records.ShareGroupTargetAssignmentMetadataValue:
		r.epoch = v.AssignmentEpoch
	case *records.ShareGroupTargetAssignmentMemberValue:
		r.target = assignmentFromRecord(v.TopicPartitions)
	case *records.ShareGroupCurrentMemberAssignmentValue:
		r.m = newShareMember(k.MemberID)
		r.m.memberEpoch, r.m.previousMemberEpoch = v.MemberEpoch, v.PreviousMemberEpoch
		r.m.state = memberStateFromByte(v.State)
		r.m.assigned = assignmentFromRecord(v.AssignedPartitions)
	case *records.ShareGroupStatePartitionMetadataValue:
		r.partitions = newSharePartitionsState()
		r.partitions.initializing = initTopicsFromRecord(v.InitializingTopics, nowMs)
		r.partitions.initialized = initTopicsFromRecord(v.InitializedTopics, nowMs)
		r.topicNames = map[topicID]string{}
		for _, t := range v.DeletingTopics {
			r.partitions.deleting[t.TopicID] = true
			r.topicNames[t.TopicID] = t.TopicName
		}
	default:
		return r, fmt.Errorf("%w %d: not a share group record", errUnknownRecordType, k.Type)
	}
	return r, nil
}

// replayShare applies one share group record to the shard
// (GroupMetadataManager.replay for the share group record types). A
// record contradicting the state is an error that stops the load, as
// Kafka's IllegalStateException does.
func (s *shard) replayShare(r shareRecord) error {
	g := s.shareGroups[r.group]
	if g == nil {
		if r.tombstone {
			return nil // deleted already: tombstones may repeat after compaction
		}
		if s.groups[r.group] != nil || s.consumerGroups[r.group] != nil {
			return fmt.Errorf("share group %s: a group of another type has that id", r.group)
		}
		g = newShareGroup(r.group)
		s.shareGroups[r.group] = g
	}
	if r.tombstone {
		return replayShareTombstone(s, g, r)
	}
	switch r.typ {
	case records.TypeShareGroupMetadata:
		g.groupEpoch, g.metadataHash = r.epoch, r.metadataHash
	case records.TypeShareGroupMemberMetadata:
		m := g.memberOrNew(r.member)
		m.rackID, m.clientID, m.clientHost, m.subscribedTopicNames = r.m.rackID, r.m.clientID, r.m.clientHost, r.m.subscribedTopicNames
		g.members[r.member] = &m
	case records.TypeShareGroupTargetAssignmentMetadata:
		g.assignmentEpoch = r.epoch
	case records.TypeShareGroupTargetAssignmentMember:
		g.target[r.member] = r.target
	case records.TypeShareGroupCurrentMemberAssignment:
		m := g.memberOrNew(r.member)
		m.state, m.memberEpoch, m.previousMemberEpoch, m.assigned = r.m.state, r.m.memberEpoch, r.m.previousMemberEpoch, r.m.assigned
		g.members[r.member] = &m
	case records.TypeShareGroupStatePartitionMetadata:
		g.partitions = r.partitions.clone()
		g.partitions.exists = true
	}
	return nil
}

func replayShareTombstone(s *shard, g *shareGroup, r shareRecord) error {
	switch r.typ {
	case records.TypeShareGroupMetadata:
		switch {
		case len(g.members) > 0:
			return fmt.Errorf("share group %s: deleted while it has %d members", g.id, len(g.members))
		case len(g.target) > 0:
			return fmt.Errorf("share group %s: deleted while its target assignment has %d members", g.id, len(g.target))
		case g.assignmentEpoch != -1:
			return fmt.Errorf("share group %s: deleted before its target assignment epoch", g.id)
		}
		s.removeShareGroup(g.id)
	case records.TypeShareGroupMemberMetadata:
		m := g.members[r.member]
		switch {
		case m == nil:
		case m.memberEpoch != leaveGroupMemberEpoch:
			return fmt.Errorf("share group %s: member %s removed before its assignment", g.id, r.member)
		case hasKey(g.target, r.member):
			return fmt.Errorf("share group %s: member %s removed before its target assignment", g.id, r.member)
		default:
			delete(g.members, r.member)
		}
	case records.TypeShareGroupTargetAssignmentMetadata:
		if len(g.target) > 0 {
			return fmt.Errorf("share group %s: target assignment epoch deleted while %d members have targets", g.id, len(g.target))
		}
		g.assignmentEpoch = -1
	case records.TypeShareGroupTargetAssignmentMember:
		delete(g.target, r.member)
	case records.TypeShareGroupCurrentMemberAssignment:
		if m := g.members[r.member]; m != nil {
			left := *m
			left.memberEpoch, left.previousMemberEpoch, left.assigned = leaveGroupMemberEpoch, leaveGroupMemberEpoch, assignment{}
			g.members[r.member] = &left
		}
	case records.TypeShareGroupStatePartitionMetadata:
		g.partitions = newSharePartitionsState()
	}
	return nil
}

// removeShareGroup drops a share group and its members' timers.
func (s *shard) removeShareGroup(id string) {
	if g := s.shareGroups[id]; g != nil {
		for mid := range g.members {
			s.timer.Cancel(shareSessionKey(id, mid))
		}
		delete(s.shareGroups, id)
	}
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}
