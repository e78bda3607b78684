package producer

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/vfs"
)

// kafkaSnapshot is a ProducerSnapshot v1 file built by hand from Kafka's
// schema (ProducerSnapshot.json). Its CRC was computed with an independent
// bit-by-bit CRC-32C (polynomial 0x82F63B78) over bytes 6..end.
var kafkaSnapshot = mustHex("" +
	"0001" + // Version 1
	"021a3f93" + // Crc
	"00000002" + // 2 ProducerEntries
	// entry: an idempotent producer
	"0000000000000001" + // ProducerId 1
	"0002" + // Epoch 2
	"0000000a" + // LastSequence 10
	"0000000000000064" + // LastOffset 100
	"00000004" + // OffsetDelta 4
	"0000018bcfe56800" + // Timestamp 1700000000000
	"ffffffff" + // CoordinatorEpoch -1
	"ffffffffffffffff" + // CurrentTxnFirstOffset -1
	// entry: a producer with an open transaction and no retained batch
	"0000000000000007" + // ProducerId 7
	"0000" + // Epoch 0
	"ffffffff" + // LastSequence -1
	"ffffffffffffffff" + // LastOffset -1
	"00000000" + // OffsetDelta 0
	"0000000000000005" + // Timestamp 5
	"00000003" + // CoordinatorEpoch 3
	"000000000000002a") // CurrentTxnFirstOffset 42

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

var kafkaSnapshotEntries = []Entry{
	{
		ProducerID: 1, ProducerEpoch: 2, CoordinatorEpoch: -1, LastTimestamp: 1700000000000, CurrentTxnFirstOffset: -1,
		Batches: []BatchMetadata{{LastSeq: 10, LastOffset: 100, OffsetDelta: 4, Timestamp: 1700000000000}},
	},
	{ProducerID: 7, ProducerEpoch: 0, CoordinatorEpoch: 3, LastTimestamp: 5, CurrentTxnFirstOffset: 42},
}

func TestSnapshotDecodeKafkaBytes(t *testing.T) {
	got, err := DecodeSnapshot(kafkaSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, kafkaSnapshotEntries) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, kafkaSnapshotEntries)
	}
	if first := got[0].Batches[0].FirstSeq(); first != 6 {
		t.Fatalf("first sequence %d, want 6", first)
	}
	if first := got[0].Batches[0].FirstOffset(); first != 96 {
		t.Fatalf("first offset %d, want 96", first)
	}
}

func TestSnapshotEncodeKafkaBytes(t *testing.T) {
	// Older batches are not part of the format: only the last one is kept.
	withHistory := kafkaSnapshotEntries[0].Clone()
	withHistory.Batches = append([]BatchMetadata{
		{LastSeq: 3, LastOffset: 40, OffsetDelta: 3, Timestamp: 1},
		{LastSeq: 5, LastOffset: 50, OffsetDelta: 1, Timestamp: 2},
	}, withHistory.Batches...)
	got := EncodeSnapshot([]Entry{withHistory, kafkaSnapshotEntries[1]})
	if !bytes.Equal(got, kafkaSnapshot) {
		t.Fatalf("encoded\n%x\nwant\n%x", got, kafkaSnapshot)
	}
}

// TestSnapshotManagerRoundTrip loads the hand-built file through the
// manager and takes a new snapshot: the manager writes the same bytes, with
// producers in id order.
func TestSnapshotManagerRoundTrip(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("/p"); err != nil {
		t.Fatal(err)
	}
	if err := vfs.WriteFileAtomic(fs, "/p", SnapshotFileName(101), kafkaSnapshot); err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(fs, "/p", DefaultConfig(), clock.NewManual(time.UnixMilli(0)))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.TruncateAndReload(0, 101, time.UnixMilli(1700000000000)); err != nil {
		t.Fatal(err)
	}
	if got := m.MapEndOffset(); got != 101 {
		t.Fatalf("map end %d, want 101", got)
	}
	if txns := m.OngoingTxns(); !reflect.DeepEqual(txns, []TxnMetadata{{ProducerID: 7, FirstOffset: 42, LastOffset: -1}}) {
		t.Fatalf("ongoing %v", txns)
	}
	m.UpdateMapEndOffset(200)
	if err := m.TakeSnapshot(); err != nil {
		t.Fatal(err)
	}
	got, err := vfs.ReadFile(fs, "/p/00000000000000000200.snapshot")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, kafkaSnapshot) {
		t.Fatalf("rewritten snapshot\n%x\nwant\n%x", got, kafkaSnapshot)
	}
}

func TestSnapshotDecodeCorrupt(t *testing.T) {
	flip := func(i int) []byte {
		b := bytes.Clone(kafkaSnapshot)
		b[i] ^= 0x01
		return b
	}
	withCount := func(n uint32) []byte {
		b := bytes.Clone(kafkaSnapshot)
		b[6], b[7], b[8], b[9] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		return b
	}
	cases := map[string][]byte{
		"empty":            {},
		"one byte":         {0},
		"version 0":        append([]byte{0, 0}, kafkaSnapshot[2:]...),
		"version 2":        append([]byte{0, 2}, kafkaSnapshot[2:]...),
		"header only":      kafkaSnapshot[:8],
		"truncated entry":  kafkaSnapshot[:len(kafkaSnapshot)-1],
		"trailing byte":    append(bytes.Clone(kafkaSnapshot), 0),
		"negative count":   withCount(0xffffffff),
		"count too large":  withCount(3),
		"count too small":  withCount(1),
		"flipped crc":      flip(3),
		"flipped entry":    flip(20),
		"flipped last":     flip(len(kafkaSnapshot) - 1),
		"zero entries crc": mustHex("0001" + "00000000" + "00000000"),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeSnapshot(data); !errors.Is(err, ErrCorruptSnapshot) {
				t.Fatalf("err = %v, want ErrCorruptSnapshot", err)
			}
		})
	}
	// An empty snapshot with the right CRC is valid.
	empty := EncodeSnapshot(nil)
	if want := mustHex("0001" + "48674bc7" + "00000000"); !bytes.Equal(empty, want) {
		t.Fatalf("empty snapshot %x, want %x", empty, want)
	}
	if got, err := DecodeSnapshot(empty); err != nil || len(got) != 0 {
		t.Fatalf("empty snapshot decoded to %v, %v", got, err)
	}
}

func TestSnapshotFileNames(t *testing.T) {
	if got := SnapshotFileName(42); got != "00000000000000000042.snapshot" {
		t.Fatalf("name %q", got)
	}
	for name, want := range map[string]int64{
		"00000000000000000042.snapshot": 42,
		"00000000000000000000.snapshot": 0,
		"9223372036854775807.snapshot":  9223372036854775807,
	} {
		if got, ok := ParseSnapshotFileName(name); !ok || got != want {
			t.Errorf("parse %q = %d, %v; want %d", name, got, ok, want)
		}
	}
	for _, name := range []string{
		".snapshot", "00000000000000000042.snapshot.tmp", "00000000000000000042.snapshot.deleted",
		"-0000000000000000042.snapshot", "+42.snapshot", "00000000000000000042.log", "abc.snapshot",
		"99999999999999999999.snapshot", "leader-epoch-checkpoint",
	} {
		if off, ok := ParseSnapshotFileName(name); ok {
			t.Errorf("parse %q = %d, want no match", name, off)
		}
	}
}
