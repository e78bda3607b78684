package records

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
)

// TestUnknownTaggedFields decodes values carrying tagged fields a newer
// Kafka would write: they are kept, and written back in tag order among
// the known ones.
func TestUnknownTaggedFields(t *testing.T) {
	b := join(
		[]byte{0x00, 0x00},                            // version 0
		[]byte{0x00, 0x00, 0x00, 0x05},                // Epoch 5
		[]byte{0x03},                                  // 3 tagged fields
		[]byte{0x00, 0x08, 0, 0, 0, 0, 0, 0, 0, 0x07}, // tag 0 MetadataHash 7
		[]byte{0x02, 0x02, 0xca, 0xfe},                // tag 2: unknown, 2 bytes
		[]byte{0x7f, 0x00},                            // tag 127: unknown, empty
	)
	var v ConsumerGroupMetadataValue
	if err := v.ReadFrom(b); err != nil {
		t.Fatal(err)
	}
	if v.Epoch != 5 || v.MetadataHash != 7 || v.CreationTimeMs != -1 {
		t.Errorf("decoded %+v", v)
	}
	got := map[uint32][]byte{}
	v.UnknownTags.Each(func(tag uint32, body []byte) { got[tag] = body })
	if want := map[uint32][]byte{2: {0xca, 0xfe}, 127: {}}; !reflect.DeepEqual(got, want) {
		t.Errorf("unknown tags %v, want %v", got, want)
	}
	if again := v.AppendTo(nil); !bytes.Equal(again, b) {
		t.Errorf("re-encoded\n%x\nwant\n%x", again, b)
	}

	// An unknown tag in a nested struct, and a known tag in a struct that
	// declares none there (tag 0 of TopicPartitions is the consumer
	// group's AssignmentEpochs, not the share group's): kept as unknown.
	nested := join(
		[]byte{0x00, 0x00}, // version 0
		[]byte{0x02},       // TopicPartitions: 1 element
		uuidBytes,
		[]byte{0x01},                         // Partitions: empty
		[]byte{0x01, 0x00, 0x02, 0x01, 0x00}, // 1 tagged field: tag 0, 2 bytes
		[]byte{0x00},
	)
	var tm ShareGroupTargetAssignmentMemberValue
	if err := tm.ReadFrom(nested); err != nil {
		t.Fatal(err)
	}
	if n := tm.TopicPartitions[0].UnknownTags.Len(); n != 1 {
		t.Errorf("%d unknown tags in the topic, want 1", n)
	}
	if again := tm.AppendTo(nil); !bytes.Equal(again, nested) {
		t.Errorf("re-encoded\n%x\nwant\n%x", again, nested)
	}
}

// TestTagOrder: tagged fields go out in ascending tag order, known and
// unknown merged, as Kafka's generated code writes them.
func TestTagOrder(t *testing.T) {
	v := ConsumerGroupMetadataValue{Epoch: 1, CreationTimeMs: 5, UnknownTags: unknownTags(0, 3)}
	want := join(
		[]byte{0x00, 0x00},                         // version 0
		[]byte{0x00, 0x00, 0x00, 0x01},             // Epoch 1
		[]byte{0x03},                               // 3 tagged fields
		[]byte{0x00, 0x02, 0x00, 0xff},             // tag 0 (unknown here, as MetadataHash is at its default)
		[]byte{0x01, 0x08, 0, 0, 0, 0, 0, 0, 0, 5}, // tag 1 CreationTimeMs 5
		[]byte{0x03, 0x02, 0x03, 0xff},             // tag 3 (unknown)
	)
	if got := v.AppendTo(nil); !bytes.Equal(got, want) {
		t.Errorf("encoded\n%x\nwant\n%x", got, want)
	}
	// A known field wins over an unknown tag of its number.
	v.MetadataHash = 9
	if got := v.AppendTo(nil); !bytes.Equal(got[7:18], []byte{0x00, 0x08, 0, 0, 0, 0, 0, 0, 0, 9, 0x01}) || got[6] != 3 {
		t.Errorf("encoded %x, want MetadataHash 9 as tag 0 and the unknown tag 0 dropped", got)
	}
}

// TestKafkaDefaults: the two tagged fields whose schema default is a JSON
// null, which Kafka's generator takes for no default (an empty struct or
// array): an absent tag reads as that empty default, and the empty default
// is left out when written.
func TestKafkaDefaults(t *testing.T) {
	// ConsumerGroupMemberMetadataValue without tag 0, as written for an
	// empty ClassicMemberMetadata: an empty struct, not nil.
	noTag := []byte{0, 0, 0x00, 0x00, 0x01, 0x01, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00}
	var m ConsumerGroupMemberMetadataValue
	if err := m.ReadFrom(noTag); err != nil {
		t.Fatal(err)
	}
	if m.ClassicMemberMetadata == nil || !m.ClassicMemberMetadata.isDefault() {
		t.Errorf("absent ClassicMemberMetadata read as %+v, want an empty struct", m.ClassicMemberMetadata)
	}
	if b := m.AppendTo(nil); !bytes.Equal(b, noTag) {
		t.Errorf("an empty ClassicMemberMetadata is written as\n%x\nwant it left out:\n%x", b, noTag)
	}
	m.ClassicMemberMetadata = nil
	if b := m.AppendTo(nil); !bytes.Equal(b[len(b)-4:], []byte{0x01, 0x00, 0x01, 0x00}) {
		t.Errorf("a nil ClassicMemberMetadata is written as %x, want an explicit null tag 0", b)
	}

	// AssignmentEpochs: empty is left out; an explicit null or empty
	// array reads as nil.
	v := ConsumerGroupCurrentMemberAssignmentValue{
		AssignedPartitions:          []AssignedTopicPartitions{{TopicID: topicID, Partitions: []int32{}, AssignmentEpochs: []int32{}}},
		PartitionsPendingRevocation: []AssignedTopicPartitions{},
	}
	b := v.AppendTo(nil)
	if want := join(make([]byte, 11), []byte{0x02}, uuidBytes, []byte{0x01, 0x00, 0x01, 0x00}); !bytes.Equal(b, want) {
		t.Errorf("empty AssignmentEpochs written as\n%x\nwant\n%x", b, want)
	}
	for _, epochs := range [][]byte{{0x00}, {0x01}} { // null, empty
		rec := join(make([]byte, 11), []byte{0x02}, uuidBytes, []byte{0x01, 0x01, 0x00, 0x01}, epochs, []byte{0x01, 0x00})
		if err := v.ReadFrom(rec); err != nil {
			t.Fatal(err)
		}
		if e := v.AssignedPartitions[0].AssignmentEpochs; e != nil {
			t.Errorf("AssignmentEpochs %x read as %#v, want nil", epochs, e)
		}
	}
}

// TestTruncated decodes every strict prefix of every golden and round-trip
// record: an error each time, and no panic.
func TestTruncated(t *testing.T) {
	check := func(name string, full []byte, decode func([]byte) error) {
		for n := range len(full) {
			if err := decode(full[:n]); err == nil {
				t.Errorf("%s: %d of %d bytes decoded without error", name, n, len(full))
			}
		}
	}
	for _, g := range goldens() {
		check(g.name+" key", g.keyBytes, func(b []byte) error { var k Key; return k.ReadFrom(b) })
		check(g.name+" value", g.valueBytes, func(b []byte) error {
			v, _ := NewValue(g.key.Type)
			return v.ReadFrom(b)
		})
	}
	for typ, values := range fullValues() {
		for _, v := range values {
			check(typ.String(), v.AppendTo(nil), func(b []byte) error {
				v, _ := NewValue(typ)
				return v.ReadFrom(b)
			})
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		typ   RecordType
		value []byte
		want  string // in the error
	}{
		{"unknown value version", TypeShareGroupMetadata, []byte{0x00, 0x01, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "unknown value version 1"},
		{"negative value version", TypeConsumerGroupMetadata, []byte{0xff, 0xff, 0, 0, 0, 1, 0}, "unknown value version -1"},
		{"no version", TypeConsumerGroupMetadata, []byte{0x00}, "has no version"},
		{"bytes after the value", TypeConsumerGroupMetadata, []byte{0, 0, 0, 0, 0, 5, 0, 0xaa}, "1 bytes left"},
		{"null non-nullable string", TypeShareGroupMemberMetadata, []byte{0, 0, 0x00, 0x00, 0x02, 'h', 0x01, 0x00}, "null for a non-nullable"},
		{"null non-nullable array", TypeConsumerGroupRegularExpression, []byte{0, 0, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00}, "null for a non-nullable"},
		{"array longer than the record", TypeConsumerGroupTargetAssignmentMember, []byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00}, "truncated"},
		{"tagged field larger than the record", TypeConsumerGroupMetadata, []byte{0, 0, 0, 0, 0, 5, 0x01, 0x00, 0x09, 0, 0, 0, 0, 0, 0, 0, 0}, "truncated"},
		{"known tagged field too short", TypeConsumerGroupMetadata, []byte{0, 0, 0, 0, 0, 5, 0x01, 0x00, 0x04, 0, 0, 0, 7}, "tagged field 0"},
		{"known tagged field too long", TypeConsumerGroupTargetAssignmentMetadata, join([]byte{0, 0, 0, 0, 0, 5, 0x01, 0x00, 0x09}, make([]byte, 9)), "tagged field 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := NewValue(tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			err = v.ReadFrom(tc.value)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}

	var v ConsumerGroupMetadataValue
	if err := v.ReadFrom([]byte{0x00, 0x01, 0, 0, 0, 1, 0}); !errors.Is(err, ErrUnknownValueVersion) {
		t.Errorf("value version 1: %v, want ErrUnknownValueVersion", err)
	}
	if err := v.ReadFrom([]byte{0x00, 0x00, 0, 0}); !errors.Is(err, kbin.ErrNotEnoughData) {
		t.Errorf("truncated value: %v, want kbin.ErrNotEnoughData", err)
	}
}

// TestUnknownRecordTypes: KeyType reads any type; Key and NewValue refuse,
// with ErrUnknownRecordType, the types this package does not decode, as
// Kafka's serde throws UnknownRecordTypeException for the loader to skip.
func TestUnknownRecordTypes(t *testing.T) {
	for _, typ := range []RecordType{TypeLegacyOffsetCommit, TypeOffsetCommit, TypeGroupMetadata, 17, 18, 23, 24, -1, 0x7fff} {
		key := append(kbin.AppendInt16(nil, int16(typ)), 0x00, 0x01, 'g')
		if got, err := KeyType(key); err != nil || got != typ {
			t.Errorf("KeyType(%x) = %d, %v", key, got, err)
		}
		var k Key
		if err := k.ReadFrom(key); !errors.Is(err, ErrUnknownRecordType) {
			t.Errorf("type %d: key error %v, want ErrUnknownRecordType", typ, err)
		}
		if _, err := NewValue(typ); !errors.Is(err, ErrUnknownRecordType) {
			t.Errorf("type %d: NewValue error %v, want ErrUnknownRecordType", typ, err)
		}
		if typ.Decodes() {
			t.Errorf("type %d claims to be decoded here", typ)
		}
	}
	for _, key := range [][]byte{nil, {0x00}} {
		if _, err := KeyType(key); !errors.Is(err, kbin.ErrNotEnoughData) {
			t.Errorf("KeyType(%x): %v, want a truncation error", key, err)
		}
	}
	if s := RecordType(17).String(); s != "StreamsGroupMetadata" {
		t.Errorf("type 17 is %q", s)
	}
	if s := RecordType(99).String(); s != "99" {
		t.Errorf("type 99 is %q", s)
	}
}

func TestBadKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  []byte
	}{
		{"null group", []byte{0x00, 0x03, 0xff, 0xff}},
		{"group longer than the key", []byte{0x00, 0x03, 0x00, 0x05, 'g'}},
		{"no member", []byte{0x00, 0x05, 0x00, 0x01, 'g'}},
		{"bytes after the key", []byte{0x00, 0x03, 0x00, 0x01, 'g', 0x00}},
	} {
		var k Key
		if err := k.ReadFrom(tc.key); err == nil {
			t.Errorf("%s: decoded %+v", tc.name, k)
		}
	}
}
