package state

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/storage/record"
)

// TestRecordLayoutGolden pins the bytes of __mirror_state records
// (records.go): a change is a format change and needs a new version.
func TestRecordLayoutGolden(t *testing.T) {
	k := Key{Mirror: "m1", TopicID: ordersID, Partition: 3}
	wantKey := "0000" + "0002" + hex.EncodeToString([]byte("m1")) + hex.EncodeToString(ordersID[:]) + "00000003"
	if got := hex.EncodeToString(encodeKey(k)); got != wantKey {
		t.Errorf("key = %s\nwant  %s", got, wantKey)
	}
	v := partition.Record{State: partition.StateFailed, StateEpoch: 7, LeaderEpoch: 12, LastMirrorEpoch: -1,
		LastMirrorOffset: 0x0102030405, ErrorMessage: "boom", RetryAttempt: 3, PrevState: partition.StateMirroring}
	wantValue := "0000" + "08" + "00000007" + "0000000c" + "ffffffff" + "0000000102030405" + "0004" + hex.EncodeToString([]byte("boom")) + "00000003" + "03"
	if got := hex.EncodeToString(encodeValue(v)); got != wantValue {
		t.Errorf("value = %s\nwant    %s", got, wantValue)
	}
	// No error message is a null string; a non-retryable failure keeps −1.
	v.ErrorMessage, v.RetryAttempt, v.PrevState = "", -1, partition.StateUnknown
	wantValue = "0000" + "08" + "00000007" + "0000000c" + "ffffffff" + "0000000102030405" + "ffff" + "ffffffff" + "ff"
	if got := hex.EncodeToString(encodeValue(v)); got != wantValue {
		t.Errorf("value = %s\nwant    %s", got, wantValue)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	keys := []Key{{"m1", ordersID, 0}, {"", [16]byte{}, -1}, {"ミラー.x_y-z", paymentsID, 1 << 30}}
	for _, k := range keys {
		got, err := decodeKey(encodeKey(k))
		if err != nil || got != k {
			t.Errorf("key %v: got %v, %v", k, got, err)
		}
	}
	values := []partition.Record{
		partition.EmptyRecord(),
		{State: partition.StatePreparing, StateEpoch: 1, LeaderEpoch: 0, LastMirrorEpoch: -1, LastMirrorOffset: -1, PrevState: partition.StateUnknown},
		{State: partition.StateStopping, StateEpoch: 1 << 30, LeaderEpoch: 1<<31 - 1, LastMirrorEpoch: 41, LastMirrorOffset: 1 << 62, PrevState: partition.StatePaused},
		{State: partition.StateFailed, StateEpoch: 3, LeaderEpoch: 2, LastMirrorEpoch: -1, LastMirrorOffset: -1, ErrorMessage: "source topic id changed", RetryAttempt: -1, PrevState: partition.StateMirroring},
	}
	for _, v := range values {
		got, err := decodeValue(encodeValue(v))
		if err != nil || got != v {
			t.Errorf("value %s: got %s, %v", v, got, err)
		}
	}
}

func TestRecordDecodeErrors(t *testing.T) {
	v := partition.Record{State: partition.StateMirroring, StateEpoch: 2, LeaderEpoch: 1, LastMirrorEpoch: -1, LastMirrorOffset: -1, ErrorMessage: "x", PrevState: partition.StatePreparing}
	b := encodeValue(v)
	// Every truncation fails rather than inventing fields.
	for n := 0; n < len(b); n++ {
		if _, err := decodeValue(b[:n]); err == nil {
			t.Errorf("value truncated to %d of %d bytes decoded", n, len(b))
		}
	}
	// Trailing bytes: an error at version 0, ignored at a later version
	// (later versions only append fields).
	if _, err := decodeValue(append(bytes.Clone(b), 0xaa)); err == nil {
		t.Error("v0 value with a trailing byte decoded")
	}
	v1 := append(bytes.Clone(b), 0xaa, 0xbb)
	v1[1] = 1
	if got, err := decodeValue(v1); err != nil || got != v {
		t.Errorf("v1 value: got %s, %v; want its v0 prefix %s", got, err, v)
	}
	neg := bytes.Clone(b)
	neg[0] = 0xff
	if _, err := decodeValue(neg); err == nil {
		t.Error("negative value version decoded")
	}
	k := encodeKey(Key{"m1", ordersID, 0})
	for n := 0; n < len(k); n++ {
		if _, err := decodeKey(k[:n]); err == nil {
			t.Errorf("key truncated to %d of %d bytes decoded", n, len(k))
		}
	}
	other := bytes.Clone(k)
	other[1] = 2
	if _, err := decodeKey(other); !errors.Is(err, errUnknownKeyVersion) {
		t.Errorf("key version 2: %v, want errUnknownKeyVersion", err)
	}
}

// TestLoadSkipsForeignRecords: records of key versions this coordinator
// does not read (the prototypes' older record types) and control batches
// are skipped on load; a corrupt value of our own type fails the load.
func TestLoadSkipsForeignRecords(t *testing.T) {
	w := newWorld(t)
	k := key(ordersID, 0)
	p := k.PartitionFor(testMirrorStatePartitions)
	own := encodeKey(k)
	val := encodeValue(rec(partition.StatePreparing, 5))
	foreign := []byte{0x00, 0x02, 0x00, 0x02, 'm', '1'} // Gen A MirrorPartitionStateKey{MirrorName}
	w.log.appendRaw(p, []record.Record{
		{Key: foreign, KeyLen: int32(len(foreign)), Value: []byte{1, 2, 3}, ValueLen: 3},
		{Key: own, KeyLen: int32(len(own)), Value: val, ValueLen: int32(len(val))},
	})
	ctrl := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: 1}, true, 0)
	w.log.mu.Lock()
	mp := w.log.part(p)
	ctrl.SetBaseOffset(mp.next)
	mp.batches = append(mp.batches, ctrl)
	mp.next = ctrl.NextOffset()
	w.log.mu.Unlock()

	w.electAll(1)
	got, found, err := w.c.ReadState(k)
	if err != nil || !found || got.State != partition.StatePreparing || got.LeaderEpoch != 5 {
		t.Fatalf("ReadState = %s, %v, %v", got, found, err)
	}
	if n := len(w.view()); n != 1 {
		t.Fatalf("%d records loaded, want 1", n)
	}

	// A value our key version cannot decode is corruption: the shard does
	// not serve (NOT_COORDINATOR) rather than serve a wrong view.
	w.log.appendRaw(p, []record.Record{{Key: own, KeyLen: int32(len(own)), Value: []byte{0, 0, 3}, ValueLen: 3}})
	w.c.OnElection(p, 2)
	w.waitShard(p, shardClosed)
	if _, _, err := w.c.ReadState(k); !isCode(err, codeNotCoordinator) {
		t.Fatalf("after a corrupt load: %v, want NOT_COORDINATOR", err)
	}
}
