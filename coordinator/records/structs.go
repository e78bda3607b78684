package records

import (
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The nested structs several record values share. Each ends, as every
// struct of a flexible message does, with its own tagged fields.

// appendArray appends a compact array of structs.
func appendArray[T any](dst []byte, s []T, appendOne func(*T, []byte) []byte) []byte {
	dst = kbin.AppendCompactArrayLen(dst, len(s))
	for i := range s {
		dst = appendOne(&s[i], dst)
	}
	return dst
}

// readArray reads a non-nullable compact array of structs, minElem being
// the fewest bytes one takes.
func readArray[T any](d *decoder, minElem int, readOne func(*T, *decoder)) []T {
	s := make([]T, d.arrayLen(minElem, false))
	for i := range s {
		readOne(&s[i], d)
	}
	return s
}

// Minimal encoded sizes of the nested structs, for readArray: fixed
// fields, one byte for each compact string or array length, one for the
// tagged-field count.
const (
	minTopicPartitions    = 16 + 1 + 1
	minAssignedPartitions = 16 + 1 + 1
	minTopicMetadata      = 16 + 1 + 4 + 1 + 1
	minPartitionMetadata  = 4 + 1 + 1
	minClassicProtocol    = 1 + 1 + 1
	minTopicInfo          = 16 + 1 + 1
	minTopicPartitionInfo = 16 + 1 + 1 + 1
)

// TopicPartitions is a topic's partitions in an assignment: the
// TopicPartition(s) struct of ConsumerGroupTargetAssignmentMemberValue,
// ShareGroupTargetAssignmentMemberValue and
// ShareGroupCurrentMemberAssignmentValue.
type TopicPartitions struct {
	TopicID     [16]byte
	Partitions  []int32
	UnknownTags kmsg.Tags
}

func (v *TopicPartitions) appendTo(dst []byte) []byte {
	dst = kbin.AppendUuid(dst, v.TopicID)
	dst = appendInt32s(dst, v.Partitions)
	return appendTags(dst, &v.UnknownTags)
}

func (v *TopicPartitions) readFrom(d *decoder) {
	v.TopicID = d.uuid()
	v.Partitions = d.int32s(false)
	d.tags(&v.UnknownTags, nil)
}

// AssignedTopicPartitions is ConsumerGroupCurrentMemberAssignmentValue's
// TopicPartitions: TopicPartitions with, since KIP-1251, the epoch at
// which each partition was assigned to the member (tag 0, aligned with
// Partitions). The schema's "default": null is a JSON null, which Kafka's
// generator reads as no default: the default is an empty array, which
// Kafka leaves out and reads back for an absent tag (it would write a
// Java null explicitly; its record helpers never set one). Here nil and
// empty are the same, left out, and a null or empty array reads as nil.
type AssignedTopicPartitions struct {
	TopicID          [16]byte
	Partitions       []int32
	AssignmentEpochs []int32 // tag 0
	UnknownTags      kmsg.Tags
}

func (v *AssignedTopicPartitions) appendTo(dst []byte) []byte {
	dst = kbin.AppendUuid(dst, v.TopicID)
	dst = appendInt32s(dst, v.Partitions)
	if len(v.AssignmentEpochs) == 0 {
		return appendTags(dst, &v.UnknownTags)
	}
	return appendTags(dst, &v.UnknownTags, tagged{0, appendInt32s(nil, v.AssignmentEpochs)})
}

func (v *AssignedTopicPartitions) readFrom(d *decoder) {
	v.TopicID = d.uuid()
	v.Partitions = d.int32s(false)
	d.tags(&v.UnknownTags, func(tag uint32, f *decoder) bool {
		if tag != 0 {
			return false
		}
		if v.AssignmentEpochs = f.int32s(true); len(v.AssignmentEpochs) == 0 {
			v.AssignmentEpochs = nil
		}
		return true
	})
}

// TopicMetadata is a topic of ConsumerGroupPartitionMetadataValue (and of
// 4.0's ShareGroupPartitionMetadataValue).
type TopicMetadata struct {
	TopicID       [16]byte
	TopicName     string
	NumPartitions int32
	// PartitionMetadata maps partitions to racks; Kafka 4.0 stopped
	// filling it (KAFKA-17578) and writes an empty array.
	PartitionMetadata []PartitionMetadata
	UnknownTags       kmsg.Tags
}

func (v *TopicMetadata) appendTo(dst []byte) []byte {
	dst = kbin.AppendUuid(dst, v.TopicID)
	dst = kbin.AppendCompactString(dst, v.TopicName)
	dst = kbin.AppendInt32(dst, v.NumPartitions)
	dst = appendArray(dst, v.PartitionMetadata, (*PartitionMetadata).appendTo)
	return appendTags(dst, &v.UnknownTags)
}

func (v *TopicMetadata) readFrom(d *decoder) {
	v.TopicID = d.uuid()
	v.TopicName = d.string()
	v.NumPartitions = d.int32()
	v.PartitionMetadata = readArray(d, minPartitionMetadata, (*PartitionMetadata).readFrom)
	d.tags(&v.UnknownTags, nil)
}

// PartitionMetadata is a partition and the racks of its replicas.
type PartitionMetadata struct {
	Partition   int32
	Racks       []string
	UnknownTags kmsg.Tags
}

func (v *PartitionMetadata) appendTo(dst []byte) []byte {
	dst = kbin.AppendInt32(dst, v.Partition)
	dst = appendStrings(dst, v.Racks)
	return appendTags(dst, &v.UnknownTags)
}

func (v *PartitionMetadata) readFrom(d *decoder) {
	v.Partition = d.int32()
	v.Racks = d.strings()
	d.tags(&v.UnknownTags, nil)
}
