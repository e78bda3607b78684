package records

import (
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The values of the KIP-932 share group records (types 9-15), from Kafka's
// ShareGroup*Value.json as of 4.1, when the schemas left preview;
// GroupCoordinatorRecordHelpers says which fields Kafka fills.

// ShareGroupPartitionMetadataValue (type 9) has the schema of
// ConsumerGroupPartitionMetadataValue. Only Kafka 4.0 wrote it; 4.1
// dropped it (a 4.1+ loader skips type 9 as unknown).
type ShareGroupPartitionMetadataValue = ConsumerGroupPartitionMetadataValue

// ShareGroupTargetAssignmentMemberValue (type 13) has the schema of
// ConsumerGroupTargetAssignmentMemberValue
// (newShareGroupTargetAssignmentRecord).
type ShareGroupTargetAssignmentMemberValue = ConsumerGroupTargetAssignmentMemberValue

// ShareGroupMemberMetadataValue (type 10): a member's subscription
// (newShareGroupMemberSubscriptionRecord).
type ShareGroupMemberMetadataValue struct {
	RackID               *string
	ClientID             string
	ClientHost           string
	SubscribedTopicNames []string // Kafka sorts them
	UnknownTags          kmsg.Tags
}

func (v *ShareGroupMemberMetadataValue) AppendTo(dst []byte) []byte {
	return appendValue(dst, func(dst []byte) []byte {
		dst = kbin.AppendCompactNullableString(dst, v.RackID)
		dst = kbin.AppendCompactString(dst, v.ClientID)
		dst = kbin.AppendCompactString(dst, v.ClientHost)
		dst = appendStrings(dst, v.SubscribedTopicNames)
		return appendTags(dst, &v.UnknownTags)
	})
}

func (v *ShareGroupMemberMetadataValue) ReadFrom(b []byte) error {
	*v = ShareGroupMemberMetadataValue{}
	return readValue(b, "ShareGroupMemberMetadataValue", func(d *decoder) {
		v.RackID = d.nullableString()
		v.ClientID = d.string()
		v.ClientHost = d.string()
		v.SubscribedTopicNames = d.strings()
		d.tags(&v.UnknownTags, nil)
	})
}

// ShareGroupMetadataValue (type 11): the group epoch and, unlike the
// consumer group's, an untagged MetadataHash (4.1; 4.0's value had the
// epoch alone) (newShareGroupEpochRecord).
type ShareGroupMetadataValue struct {
	Epoch        int32
	MetadataHash int64
	UnknownTags  kmsg.Tags
}

func (v *ShareGroupMetadataValue) AppendTo(dst []byte) []byte {
	return appendValue(dst, func(dst []byte) []byte {
		dst = kbin.AppendInt32(dst, v.Epoch)
		dst = kbin.AppendInt64(dst, v.MetadataHash)
		return appendTags(dst, &v.UnknownTags)
	})
}

func (v *ShareGroupMetadataValue) ReadFrom(b []byte) error {
	*v = ShareGroupMetadataValue{}
	return readValue(b, "ShareGroupMetadataValue", func(d *decoder) {
		v.Epoch = d.int32()
		v.MetadataHash = d.int64()
		d.tags(&v.UnknownTags, nil)
	})
}

// ShareGroupTargetAssignmentMetadataValue (type 12): the epoch of the
// group's target assignment (newShareGroupTargetAssignmentEpochRecord).
type ShareGroupTargetAssignmentMetadataValue struct {
	AssignmentEpoch int32
	UnknownTags     kmsg.Tags
}

func (v *ShareGroupTargetAssignmentMetadataValue) AppendTo(dst []byte) []byte {
	return appendValue(dst, func(dst []byte) []byte {
		dst = kbin.AppendInt32(dst, v.AssignmentEpoch)
		return appendTags(dst, &v.UnknownTags)
	})
}

func (v *ShareGroupTargetAssignmentMetadataValue) ReadFrom(b []byte) error {
	*v = ShareGroupTargetAssignmentMetadataValue{}
	return readValue(b, "ShareGroupTargetAssignmentMetadataValue", func(d *decoder) {
		v.AssignmentEpoch = d.int32()
		d.tags(&v.UnknownTags, nil)
	})
}

// ShareGroupCurrentMemberAssignmentValue (type 14): a member's epochs,
// state and assignment; a share group revokes nothing, so there is no
// PartitionsPendingRevocation (newShareGroupCurrentAssignmentRecord).
type ShareGroupCurrentMemberAssignmentValue struct {
	MemberEpoch         int32
	PreviousMemberEpoch int32
	State               int8 // Kafka's MemberState value
	AssignedPartitions  []TopicPartitions
	UnknownTags         kmsg.Tags
}

func (v *ShareGroupCurrentMemberAssignmentValue) AppendTo(dst []byte) []byte {
	return appendValue(dst, func(dst []byte) []byte {
		dst = kbin.AppendInt32(dst, v.MemberEpoch)
		dst = kbin.AppendInt32(dst, v.PreviousMemberEpoch)
		dst = kbin.AppendInt8(dst, v.State)
		dst = appendArray(dst, v.AssignedPartitions, (*TopicPartitions).appendTo)
		return appendTags(dst, &v.UnknownTags)
	})
}

func (v *ShareGroupCurrentMemberAssignmentValue) ReadFrom(b []byte) error {
	*v = ShareGroupCurrentMemberAssignmentValue{}
	return readValue(b, "ShareGroupCurrentMemberAssignmentValue", func(d *decoder) {
		v.MemberEpoch = d.int32()
		v.PreviousMemberEpoch = d.int32()
		v.State = d.int8()
		v.AssignedPartitions = readArray(d, minTopicPartitions, (*TopicPartitions).readFrom)
		d.tags(&v.UnknownTags, nil)
	})
}

// ShareGroupStatePartitionMetadataValue (type 15): which topic-partitions
// of the group have share-group state in the share coordinator: being
// initialized, initialized, or being deleted
// (newShareGroupStatePartitionMetadataRecord).
type ShareGroupStatePartitionMetadataValue struct {
	InitializingTopics []TopicPartitionsInfo
	InitializedTopics  []TopicPartitionsInfo
	DeletingTopics     []TopicInfo
	UnknownTags        kmsg.Tags
}

// TopicPartitionsInfo is a topic, by id and name, and some partitions.
type TopicPartitionsInfo struct {
	TopicID     [16]byte
	TopicName   string
	Partitions  []int32
	UnknownTags kmsg.Tags
}

// TopicInfo is a topic by id and name.
type TopicInfo struct {
	TopicID     [16]byte
	TopicName   string
	UnknownTags kmsg.Tags
}

func (v *ShareGroupStatePartitionMetadataValue) AppendTo(dst []byte) []byte {
	return appendValue(dst, func(dst []byte) []byte {
		dst = appendArray(dst, v.InitializingTopics, (*TopicPartitionsInfo).appendTo)
		dst = appendArray(dst, v.InitializedTopics, (*TopicPartitionsInfo).appendTo)
		dst = appendArray(dst, v.DeletingTopics, (*TopicInfo).appendTo)
		return appendTags(dst, &v.UnknownTags)
	})
}

func (v *ShareGroupStatePartitionMetadataValue) ReadFrom(b []byte) error {
	*v = ShareGroupStatePartitionMetadataValue{}
	return readValue(b, "ShareGroupStatePartitionMetadataValue", func(d *decoder) {
		v.InitializingTopics = readArray(d, minTopicPartitionInfo, (*TopicPartitionsInfo).readFrom)
		v.InitializedTopics = readArray(d, minTopicPartitionInfo, (*TopicPartitionsInfo).readFrom)
		v.DeletingTopics = readArray(d, minTopicInfo, (*TopicInfo).readFrom)
		d.tags(&v.UnknownTags, nil)
	})
}

func (v *TopicPartitionsInfo) appendTo(dst []byte) []byte {
	dst = kbin.AppendUuid(dst, v.TopicID)
	dst = kbin.AppendCompactString(dst, v.TopicName)
	dst = appendInt32s(dst, v.Partitions)
	return appendTags(dst, &v.UnknownTags)
}

func (v *TopicPartitionsInfo) readFrom(d *decoder) {
	v.TopicID = d.uuid()
	v.TopicName = d.string()
	v.Partitions = d.int32s(false)
	d.tags(&v.UnknownTags, nil)
}

func (v *TopicInfo) appendTo(dst []byte) []byte {
	dst = kbin.AppendUuid(dst, v.TopicID)
	dst = kbin.AppendCompactString(dst, v.TopicName)
	return appendTags(dst, &v.UnknownTags)
}

func (v *TopicInfo) readFrom(d *decoder) {
	v.TopicID = d.uuid()
	v.TopicName = d.string()
	d.tags(&v.UnknownTags, nil)
}
