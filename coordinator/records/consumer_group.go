package records

import (
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The values of the KIP-848 consumer group records (types 3-8 and 16),
// from Kafka's ConsumerGroup*Value.json; GroupCoordinatorRecordHelpers
// says which fields Kafka fills.

// ConsumerGroupMetadataValue (type 3): the group epoch
// (newConsumerGroupEpochRecord).
type ConsumerGroupMetadataValue struct {
	Epoch int32
	// MetadataHash (tag 0, default 0; Kafka 4.1, KIP-1101) hashes the
	// subscribed topics' metadata; it replaced the
	// ConsumerGroupPartitionMetadata record.
	MetadataHash int64
	// CreationTimeMs (tag 1, default -1; KIP-1282, Kafka trunk) is when
	// the group was created. -1 leaves it out: build values with
	// NewConsumerGroupMetadataValue.
	CreationTimeMs int64
	UnknownTags    kmsg.Tags
}

// NewConsumerGroupMetadataValue returns a value with Kafka's defaults.
func NewConsumerGroupMetadataValue() ConsumerGroupMetadataValue {
	return ConsumerGroupMetadataValue{CreationTimeMs: -1}
}

func (v *ConsumerGroupMetadataValue) AppendTo(dst []byte) []byte {
	return appendValue(dst, func(dst []byte) []byte {
		dst = kbin.AppendInt32(dst, v.Epoch)
		var tags []tagged
		if v.MetadataHash != 0 {
			tags = append(tags, tagged{0, kbin.AppendInt64(nil, v.MetadataHash)})
		}
		if v.CreationTimeMs != -1 {
			tags = append(tags, tagged{1, kbin.AppendInt64(nil, v.CreationTimeMs)})
		}
		return appendTags(dst, &v.UnknownTags, tags...)
	})
}

func (v *ConsumerGroupMetadataValue) ReadFrom(b []byte) error {
	*v = NewConsumerGroupMetadataValue()
	return readValue(b, "ConsumerGroupMetadataValue", func(d *decoder) {
		v.Epoch = d.int32()
		d.tags(&v.UnknownTags, func(tag uint32, f *decoder) bool {
			switch tag {
			case 0:
				v.MetadataHash = f.int64()
			case 1:
				v.CreationTimeMs = f.int64()
			default:
				return false
			}
			return true
		})
	})
}

// ConsumerGroupPartitionMetadataValue (type 4): the subscribed topics'
// metadata. Kafka 4.1 (KIP-1101) no longer writes it: on replay it notes
// the group has one and writes its tombstone at the group's next
// heartbeat. Kept for reading logs of 3.7-4.0.
type ConsumerGroupPartitionMetadataValue struct {
	Topics      []TopicMetadata
	UnknownTags kmsg.Tags
}

func (v *ConsumerGroupPartitionMetadataValue) AppendTo(dst []byte) []byte {
	return appendValue(dst, func(dst []byte) []byte {
		dst = appendArray(dst, v.Topics, (*TopicMetadata).appendTo)
		return appendTags(dst, &v.UnknownTags)
	})
}

func (v *ConsumerGroupPartitionMetadataValue) ReadFrom(b []byte) error {
	*v = ConsumerGroupPartitionMetadataValue{}
	return readValue(b, "PartitionMetadataValue", func(d *decoder) {
		v.Topics = readArray(d, minTopicMetadata, (*TopicMetadata).readFrom)
		d.tags(&v.UnknownTags, nil)
	})
}

// ConsumerGroupMemberMetadataValue (type 5): a member's subscription
// (newConsumerGroupMemberSubscriptionRecord).
type ConsumerGroupMemberMetadataValue struct {
	InstanceID           *string
	RackID               *string
	ClientID             string
	ClientHost           string
	SubscribedTopicNames []string // Kafka sorts them
	SubscribedTopicRegex *string
	RebalanceTimeoutMs   int32 // default -1
	ServerAssignor       *string
	// ClassicMemberMetadata (tag 0) is set for a member that joined with
	// the classic protocol (KIP-848 upgrade path), and nil for one that
	// uses the consumer protocol. The schema's "default": null is a JSON
	// null, which Kafka's generator reads as no default, so the default
	// is an empty struct: Kafka writes nil explicitly (tag 0, a null
	// struct) for every consumer-protocol member, leaves out an empty
	// struct, and reads an absent tag as an empty struct. This package
	// does the same.
	ClassicMemberMetadata *ClassicMemberMetadata
	UnknownTags           kmsg.Tags
}

// ClassicMemberMetadata is what a classic-protocol member of a consumer
// group joined with.
type ClassicMemberMetadata struct {
	SessionTimeoutMs   int32
	SupportedProtocols []ClassicProtocol
	UnknownTags        kmsg.Tags
}

// ClassicProtocol is one protocol of a JoinGroup: the assignor's name and
// the member's subscription metadata for it.
type ClassicProtocol struct {
	Name        string
	Metadata    []byte
	UnknownTags kmsg.Tags
}

// NewConsumerGroupMemberMetadataValue returns a value with Kafka's
// defaults.
func NewConsumerGroupMemberMetadataValue() ConsumerGroupMemberMetadataValue {
	return ConsumerGroupMemberMetadataValue{RebalanceTimeoutMs: -1}
}

func (v *ConsumerGroupMemberMetadataValue) AppendTo(dst []byte) []byte {
	return appendValue(dst, func(dst []byte) []byte {
		dst = kbin.AppendCompactNullableString(dst, v.InstanceID)
		dst = kbin.AppendCompactNullableString(dst, v.RackID)
		dst = kbin.AppendCompactString(dst, v.ClientID)
		dst = kbin.AppendCompactString(dst, v.ClientHost)
		dst = appendStrings(dst, v.SubscribedTopicNames)
		dst = kbin.AppendCompactNullableString(dst, v.SubscribedTopicRegex)
		dst = kbin.AppendInt32(dst, v.RebalanceTimeoutMs)
		dst = kbin.AppendCompactNullableString(dst, v.ServerAssignor)
		// A nullable struct in a tagged field starts with a presence
		// uvarint: 0 for null, 1 before the struct (Kafka's
		// MessageDataGenerator).
		switch c := v.ClassicMemberMetadata; {
		case c == nil:
			return appendTags(dst, &v.UnknownTags, tagged{0, []byte{0}})
		case c.isDefault():
			return appendTags(dst, &v.UnknownTags)
		default:
			return appendTags(dst, &v.UnknownTags, tagged{0, c.appendTo([]byte{1})})
		}
	})
}

func (v *ConsumerGroupMemberMetadataValue) ReadFrom(b []byte) error {
	*v = NewConsumerGroupMemberMetadataValue()
	return readValue(b, "ConsumerGroupMemberMetadataValue", func(d *decoder) {
		v.InstanceID = d.nullableString()
		v.RackID = d.nullableString()
		v.ClientID = d.string()
		v.ClientHost = d.string()
		v.SubscribedTopicNames = d.strings()
		v.SubscribedTopicRegex = d.nullableString()
		v.RebalanceTimeoutMs = d.int32()
		v.ServerAssignor = d.nullableString()
		v.ClassicMemberMetadata = &ClassicMemberMetadata{SupportedProtocols: []ClassicProtocol{}}
		d.tags(&v.UnknownTags, func(tag uint32, f *decoder) bool {
			if tag != 0 {
				return false
			}
			if f.r.Uvarint() == 0 {
				v.ClassicMemberMetadata = nil
			} else {
				v.ClassicMemberMetadata.readFrom(f)
			}
			return true
		})
	})
}

// isDefault reports whether v is the field's default, an empty struct,
// which Kafka leaves out (its generated equals compares unknown tags too).
func (v *ClassicMemberMetadata) isDefault() bool {
	return v.SessionTimeoutMs == 0 && len(v.SupportedProtocols) == 0 && v.UnknownTags.Len() == 0
}

func (v *ClassicMemberMetadata) appendTo(dst []byte) []byte {
	dst = kbin.AppendInt32(dst, v.SessionTimeoutMs)
	dst = appendArray(dst, v.SupportedProtocols, (*ClassicProtocol).appendTo)
	return appendTags(dst, &v.UnknownTags)
}

func (v *ClassicMemberMetadata) readFrom(d *decoder) {
	v.SessionTimeoutMs = d.int32()
	v.SupportedProtocols = readArray(d, minClassicProtocol, (*ClassicProtocol).readFrom)
	d.tags(&v.UnknownTags, nil)
}

func (v *ClassicProtocol) appendTo(dst []byte) []byte {
	dst = kbin.AppendCompactString(dst, v.Name)
	dst = kbin.AppendCompactBytes(dst, v.Metadata)
	return appendTags(dst, &v.UnknownTags)
}

func (v *ClassicProtocol) readFrom(d *decoder) {
	v.Name = d.string()
	v.Metadata = d.bytes()
	d.tags(&v.UnknownTags, nil)
}

// ConsumerGroupTargetAssignmentMetadataValue (type 6): the epoch of the
// group's target assignment (newConsumerGroupTargetAssignmentEpochRecord).
type ConsumerGroupTargetAssignmentMetadataValue struct {
	AssignmentEpoch int32
	// AssignmentTimestamp (tag 0, default 0; Kafka 4.3, KIP-1263) is when
	// the assignment was computed.
	AssignmentTimestamp int64
	UnknownTags         kmsg.Tags
}

func (v *ConsumerGroupTargetAssignmentMetadataValue) AppendTo(dst []byte) []byte {
	return appendValue(dst, func(dst []byte) []byte {
		dst = kbin.AppendInt32(dst, v.AssignmentEpoch)
		if v.AssignmentTimestamp == 0 {
			return appendTags(dst, &v.UnknownTags)
		}
		return appendTags(dst, &v.UnknownTags, tagged{0, kbin.AppendInt64(nil, v.AssignmentTimestamp)})
	})
}

func (v *ConsumerGroupTargetAssignmentMetadataValue) ReadFrom(b []byte) error {
	*v = ConsumerGroupTargetAssignmentMetadataValue{}
	return readValue(b, "ConsumerGroupTargetAssignmentMetadataValue", func(d *decoder) {
		v.AssignmentEpoch = d.int32()
		d.tags(&v.UnknownTags, func(tag uint32, f *decoder) bool {
			if tag != 0 {
				return false
			}
			v.AssignmentTimestamp = f.int64()
			return true
		})
	})
}

// ConsumerGroupTargetAssignmentMemberValue (type 7): a member's target
// assignment (newConsumerGroupTargetAssignmentRecord).
type ConsumerGroupTargetAssignmentMemberValue struct {
	TopicPartitions []TopicPartitions
	UnknownTags     kmsg.Tags
}

func (v *ConsumerGroupTargetAssignmentMemberValue) AppendTo(dst []byte) []byte {
	return appendValue(dst, func(dst []byte) []byte {
		dst = appendArray(dst, v.TopicPartitions, (*TopicPartitions).appendTo)
		return appendTags(dst, &v.UnknownTags)
	})
}

func (v *ConsumerGroupTargetAssignmentMemberValue) ReadFrom(b []byte) error {
	*v = ConsumerGroupTargetAssignmentMemberValue{}
	return readValue(b, "TargetAssignmentMemberValue", func(d *decoder) {
		v.TopicPartitions = readArray(d, minTopicPartitions, (*TopicPartitions).readFrom)
		d.tags(&v.UnknownTags, nil)
	})
}

// ConsumerGroupCurrentMemberAssignmentValue (type 8): a member's epochs,
// state and current assignment (newConsumerGroupCurrentAssignmentRecord).
type ConsumerGroupCurrentMemberAssignmentValue struct {
	MemberEpoch                 int32
	PreviousMemberEpoch         int32
	State                       int8 // Kafka's MemberState value
	AssignedPartitions          []AssignedTopicPartitions
	PartitionsPendingRevocation []AssignedTopicPartitions
	UnknownTags                 kmsg.Tags
}

func (v *ConsumerGroupCurrentMemberAssignmentValue) AppendTo(dst []byte) []byte {
	return appendValue(dst, func(dst []byte) []byte {
		dst = kbin.AppendInt32(dst, v.MemberEpoch)
		dst = kbin.AppendInt32(dst, v.PreviousMemberEpoch)
		dst = kbin.AppendInt8(dst, v.State)
		dst = appendArray(dst, v.AssignedPartitions, (*AssignedTopicPartitions).appendTo)
		dst = appendArray(dst, v.PartitionsPendingRevocation, (*AssignedTopicPartitions).appendTo)
		return appendTags(dst, &v.UnknownTags)
	})
}

func (v *ConsumerGroupCurrentMemberAssignmentValue) ReadFrom(b []byte) error {
	*v = ConsumerGroupCurrentMemberAssignmentValue{}
	return readValue(b, "ConsumerGroupCurrentMemberAssignmentValue", func(d *decoder) {
		v.MemberEpoch = d.int32()
		v.PreviousMemberEpoch = d.int32()
		v.State = d.int8()
		v.AssignedPartitions = readArray(d, minAssignedPartitions, (*AssignedTopicPartitions).readFrom)
		v.PartitionsPendingRevocation = readArray(d, minAssignedPartitions, (*AssignedTopicPartitions).readFrom)
		d.tags(&v.UnknownTags, nil)
	})
}

// ConsumerGroupRegularExpressionValue (type 16, Kafka 4.0): the topics a
// subscribed regular expression resolved to, at which metadata image
// version and when (newConsumerGroupRegularExpressionRecord).
type ConsumerGroupRegularExpressionValue struct {
	Topics      []string // Kafka sorts them
	Version     int64
	Timestamp   int64
	UnknownTags kmsg.Tags
}

func (v *ConsumerGroupRegularExpressionValue) AppendTo(dst []byte) []byte {
	return appendValue(dst, func(dst []byte) []byte {
		dst = appendStrings(dst, v.Topics)
		dst = kbin.AppendInt64(dst, v.Version)
		dst = kbin.AppendInt64(dst, v.Timestamp)
		return appendTags(dst, &v.UnknownTags)
	})
}

func (v *ConsumerGroupRegularExpressionValue) ReadFrom(b []byte) error {
	*v = ConsumerGroupRegularExpressionValue{}
	return readValue(b, "ConsumerGroupRegularExpressionValue", func(d *decoder) {
		v.Topics = d.strings()
		v.Version = d.int64()
		v.Timestamp = d.int64()
		d.tags(&v.UnknownTags, nil)
	})
}
