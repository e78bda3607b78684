package share

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/strait-io/strait/raftmeta"
)

// unhex reads hex written with spaces and "|" between fields.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "").Replace(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var goldenKey = Key{GroupID: "g1", TopicID: raftmeta.Uuid{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, Partition: 5}

// The records are Kafka's byte for byte: the bytes below follow
// ShareSnapshotKey/Value and ShareUpdateKey/Value field by field, as
// Kafka's generated code writes them (int16 record type before a key,
// int16 version before a value, flexible values with compact arrays and
// tagged-field sections).
func TestRecordsGolden(t *testing.T) {
	batches := []StateBatch{
		{FirstOffset: 100, LastOffset: 109, DeliveryState: DeliveryStateAcknowledged, DeliveryCount: 1},
		{FirstOffset: 110, LastOffset: 110, DeliveryState: DeliveryStateAvailable, DeliveryCount: 3},
	}
	const batchesHex = `03 |
		0000000000000064 | 000000000000006d | 02 | 0001 | 00 |
		000000000000006e | 000000000000006e | 00 | 0003 | 00`
	for _, c := range []struct {
		name string
		got  []byte
		want string
	}{
		{"ShareSnapshotKey", EncodeKey(recordTypeSnapshot, goldenKey),
			`0000 | 0002 6731 | 000102030405060708090a0b0c0d0e0f | 00000005`},
		{"ShareUpdateKey", EncodeKey(recordTypeUpdate, goldenKey),
			`0001 | 0002 6731 | 000102030405060708090a0b0c0d0e0f | 00000005`},
		{"ShareSnapshotValue", SnapshotValue{
			SnapshotEpoch: 7, StateEpoch: 2, LeaderEpoch: 9, StartOffset: 100,
			CreateTimestamp: 1_700_000_000_000, WriteTimestamp: 1_700_000_000_500,
			StateBatches: batches, DeliveryCompleteCount: -1,
		}.Encode(),
			`0000 | 00000007 | 00000002 | 00000009 | 0000000000000064 |
			 0000018bcfe56800 | 0000018bcfe569f4 |` + batchesHex + `| 00`},
		{"ShareSnapshotValue with DeliveryCompleteCount", SnapshotValue{
			SnapshotEpoch: 0, StateEpoch: 0, LeaderEpoch: -1, StartOffset: -1,
			DeliveryCompleteCount: 300,
		}.Encode(),
			`0000 | 00000000 | 00000000 | ffffffff | ffffffffffffffff |
			 0000000000000000 | 0000000000000000 | 01 | 01 00 04 0000012c`},
		{"ShareUpdateValue", UpdateValue{
			SnapshotEpoch: 7, LeaderEpoch: 9, StartOffset: -1, StateBatches: batches, DeliveryCompleteCount: -1,
		}.Encode(),
			`0000 | 00000007 | 00000009 | ffffffffffffffff |` + batchesHex + `| 00`},
		{"ShareUpdateValue with DeliveryCompleteCount", UpdateValue{
			SnapshotEpoch: 1, LeaderEpoch: 2, StartOffset: 3, DeliveryCompleteCount: 4,
		}.Encode(),
			`0000 | 00000001 | 00000002 | 0000000000000003 | 01 | 01 00 04 00000004`},
	} {
		if want := unhex(t, c.want); !bytes.Equal(c.got, want) {
			t.Errorf("%s\n got %x\nwant %x", c.name, c.got, want)
		}
	}
}

// Every record decodes back to what was encoded, and a value with tagged
// fields it does not know decodes too, skipping them.
func TestRecordsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		k := Key{GroupID: strings.Repeat("g", rng.IntN(20)), TopicID: raftmeta.Uuid{byte(rng.Int())}, Partition: rng.Int32()}
		for _, typ := range []int16{recordTypeSnapshot, recordTypeUpdate} {
			gotTyp, gotKey, err := DecodeKey(EncodeKey(typ, k))
			if err != nil || gotTyp != typ || gotKey != k {
				t.Fatalf("key %v type %d: decoded %d %v %v", k, typ, gotTyp, gotKey, err)
			}
		}
		var bs []StateBatch
		for range rng.IntN(4) {
			bs = append(bs, StateBatch{rng.Int64(), rng.Int64(), int8(rng.IntN(5)), int16(rng.IntN(10))})
		}
		sv := SnapshotValue{rng.Int32(), rng.Int32(), rng.Int32(), rng.Int64(), rng.Int64(), rng.Int64(), bs, rng.Int32N(3) - 1}
		if got, err := DecodeSnapshotValue(sv.Encode()); err != nil || !reflect.DeepEqual(got, sv) {
			t.Fatalf("snapshot %+v decoded %+v, %v", sv, got, err)
		}
		uv := UpdateValue{rng.Int32(), rng.Int32(), rng.Int64(), bs, rng.Int32N(3) - 1}
		if got, err := DecodeUpdateValue(uv.Encode()); err != nil || !reflect.DeepEqual(got, uv) {
			t.Fatalf("update %+v decoded %+v, %v", uv, got, err)
		}
	}
	// A later writer's unknown tag 7 next to DeliveryCompleteCount.
	b := UpdateValue{SnapshotEpoch: 1, LeaderEpoch: 2, StartOffset: 3, DeliveryCompleteCount: -1}.Encode()
	b = append(b[:len(b)-1], unhex(t, "02 | 00 04 00000009 | 07 02 abcd")...)
	got, err := DecodeUpdateValue(b)
	if err != nil || got.DeliveryCompleteCount != 9 || got.StartOffset != 3 {
		t.Fatalf("decoded %+v, %v", got, err)
	}
}

// Bad bytes are errors, never panics; other record types and versions are
// errUnknownRecord, which loading skips.
func TestRecordsBadInput(t *testing.T) {
	if _, _, err := DecodeKey(unhex(t, "0005 0002 6731")); !errors.Is(err, errUnknownRecord) {
		t.Errorf("key of type 5: %v, want errUnknownRecord", err)
	}
	if _, err := DecodeSnapshotValue(unhex(t, "0001 00000000")); !errors.Is(err, errUnknownRecord) {
		t.Errorf("value version 1: %v, want errUnknownRecord", err)
	}
	full := SnapshotValue{StateBatches: []StateBatch{{1, 2, 0, 1}}, DeliveryCompleteCount: 5}.Encode()
	for n := range len(full) {
		if _, err := DecodeSnapshotValue(full[:n]); err == nil {
			t.Errorf("a snapshot value cut to %d of %d bytes decoded", n, len(full))
		}
	}
	if _, err := DecodeSnapshotValue(append(full, 0)); err == nil {
		t.Error("a snapshot value with a trailing byte decoded")
	}
	// An array length far past the input.
	huge := unhex(t, "0000 00000000 00000000 0000000000000000 ffffffff0f")
	if _, err := DecodeUpdateValue(huge); err == nil {
		t.Error("an update value with a huge array length decoded")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		junk := make([]byte, rng.IntN(64))
		for i := range junk {
			junk[i] = byte(rng.Int())
		}
		DecodeKey(junk)
		DecodeSnapshotValue(junk)
		DecodeUpdateValue(junk)
	}
}

func TestParseKey(t *testing.T) {
	id := goldenKey.TopicID.String()
	for _, c := range []struct {
		in   string
		want Key
		ok   bool
	}{
		{"g1:" + id + ":5", goldenKey, true},
		{" g1 :" + id + ":5", goldenKey, true},
		{"g1:" + id + "==:5", goldenKey, true},
		{"g1:" + id + ":+5", goldenKey, true},
		{"g1:" + id + ":5:", goldenKey, true}, // Java's split drops trailing empty fields
		{"", Key{}, false},
		{" :" + id + ":5", Key{}, false},
		{"g1:" + id, Key{}, false},
		{"g1:" + id + ":5:6", Key{}, false},
		{"g1:nope:5", Key{}, false},
		{"g1:" + id + ":x", Key{}, false},
		{"g1:" + id + ":2147483648", Key{}, false},
	} {
		got, err := ParseKey(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseKey(%q) = %v, %v; want %v, ok %t", c.in, got, err, c.want, c.ok)
		}
	}
	if s := goldenKey.String(); s != "g1:AAECAwQFBgcICQoLDA0ODw:5" {
		t.Errorf("coordinator key %q", s)
	}
}

// The partition of a share-partition is Kafka's: Utils.abs of the Java
// String.hashCode of the coordinator key, modulo the partition count. The
// expected partitions were computed outside Go with Java's hash.
func TestPartitionFor(t *testing.T) {
	for _, c := range []struct {
		key     string
		n, want int32
	}{
		{"g1:AAECAwQFBgcICQoLDA0ODw:5", 50, 49}, // hashCode -2133911399
		{"g1:AAECAwQFBgcICQoLDA0ODw:5", 3, 2},
		{"my-share-group:AAAAAAAAAAAAAAAAAAAAAQ:0", 50, 18}, // hashCode -129095568
		{"orders:3q2-7wAAAAAAAAAAAAAAAA:17", 50, 2},         // hashCode -1240065102
	} {
		k, err := ParseKey(c.key)
		if err != nil {
			t.Fatal(err)
		}
		if got := PartitionFor(k, c.n); got != c.want {
			t.Errorf("PartitionFor(%s, %d) = %d, want %d", c.key, c.n, got, c.want)
		}
	}
}
