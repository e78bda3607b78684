package records

import (
	"bytes"
	"reflect"
	"testing"
)

// Golden records, one (or two) of each type, worked out by hand from
// Kafka's JSON schemas field by field, so a reader can check each line
// against the schema. Keys are non-flexible (int16-length strings), values
// flexible: a compact string or array length is the uvarint of length + 1,
// and every struct ends with its tagged fields (count, then tag, size,
// body each).

// join concatenates byte runs.
func join(runs ...[]byte) []byte { return bytes.Join(runs, nil) }

// uuidBytes is the topic id used in the goldens: bytes 1 to 16.
var uuidBytes = []byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}

var topicID = [16]byte(uuidBytes)

func strp(s string) *string { return &s }

type golden struct {
	name       string
	key        Key
	value      Value
	keyBytes   []byte
	valueBytes []byte
}

func goldens() []golden {
	g1 := []byte{0x00, 0x02, 'g', '1'} // GroupId "g1": int16 length 2
	m1 := []byte{0x00, 0x02, 'm', '1'} // MemberId "m1"
	return []golden{{
		name:     "ConsumerGroupMetadata with MetadataHash",
		key:      ConsumerGroupMetadataKey("g1"),
		keyBytes: join([]byte{0x00, 0x03}, g1), // type 3, GroupId
		value: &ConsumerGroupMetadataValue{
			Epoch: 5, MetadataHash: 0x0102030405060708, CreationTimeMs: -1,
		},
		valueBytes: join(
			[]byte{0x00, 0x00},             // value version 0
			[]byte{0x00, 0x00, 0x00, 0x05}, // Epoch int32 5
			[]byte{0x01},                   // 1 tagged field (CreationTimeMs -1 is its default: left out)
			[]byte{0x00, 0x08},             // tag 0 (MetadataHash), size 8
			[]byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08}, // int64
		),
	}, {
		name:     "ConsumerGroupMetadata as Kafka 4.0 writes it",
		key:      ConsumerGroupMetadataKey("g1"),
		keyBytes: join([]byte{0x00, 0x03}, g1),
		value:    &ConsumerGroupMetadataValue{Epoch: 5, CreationTimeMs: -1},
		valueBytes: join(
			[]byte{0x00, 0x00},             // version 0
			[]byte{0x00, 0x00, 0x00, 0x05}, // Epoch 5
			[]byte{0x00},                   // no tagged field: MetadataHash 0 is the default
		),
	}, {
		name:     "ConsumerGroupPartitionMetadata",
		key:      ConsumerGroupPartitionMetadataKey("g1"),
		keyBytes: join([]byte{0x00, 0x04}, g1), // type 4
		value: &ConsumerGroupPartitionMetadataValue{Topics: []TopicMetadata{{
			TopicID: topicID, TopicName: "foo", NumPartitions: 3,
			PartitionMetadata: []PartitionMetadata{{Partition: 0, Racks: []string{"r1"}}},
		}}},
		valueBytes: join(
			[]byte{0x00, 0x00},             // version 0
			[]byte{0x02},                   // Topics: 1 element
			uuidBytes,                      //   TopicId
			[]byte{0x04, 'f', 'o', 'o'},    //   TopicName "foo"
			[]byte{0x00, 0x00, 0x00, 0x03}, //   NumPartitions 3
			[]byte{0x02},                   //   PartitionMetadata: 1 element
			[]byte{0x00, 0x00, 0x00, 0x00}, //     Partition 0
			[]byte{0x02, 0x03, 'r', '1'},   //     Racks ["r1"]
			[]byte{0x00},                   //     no tagged fields
			[]byte{0x00},                   //   no tagged fields
			[]byte{0x00},                   // no tagged fields
		),
	}, {
		name:     "ConsumerGroupMemberMetadata with ClassicMemberMetadata",
		key:      ConsumerGroupMemberMetadataKey("g1", "m1"),
		keyBytes: join([]byte{0x00, 0x05}, g1, m1), // type 5, GroupId, MemberId
		value: &ConsumerGroupMemberMetadataValue{
			RackID: strp("r"), ClientID: "c", ClientHost: "h",
			SubscribedTopicNames: []string{"t"}, RebalanceTimeoutMs: 30000,
			ServerAssignor: strp("uniform"),
			ClassicMemberMetadata: &ClassicMemberMetadata{
				SessionTimeoutMs:   45000,
				SupportedProtocols: []ClassicProtocol{{Name: "range", Metadata: []byte{0xab}}},
			},
		},
		valueBytes: join(
			[]byte{0x00, 0x00},             // version 0
			[]byte{0x00},                   // InstanceId null
			[]byte{0x02, 'r'},              // RackId "r"
			[]byte{0x02, 'c'},              // ClientId "c"
			[]byte{0x02, 'h'},              // ClientHost "h"
			[]byte{0x02, 0x02, 't'},        // SubscribedTopicNames ["t"]
			[]byte{0x00},                   // SubscribedTopicRegex null
			[]byte{0x00, 0x00, 0x75, 0x30}, // RebalanceTimeoutMs 30000
			[]byte{0x08, 'u', 'n', 'i', 'f', 'o', 'r', 'm'}, // ServerAssignor "uniform"
			[]byte{0x01},                          // 1 tagged field
			[]byte{0x00, 0x10},                    // tag 0 (ClassicMemberMetadata), size 16
			[]byte{0x01},                          //   presence of the nullable struct: 1
			[]byte{0x00, 0x00, 0xaf, 0xc8},        //   SessionTimeoutMs 45000
			[]byte{0x02},                          //   SupportedProtocols: 1 element
			[]byte{0x06, 'r', 'a', 'n', 'g', 'e'}, //     Name "range"
			[]byte{0x02, 0xab},                    //     Metadata [0xab]
			[]byte{0x00},                          //     no tagged fields
			[]byte{0x00},                          //   no tagged fields
		),
	}, {
		// Kafka writes a null ClassicMemberMetadata explicitly: the
		// schema's JSON null default is no default to its generator.
		name:     "ConsumerGroupMemberMetadata of a consumer-protocol member",
		key:      ConsumerGroupMemberMetadataKey("g1", "m1"),
		keyBytes: join([]byte{0x00, 0x05}, g1, m1),
		value: &ConsumerGroupMemberMetadataValue{
			InstanceID: strp("i"), ClientID: "c", ClientHost: "h",
			SubscribedTopicNames: []string{}, SubscribedTopicRegex: strp("t.*"),
			RebalanceTimeoutMs: -1,
		},
		valueBytes: join(
			[]byte{0x00, 0x00},             // version 0
			[]byte{0x02, 'i'},              // InstanceId "i"
			[]byte{0x00},                   // RackId null
			[]byte{0x02, 'c'},              // ClientId "c"
			[]byte{0x02, 'h'},              // ClientHost "h"
			[]byte{0x01},                   // SubscribedTopicNames: empty
			[]byte{0x04, 't', '.', '*'},    // SubscribedTopicRegex "t.*"
			[]byte{0xff, 0xff, 0xff, 0xff}, // RebalanceTimeoutMs -1
			[]byte{0x00},                   // ServerAssignor null
			[]byte{0x01},                   // 1 tagged field
			[]byte{0x00, 0x01},             // tag 0 (ClassicMemberMetadata), size 1
			[]byte{0x00},                   //   presence 0: null
		),
	}, {
		name:     "ConsumerGroupTargetAssignmentMetadata",
		key:      ConsumerGroupTargetAssignmentMetadataKey("g1"),
		keyBytes: join([]byte{0x00, 0x06}, g1), // type 6
		value:    &ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: 7},
		valueBytes: join(
			[]byte{0x00, 0x00},             // version 0
			[]byte{0x00, 0x00, 0x00, 0x07}, // AssignmentEpoch 7
			[]byte{0x00},                   // no tagged fields (AssignmentTimestamp 0 is the default)
		),
	}, {
		name:     "ConsumerGroupTargetAssignmentMember",
		key:      ConsumerGroupTargetAssignmentMemberKey("g1", "m1"),
		keyBytes: join([]byte{0x00, 0x07}, g1, m1), // type 7
		value: &ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: []TopicPartitions{{
			TopicID: topicID, Partitions: []int32{0, 2},
		}}},
		valueBytes: join(
			[]byte{0x00, 0x00}, // version 0
			[]byte{0x02},       // TopicPartitions: 1 element
			uuidBytes,          //   TopicId
			[]byte{0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02}, // Partitions [0, 2]
			[]byte{0x00}, //   no tagged fields
			[]byte{0x00}, // no tagged fields
		),
	}, {
		name:     "ConsumerGroupCurrentMemberAssignment with AssignmentEpochs",
		key:      ConsumerGroupCurrentMemberAssignmentKey("g1", "m1"),
		keyBytes: join([]byte{0x00, 0x08}, g1, m1), // type 8
		value: &ConsumerGroupCurrentMemberAssignmentValue{
			MemberEpoch: 10, PreviousMemberEpoch: 9, State: 0,
			AssignedPartitions: []AssignedTopicPartitions{{
				TopicID: topicID, Partitions: []int32{1}, AssignmentEpochs: []int32{10},
			}},
			PartitionsPendingRevocation: []AssignedTopicPartitions{},
		},
		valueBytes: join(
			[]byte{0x00, 0x00},                   // version 0
			[]byte{0x00, 0x00, 0x00, 0x0a},       // MemberEpoch 10
			[]byte{0x00, 0x00, 0x00, 0x09},       // PreviousMemberEpoch 9
			[]byte{0x00},                         // State 0 (STABLE)
			[]byte{0x02},                         // AssignedPartitions: 1 element
			uuidBytes,                            //   TopicId
			[]byte{0x02, 0x00, 0x00, 0x00, 0x01}, //   Partitions [1]
			[]byte{0x01},                         //   1 tagged field
			[]byte{0x00, 0x05},                   //   tag 0 (AssignmentEpochs), size 5
			[]byte{0x02, 0x00, 0x00, 0x00, 0x0a}, //     [10]
			[]byte{0x01},                         // PartitionsPendingRevocation: empty
			[]byte{0x00},                         // no tagged fields
		),
	}, {
		name:     "ShareGroupPartitionMetadata (Kafka 4.0)",
		key:      ShareGroupPartitionMetadataKey("g1"),
		keyBytes: join([]byte{0x00, 0x09}, g1), // type 9
		value:    &ShareGroupPartitionMetadataValue{Topics: []TopicMetadata{}},
		valueBytes: join(
			[]byte{0x00, 0x00}, // version 0
			[]byte{0x01},       // Topics: empty
			[]byte{0x00},       // no tagged fields
		),
	}, {
		name:     "ShareGroupMemberMetadata",
		key:      ShareGroupMemberMetadataKey("g1", "m1"),
		keyBytes: join([]byte{0x00, 0x0a}, g1, m1), // type 10
		value: &ShareGroupMemberMetadataValue{
			ClientID: "c", ClientHost: "h", SubscribedTopicNames: []string{"t"},
		},
		valueBytes: join(
			[]byte{0x00, 0x00},      // version 0
			[]byte{0x00},            // RackId null
			[]byte{0x02, 'c'},       // ClientId "c"
			[]byte{0x02, 'h'},       // ClientHost "h"
			[]byte{0x02, 0x02, 't'}, // SubscribedTopicNames ["t"]
			[]byte{0x00},            // no tagged fields
		),
	}, {
		name:     "ShareGroupMetadata",
		key:      ShareGroupMetadataKey("g1"),
		keyBytes: join([]byte{0x00, 0x0b}, g1), // type 11
		value:    &ShareGroupMetadataValue{Epoch: 3, MetadataHash: 0x0a0b0c0d0e0f1011},
		valueBytes: join(
			[]byte{0x00, 0x00},                                     // version 0
			[]byte{0x00, 0x00, 0x00, 0x03},                         // Epoch 3
			[]byte{0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11}, // MetadataHash (untagged)
			[]byte{0x00}, // no tagged fields
		),
	}, {
		name:     "ShareGroupTargetAssignmentMetadata",
		key:      ShareGroupTargetAssignmentMetadataKey("g1"),
		keyBytes: join([]byte{0x00, 0x0c}, g1), // type 12
		value:    &ShareGroupTargetAssignmentMetadataValue{AssignmentEpoch: 3},
		valueBytes: join(
			[]byte{0x00, 0x00},             // version 0
			[]byte{0x00, 0x00, 0x00, 0x03}, // AssignmentEpoch 3
			[]byte{0x00},                   // no tagged fields
		),
	}, {
		name:     "ShareGroupTargetAssignmentMember",
		key:      ShareGroupTargetAssignmentMemberKey("g1", "m1"),
		keyBytes: join([]byte{0x00, 0x0d}, g1, m1), // type 13
		value: &ShareGroupTargetAssignmentMemberValue{TopicPartitions: []TopicPartitions{{
			TopicID: topicID, Partitions: []int32{},
		}}},
		valueBytes: join(
			[]byte{0x00, 0x00}, // version 0
			[]byte{0x02},       // TopicPartitions: 1 element
			uuidBytes,          //   TopicId
			[]byte{0x01},       //   Partitions: empty
			[]byte{0x00},       //   no tagged fields
			[]byte{0x00},       // no tagged fields
		),
	}, {
		name:     "ShareGroupCurrentMemberAssignment",
		key:      ShareGroupCurrentMemberAssignmentKey("g1", "m1"),
		keyBytes: join([]byte{0x00, 0x0e}, g1, m1), // type 14
		value: &ShareGroupCurrentMemberAssignmentValue{
			MemberEpoch: 2, PreviousMemberEpoch: 1, State: 0,
			AssignedPartitions: []TopicPartitions{{TopicID: topicID, Partitions: []int32{0}}},
		},
		valueBytes: join(
			[]byte{0x00, 0x00},                   // version 0
			[]byte{0x00, 0x00, 0x00, 0x02},       // MemberEpoch 2
			[]byte{0x00, 0x00, 0x00, 0x01},       // PreviousMemberEpoch 1
			[]byte{0x00},                         // State 0
			[]byte{0x02},                         // AssignedPartitions: 1 element
			uuidBytes,                            //   TopicId
			[]byte{0x02, 0x00, 0x00, 0x00, 0x00}, //   Partitions [0]
			[]byte{0x00},                         //   no tagged fields
			[]byte{0x00},                         // no tagged fields
		),
	}, {
		name:     "ShareGroupStatePartitionMetadata",
		key:      ShareGroupStatePartitionMetadataKey("g1"),
		keyBytes: join([]byte{0x00, 0x0f}, g1), // type 15
		value: &ShareGroupStatePartitionMetadataValue{
			InitializingTopics: []TopicPartitionsInfo{},
			InitializedTopics:  []TopicPartitionsInfo{{TopicID: topicID, TopicName: "t", Partitions: []int32{0}}},
			DeletingTopics:     []TopicInfo{{TopicID: topicID, TopicName: "d"}},
		},
		valueBytes: join(
			[]byte{0x00, 0x00},                   // version 0
			[]byte{0x01},                         // InitializingTopics: empty
			[]byte{0x02},                         // InitializedTopics: 1 element
			uuidBytes,                            //   TopicId
			[]byte{0x02, 't'},                    //   TopicName "t"
			[]byte{0x02, 0x00, 0x00, 0x00, 0x00}, //   Partitions [0]
			[]byte{0x00},                         //   no tagged fields
			[]byte{0x02},                         // DeletingTopics: 1 element
			uuidBytes,                            //   TopicId
			[]byte{0x02, 'd'},                    //   TopicName "d"
			[]byte{0x00},                         //   no tagged fields
			[]byte{0x00},                         // no tagged fields
		),
	}, {
		name:     "ConsumerGroupRegularExpression",
		key:      ConsumerGroupRegularExpressionKey("g1", "a.*"),
		keyBytes: join([]byte{0x00, 0x10}, g1, []byte{0x00, 0x03, 'a', '.', '*'}), // type 16, GroupId, RegularExpression
		value: &ConsumerGroupRegularExpressionValue{
			Topics: []string{"a1", "a2"}, Version: 42, Timestamp: 1000,
		},
		valueBytes: join(
			[]byte{0x00, 0x00},                                     // version 0
			[]byte{0x03, 0x03, 'a', '1', 0x03, 'a', '2'},           // Topics ["a1", "a2"]
			[]byte{0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a}, // Version 42
			[]byte{0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8}, // Timestamp 1000
			[]byte{0x00}, // no tagged fields
		),
	}}
}

// TestGolden encodes each golden record and compares it with the bytes
// worked out by hand, then decodes those bytes back to the same record.
func TestGolden(t *testing.T) {
	seen := map[RecordType]bool{}
	for _, g := range goldens() {
		t.Run(g.name, func(t *testing.T) {
			seen[g.key.Type] = true
			if got := g.key.AppendTo(nil); !bytes.Equal(got, g.keyBytes) {
				t.Errorf("key bytes\n got %x\nwant %x", got, g.keyBytes)
			}
			if got := g.value.AppendTo(nil); !bytes.Equal(got, g.valueBytes) {
				t.Errorf("value bytes\n got %x\nwant %x", got, g.valueBytes)
			}

			var k Key
			if err := k.ReadFrom(g.keyBytes); err != nil {
				t.Fatalf("decoding the key: %v", err)
			}
			if k != g.key {
				t.Errorf("decoded key %+v, want %+v", k, g.key)
			}
			v, err := NewValue(k.Type)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.ReadFrom(g.valueBytes); err != nil {
				t.Fatalf("decoding the value: %v", err)
			}
			if !reflect.DeepEqual(v, g.value) {
				t.Errorf("decoded value\n got %+v\nwant %+v", v, g.value)
			}
		})
	}
	for typ := TypeConsumerGroupMetadata; typ <= TypeConsumerGroupRegularExpression; typ++ {
		if !seen[typ] {
			t.Errorf("no golden record of type %d (%s)", typ, typ)
		}
	}
}
