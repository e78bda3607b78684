package coordinator

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/records"
	"github.com/strait-io/strait/coordinator/runtime"
)

// Record key and value versions, as Kafka 4.x writes them
// (GroupCoordinatorRecordHelpers, MetadataVersion.offsetCommitValueVersion
// and groupMetadataValueVersion): keys carry their schema version as a
// record type, 0/1 for offset commits and 2 for group metadata; values are
// written at the highest non-flexible version, 3, except an offset commit
// with an explicit expire timestamp (OffsetCommit v2-v4 retention), which
// only value version 1 can hold.
const (
	offsetCommitKeyVersion        int16 = 1
	groupMetadataKeyVersion       int16 = 2
	offsetCommitValueVersion      int16 = 3
	offsetCommitValueVersionExpre int16 = 1
	groupMetadataValueVersion     int16 = 3
)

// coordRecord is one record for __consumer_offsets: an encoded key and an
// encoded value, or a nil value for a tombstone.
type coordRecord struct {
	key   []byte
	value []byte // nil: tombstone
}

func offsetCommitKey(group, topic string, partition int32) []byte {
	k := kmsg.NewOffsetCommitKey()
	k.Version = offsetCommitKeyVersion
	k.Group, k.Topic, k.Partition = group, topic, partition
	return k.AppendTo(nil)
}

// newOffsetCommitRecord is GroupCoordinatorRecordHelpers.newOffsetCommitRecord.
func newOffsetCommitRecord(group, topic string, partition int32, om offsetAndMetadata) coordRecord {
	v := kmsg.NewOffsetCommitValue()
	v.Version = offsetCommitValueVersion
	if om.expireTimestamp >= 0 {
		v.Version = offsetCommitValueVersionExpre
	}
	v.Offset = om.offset
	v.LeaderEpoch = om.leaderEpoch
	v.Metadata = om.metadata
	v.CommitTimestamp = om.commitTimestamp
	v.ExpireTimestamp = om.expireTimestamp
	return coordRecord{key: offsetCommitKey(group, topic, partition), value: v.AppendTo(nil)}
}

func newOffsetCommitTombstone(group, topic string, partition int32) coordRecord {
	return coordRecord{key: offsetCommitKey(group, topic, partition)}
}

func groupMetadataKey(group string) []byte {
	k := kmsg.NewGroupMetadataKey()
	k.Version = groupMetadataKeyVersion
	k.Group = group
	return k.AppendTo(nil)
}

// newGroupMetadataRecord is GroupCoordinatorRecordHelpers.newGroupMetadataRecord:
// the group's generation with each member's subscription (its metadata for
// the selected protocol) and the given assignment.
func newGroupMetadataRecord(g *classicGroup, assignment map[string][]byte) coordRecord {
	v := kmsg.NewGroupMetadataValue()
	v.Version = groupMetadataValueVersion
	v.ProtocolType = g.protocolType
	v.Generation = g.generationID
	if g.protocolName != "" {
		v.Protocol = kmsg.StringPtr(g.protocolName)
	}
	if g.leaderID != "" {
		v.Leader = kmsg.StringPtr(g.leaderID)
	}
	v.CurrentStateTimestamp = g.currentStateTimestamp
	for _, m := range g.members {
		mm := kmsg.NewGroupMetadataValueMember()
		mm.MemberID = m.id
		mm.InstanceID = m.instanceID
		mm.ClientID = m.clientID
		mm.ClientHost = m.clientHost
		mm.RebalanceTimeoutMillis = m.rebalanceTimeoutMs
		mm.SessionTimeoutMillis = m.sessionTimeoutMs
		mm.Subscription = m.metadata(g.protocolName)
		mm.Assignment = assignment[m.id]
		if mm.Assignment == nil {
			mm.Assignment = []byte{}
		}
		v.Members = append(v.Members, mm)
	}
	return coordRecord{key: groupMetadataKey(g.id), value: v.AppendTo(nil)}
}

func newGroupMetadataTombstone(group string) coordRecord {
	return coordRecord{key: groupMetadataKey(group)}
}

// buildBatch encodes the group coordinator's records as one batch
// (runtime.BuildBatch).
func buildBatch(recs []coordRecord, nowMs int64) ([]byte, error) {
	return runtime.BuildBatch(runtimeRecords(recs), nowMs)
}

// KeyValue is one record of a coordinator's internal topic; a nil Value
// is a tombstone. It is runtime.Record, named here for the __mirror_state
// coordinator, which builds its batches with BuildBatch.
type KeyValue = runtime.Record

// BuildBatch encodes records of a coordinator's internal topic
// (__consumer_offsets, __mirror_state) as one uncompressed batch without
// a producer: runtime.BuildBatch.
func BuildBatch(recs []KeyValue, nowMs int64) ([]byte, error) { return runtime.BuildBatch(recs, nowMs) }

// decodedRecord is a __consumer_offsets record read back: exactly one of
// offsetKey and groupKey is set; a nil value (the *Value pointer) is a
// tombstone.
type decodedRecord struct {
	offsetKey   *kmsg.OffsetCommitKey
	offsetValue *kmsg.OffsetCommitValue
	groupKey    *kmsg.GroupMetadataKey
	groupValue  *kmsg.GroupMetadataValue
	// consumer is a KIP-848 consumer group record.
	consumer *cgRecord
	// share is a KIP-932 share group record.
	share *shareRecord
}

// errUnknownRecordType marks a key version this coordinator does not read
// (the share and streams group records, and the deprecated
// ConsumerGroupPartitionMetadata),
// which loading skips as Kafka's loader skips UnknownRecordTypeException.
var errUnknownRecordType = fmt.Errorf("unknown record type")

// decodeRecord parses one record's key and value
// (GroupCoordinatorRecordSerde.deserialize). A share group
// StatePartitionMetadata value's topics are stamped with the time 0.
func decodeRecord(key, value []byte, tombstone bool) (decodedRecord, error) {
	return decodeRecordAt(key, value, tombstone, 0)
}

// decodeRecordAt is decodeRecord stamping share group topics with nowMs.
func decodeRecordAt(key, value []byte, tombstone bool, nowMs int64) (decodedRecord, error) {
	var d decodedRecord
	if len(key) < 2 {
		return d, fmt.Errorf("record key of %d bytes has no version", len(key))
	}
	switch version := int16(binary.BigEndian.Uint16(key)); version {
	case 0, 1:
		k := new(kmsg.OffsetCommitKey)
		if err := k.ReadFrom(key); err != nil {
			return d, fmt.Errorf("decoding OffsetCommitKey: %w", err)
		}
		d.offsetKey = k
		if !tombstone {
			v := new(kmsg.OffsetCommitValue)
			if err := v.ReadFrom(value); err != nil {
				return d, fmt.Errorf("decoding OffsetCommitValue for %s/%s/%d: %w", k.Group, k.Topic, k.Partition, err)
			}
			if v.Version < 3 {
				v.LeaderEpoch = -1
			}
			if v.Version != 1 {
				v.ExpireTimestamp = -1
			}
			d.offsetValue = v
		}
	case 2:
		k := new(kmsg.GroupMetadataKey)
		if err := k.ReadFrom(key); err != nil {
			return d, fmt.Errorf("decoding GroupMetadataKey: %w", err)
		}
		d.groupKey = k
		if !tombstone {
			v := new(kmsg.GroupMetadataValue)
			if err := v.ReadFrom(value); err != nil {
				return d, fmt.Errorf("decoding GroupMetadataValue for %s: %w", k.Group, err)
			}
			if v.Version < 2 {
				v.CurrentStateTimestamp = -1
			}
			if v.Version < 1 {
				for i := range v.Members {
					v.Members[i].RebalanceTimeoutMillis = -1
				}
			}
			d.groupValue = v
		}
	case int16(cgRecordGroupMetadata), int16(cgRecordMemberMetadata), int16(cgRecordTargetAssignmentMetadata),
		int16(cgRecordTargetAssignmentMember), int16(cgRecordCurrentAssignment), int16(cgRecordRegularExpression):
		r, err := decodeCGRecord(cgRecordType(version), key, value, tombstone)
		if err != nil {
			return d, err
		}
		d.consumer = &r
	case int16(records.TypeShareGroupMemberMetadata), int16(records.TypeShareGroupMetadata),
		int16(records.TypeShareGroupTargetAssignmentMetadata), int16(records.TypeShareGroupTargetAssignmentMember),
		int16(records.TypeShareGroupCurrentMemberAssignment), int16(records.TypeShareGroupStatePartitionMetadata):
		r, err := decodeShareRecord(key, value, tombstone, nowMs)
		if err != nil {
			return d, err
		}
		d.share = &r
	default:
		// ConsumerGroupPartitionMetadata (4) is no longer written by
		// Kafka 4.x (KIP-1101), nor ShareGroupPartitionMetadata (9) by
		// 4.1+; streams groups are not served.
		return d, fmt.Errorf("%w %d", errUnknownRecordType, version)
	}
	return d, nil
}
