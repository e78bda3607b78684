package records

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// unknownTags returns tags a decoder does not know, as a newer Kafka's
// fields would be: they must come back from a round trip unchanged.
func unknownTags(tags ...uint32) kmsg.Tags {
	var t kmsg.Tags
	for _, tag := range tags {
		t.Set(tag, []byte{byte(tag), 0xff})
	}
	return t
}

var otherID = [16]byte{0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00}

// fullValues returns, for every record type, values with every field set:
// both a null and a set nullable field, empty and non-empty arrays, the
// known tagged fields and unknown ones in every struct.
func fullValues() map[RecordType][]Value {
	tps := func() []TopicPartitions {
		return []TopicPartitions{
			{TopicID: topicID, Partitions: []int32{0, 1, 2}, UnknownTags: unknownTags(5)},
			{TopicID: otherID, Partitions: []int32{}},
		}
	}
	topics := func() []TopicMetadata {
		return []TopicMetadata{{
			TopicID: topicID, TopicName: "foo", NumPartitions: 3,
			PartitionMetadata: []PartitionMetadata{
				{Partition: 0, Racks: []string{"r1", "r2"}, UnknownTags: unknownTags(3)},
				{Partition: 1, Racks: []string{}},
			},
			UnknownTags: unknownTags(2),
		}, {TopicID: otherID, TopicName: "", NumPartitions: 0, PartitionMetadata: []PartitionMetadata{}}}
	}
	return map[RecordType][]Value{
		TypeConsumerGroupMetadata: {
			&ConsumerGroupMetadataValue{Epoch: 1 << 30, MetadataHash: -5, CreationTimeMs: 1700000000000, UnknownTags: unknownTags(2, 9)},
			&ConsumerGroupMetadataValue{Epoch: -1, MetadataHash: 0, CreationTimeMs: 0},
		},
		TypeConsumerGroupPartitionMetadata: {
			&ConsumerGroupPartitionMetadataValue{Topics: topics(), UnknownTags: unknownTags(0)},
			&ConsumerGroupPartitionMetadataValue{Topics: []TopicMetadata{}},
		},
		TypeConsumerGroupMemberMetadata: {
			&ConsumerGroupMemberMetadataValue{
				InstanceID: strp("instance"), RackID: strp(""), ClientID: "client", ClientHost: "/127.0.0.1",
				SubscribedTopicNames: []string{"a", "b"}, SubscribedTopicRegex: strp("foo.*"),
				RebalanceTimeoutMs: 300000, ServerAssignor: strp("range"),
				ClassicMemberMetadata: &ClassicMemberMetadata{
					SessionTimeoutMs: 45000,
					SupportedProtocols: []ClassicProtocol{
						{Name: "range", Metadata: []byte{0, 1, 2}, UnknownTags: unknownTags(1)},
						{Name: "roundrobin", Metadata: []byte{}},
					},
					UnknownTags: unknownTags(4),
				},
				UnknownTags: unknownTags(1, 200),
			},
			&ConsumerGroupMemberMetadataValue{
				ClientID: "", ClientHost: "", SubscribedTopicNames: []string{}, RebalanceTimeoutMs: -1,
				ClassicMemberMetadata: &ClassicMemberMetadata{SupportedProtocols: []ClassicProtocol{}},
			},
			&ConsumerGroupMemberMetadataValue{SubscribedTopicNames: []string{}, RebalanceTimeoutMs: -1},
		},
		TypeConsumerGroupTargetAssignmentMetadata: {
			&ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: 12, AssignmentTimestamp: 1700000000000, UnknownTags: unknownTags(1)},
			&ConsumerGroupTargetAssignmentMetadataValue{},
		},
		TypeConsumerGroupTargetAssignmentMember: {
			&ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: tps(), UnknownTags: unknownTags(0)},
			&ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: []TopicPartitions{}},
		},
		TypeConsumerGroupCurrentMemberAssignment: {
			&ConsumerGroupCurrentMemberAssignmentValue{
				MemberEpoch: 7, PreviousMemberEpoch: 6, State: 2,
				AssignedPartitions: []AssignedTopicPartitions{
					{TopicID: topicID, Partitions: []int32{0, 1}, AssignmentEpochs: []int32{5, 7}, UnknownTags: unknownTags(1)},
					{TopicID: otherID, Partitions: []int32{}},
				},
				PartitionsPendingRevocation: []AssignedTopicPartitions{{TopicID: otherID, Partitions: []int32{3}}},
				UnknownTags:                 unknownTags(0),
			},
			&ConsumerGroupCurrentMemberAssignmentValue{
				AssignedPartitions: []AssignedTopicPartitions{}, PartitionsPendingRevocation: []AssignedTopicPartitions{},
			},
		},
		TypeConsumerGroupRegularExpression: {
			&ConsumerGroupRegularExpressionValue{Topics: []string{"a1", "a2"}, Version: 9, Timestamp: 1700000000000, UnknownTags: unknownTags(0)},
			&ConsumerGroupRegularExpressionValue{Topics: []string{}},
		},
		TypeShareGroupPartitionMetadata: {
			&ShareGroupPartitionMetadataValue{Topics: topics()},
		},
		TypeShareGroupMemberMetadata: {
			&ShareGroupMemberMetadataValue{RackID: strp("rack"), ClientID: "c", ClientHost: "h", SubscribedTopicNames: []string{"x", "y"}, UnknownTags: unknownTags(0)},
			&ShareGroupMemberMetadataValue{SubscribedTopicNames: []string{}},
		},
		TypeShareGroupMetadata: {
			&ShareGroupMetadataValue{Epoch: 4, MetadataHash: -1, UnknownTags: unknownTags(0)},
			&ShareGroupMetadataValue{},
		},
		TypeShareGroupTargetAssignmentMetadata: {
			&ShareGroupTargetAssignmentMetadataValue{AssignmentEpoch: 4, UnknownTags: unknownTags(0)},
		},
		TypeShareGroupTargetAssignmentMember: {
			&ShareGroupTargetAssignmentMemberValue{TopicPartitions: tps(), UnknownTags: unknownTags(3)},
		},
		TypeShareGroupCurrentMemberAssignment: {
			&ShareGroupCurrentMemberAssignmentValue{MemberEpoch: 3, PreviousMemberEpoch: 2, State: 1, AssignedPartitions: tps(), UnknownTags: unknownTags(0)},
			&ShareGroupCurrentMemberAssignmentValue{AssignedPartitions: []TopicPartitions{}},
		},
		TypeShareGroupStatePartitionMetadata: {
			&ShareGroupStatePartitionMetadataValue{
				InitializingTopics: []TopicPartitionsInfo{{TopicID: otherID, TopicName: "i", Partitions: []int32{4, 5}, UnknownTags: unknownTags(0)}},
				InitializedTopics: []TopicPartitionsInfo{
					{TopicID: topicID, TopicName: "t", Partitions: []int32{0}},
					{TopicID: otherID, TopicName: "u", Partitions: []int32{}},
				},
				DeletingTopics: []TopicInfo{{TopicID: topicID, TopicName: "d", UnknownTags: unknownTags(7)}},
				UnknownTags:    unknownTags(0),
			},
			&ShareGroupStatePartitionMetadataValue{
				InitializingTopics: []TopicPartitionsInfo{}, InitializedTopics: []TopicPartitionsInfo{}, DeletingTopics: []TopicInfo{},
			},
		},
	}
}

// TestRoundTrip encodes every value with every field set and decodes it
// back: the same value, and the same bytes when encoded again.
func TestRoundTrip(t *testing.T) {
	all := fullValues()
	for typ := TypeConsumerGroupMetadata; typ <= TypeConsumerGroupRegularExpression; typ++ {
		if len(all[typ]) == 0 {
			t.Errorf("no round-trip value of type %d (%s)", typ, typ)
		}
	}
	for typ, values := range all {
		for i, want := range values {
			b := want.AppendTo(nil)
			got, err := NewValue(typ)
			if err != nil {
				t.Fatal(err)
			}
			if err := got.ReadFrom(b); err != nil {
				t.Errorf("%s #%d: %v (bytes %x)", typ, i, err, b)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s #%d: decoded\n%+v\nwant\n%+v", typ, i, got, want)
			}
			if again := got.AppendTo(nil); !bytes.Equal(again, b) {
				t.Errorf("%s #%d: re-encoded\n%x\nwant\n%x", typ, i, again, b)
			}
		}
	}
}

// TestKeyRoundTrip encodes and decodes a key of every type of this
// package, and checks KeyType reads the type back.
func TestKeyRoundTrip(t *testing.T) {
	for typ := TypeConsumerGroupMetadata; typ <= TypeConsumerGroupRegularExpression; typ++ {
		want := Key{Type: typ, GroupID: "group-é"}
		switch types[typ].shape {
		case memberKeyed:
			want.MemberID = "member-1"
		case regexKeyed:
			want.RegularExpression = "topic-[0-9]+"
		}
		b := want.AppendTo(nil)
		if got, err := KeyType(b); err != nil || got != typ {
			t.Errorf("KeyType(%x) = %d, %v; want %d", b, got, err, typ)
		}
		var got Key
		if err := got.ReadFrom(b); err != nil {
			t.Errorf("%s: %v", typ, err)
			continue
		}
		if got != want {
			t.Errorf("%s: decoded %+v, want %+v", typ, got, want)
		}
	}
}

// TestDefaults checks the constructors hold Kafka's defaults, and that a
// value at its defaults writes no tagged field (as Kafka 4.0 writes it).
func TestDefaults(t *testing.T) {
	m := NewConsumerGroupMetadataValue()
	if m.CreationTimeMs != -1 {
		t.Errorf("CreationTimeMs = %d, want Kafka's default -1", m.CreationTimeMs)
	}
	if b := m.AppendTo(nil); !bytes.Equal(b, []byte{0, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("a default ConsumerGroupMetadataValue is %x, want version, epoch and no tagged field", b)
	}
	if mm := NewConsumerGroupMemberMetadataValue(); mm.RebalanceTimeoutMs != -1 {
		t.Errorf("RebalanceTimeoutMs = %d, want Kafka's default -1", mm.RebalanceTimeoutMs)
	}
	for typ, values := range fullValues() {
		v, _ := NewValue(typ)
		want := reflect.New(reflect.TypeOf(values[0]).Elem()).Interface()
		switch typ {
		case TypeConsumerGroupMetadata:
			want = ptr(NewConsumerGroupMetadataValue())
		case TypeConsumerGroupMemberMetadata:
			want = ptr(NewConsumerGroupMemberMetadataValue())
		}
		if !reflect.DeepEqual(v, want) {
			t.Errorf("NewValue(%s) = %+v, want %+v", typ, v, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
