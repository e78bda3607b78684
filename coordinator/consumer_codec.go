package coordinator

import (
	"fmt"

	"github.com/strait-io/strait/coordinator/records"
)

// The consumer group records are written and read with package
// coordinator/records, byte for byte as Kafka 4.x writes them; this file
// converts between its values and cgRecord.

// encodeCGRecord encodes a consumer group record for the log.
func encodeCGRecord(r cgRecord) coordRecord {
	if r.typ == cgRecordClassicGroup {
		return newGroupMetadataTombstone(r.group)
	}
	k := records.Key{Type: records.RecordType(r.typ), GroupID: r.group, MemberID: r.member, RegularExpression: r.regex}
	key := k.AppendTo(nil)
	if r.tombstone {
		return coordRecord{key: key}
	}
	var v records.Value
	switch r.typ {
	case cgRecordGroupMetadata:
		gv := records.NewConsumerGroupMetadataValue()
		gv.Epoch, gv.MetadataHash = r.epoch, r.metadataHash
		v = &gv
	case cgRecordMemberMetadata:
		m := &r.subscription
		mv := records.NewConsumerGroupMemberMetadataValue()
		mv.InstanceID, mv.RackID = optString(m.instanceID), optString(m.rackID)
		mv.ClientID, mv.ClientHost = m.clientID, m.clientHost
		mv.SubscribedTopicNames = append([]string{}, m.subscribedTopicNames...)
		// Kafka's member has "" for no regex and writes it as such.
		mv.SubscribedTopicRegex = &m.subscribedTopicRegex
		mv.RebalanceTimeoutMs = m.rebalanceTimeoutMs
		mv.ServerAssignor = optString(m.serverAssignor)
		v = &mv
	case cgRecordTargetAssignmentMetadata:
		v = &records.ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: r.epoch}
	case cgRecordTargetAssignmentMember:
		tv := &records.ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: []records.TopicPartitions{}}
		for _, t := range r.target.sortedTopics() {
			tv.TopicPartitions = append(tv.TopicPartitions, records.TopicPartitions{TopicID: t, Partitions: r.target[t]})
		}
		v = tv
	case cgRecordCurrentAssignment:
		m := &r.subscription
		v = &records.ConsumerGroupCurrentMemberAssignmentValue{
			MemberEpoch:                 m.memberEpoch,
			PreviousMemberEpoch:         m.previousMemberEpoch,
			State:                       int8(m.state),
			AssignedPartitions:          assignedTopicPartitions(m.assigned, m.assignmentEpochs),
			PartitionsPendingRevocation: assignedTopicPartitions(m.pendingRevocation, m.assignmentEpochs),
		}
	case cgRecordRegularExpression:
		v = &records.ConsumerGroupRegularExpressionValue{
			Topics: append([]string{}, r.resolved.topics...), Version: r.resolved.version, Timestamp: r.resolved.timestamp,
		}
	}
	return coordRecord{key: key, value: v.AppendTo(nil)}
}

// assignedTopicPartitions is an assignment with each partition's
// assignment epoch (KIP-1251), as ConsumerGroupCurrentMemberAssignmentValue
// holds it.
func assignedTopicPartitions(a assignment, epochs assignmentEpochs) []records.AssignedTopicPartitions {
	out := []records.AssignedTopicPartitions{}
	for _, t := range a.sortedTopics() {
		tp := records.AssignedTopicPartitions{TopicID: t, Partitions: a[t], AssignmentEpochs: make([]int32, len(a[t]))}
		for i, p := range a[t] {
			tp.AssignmentEpochs[i] = epochs[t][p]
		}
		out = append(out, tp)
	}
	return out
}

// decodeCGRecord parses a consumer group record of type typ.
func decodeCGRecord(typ cgRecordType, key, value []byte, tombstone bool) (cgRecord, error) {
	rec := cgRecord{typ: typ}
	var k records.Key
	if err := k.ReadFrom(key); err != nil {
		return rec, fmt.Errorf("decoding consumer group record key: %w", err)
	}
	rec.group, rec.member, rec.regex = k.GroupID, k.MemberID, k.RegularExpression
	if tombstone {
		rec.tombstone = true
		return rec, nil
	}
	v, err := records.NewValue(k.Type)
	if err != nil {
		return rec, err
	}
	if err := v.ReadFrom(value); err != nil {
		return rec, fmt.Errorf("consumer group %s: %w", rec.group, err)
	}
	switch v := v.(type) {
	case *records.ConsumerGroupMetadataValue:
		rec.epoch, rec.metadataHash = v.Epoch, v.MetadataHash
	case *records.ConsumerGroupMemberMetadataValue:
		m := newConsumerMember(rec.member)
		m.instanceID, m.rackID = deref(v.InstanceID), deref(v.RackID)
		m.clientID, m.clientHost = v.ClientID, v.ClientHost
		m.subscribedTopicNames = sortedNames(v.SubscribedTopicNames)
		m.subscribedTopicRegex = deref(v.SubscribedTopicRegex)
		m.rebalanceTimeoutMs = v.RebalanceTimeoutMs
		m.serverAssignor = deref(v.ServerAssignor)
		rec.subscription = m
	case *records.ConsumerGroupTargetAssignmentMetadataValue:
		rec.epoch = v.AssignmentEpoch
	case *records.ConsumerGroupTargetAssignmentMemberValue:
		a := assignment{}
		for _, tp := range v.TopicPartitions {
			a[tp.TopicID] = append(a[tp.TopicID], tp.Partitions...)
		}
		rec.target = normalizeAssignment(a)
	case *records.ConsumerGroupCurrentMemberAssignmentValue:
		m := newConsumerMember(rec.member)
		m.memberEpoch, m.previousMemberEpoch = v.MemberEpoch, v.PreviousMemberEpoch
		m.state = memberStateFromByte(v.State)
		m.assignmentEpochs = assignmentEpochs{}
		m.assigned = readAssignedTopicPartitions(v.AssignedPartitions, m.memberEpoch, m.assignmentEpochs)
		m.pendingRevocation = readAssignedTopicPartitions(v.PartitionsPendingRevocation, m.memberEpoch, m.assignmentEpochs)
		rec.subscription = m
	case *records.ConsumerGroupRegularExpressionValue:
		rec.resolved = resolvedRegex{topics: sortedNames(v.Topics), version: v.Version, timestamp: v.Timestamp}
	default:
		// ConsumerGroupPartitionMetadata (4) is no longer written since
		// Kafka 4.1 (KIP-1101); decodeRecord does not send it here.
		return rec, fmt.Errorf("%w %d", errUnknownRecordType, typ)
	}
	return rec, nil
}

// readAssignedTopicPartitions reads an assignment and adds its partitions'
// assignment epochs to epochs. A record without them (written before
// KIP-1251) or with a count that does not match its partitions gives each
// partition the member epoch, at least 0, as Kafka's
// Utils.assignmentFromTopicPartitions.
func readAssignedTopicPartitions(tps []records.AssignedTopicPartitions, memberEpoch int32, epochs assignmentEpochs) assignment {
	a := assignment{}
	fallback := max(memberEpoch, 0)
	for _, tp := range tps {
		a[tp.TopicID] = append(a[tp.TopicID], tp.Partitions...)
		byP := epochs[tp.TopicID]
		if byP == nil {
			byP = map[int32]int32{}
			epochs[tp.TopicID] = byP
		}
		for i, p := range tp.Partitions {
			e := fallback
			if len(tp.AssignmentEpochs) == len(tp.Partitions) {
				e = tp.AssignmentEpochs[i]
			}
			byP[p] = e
		}
	}
	return normalizeAssignment(a)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
