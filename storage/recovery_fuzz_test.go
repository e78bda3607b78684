package storage

import (
	"bytes"
	"testing"

	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// FuzzRecoverSegment writes two valid batches followed by arbitrary bytes as
// a segment file and recovers it. Invariants: Open never fails or panics on
// a crash-shaped disk; the two valid batches always survive byte for byte;
// everything kept is whole, CRC-valid batches in increasing offset order;
// recovery reports exactly the bytes it cut; a second recovery changes
// nothing.
func FuzzRecoverSegment(f *testing.F) {
	e := newTestEnv(f)
	first := e.batch(record.BatchSpec{PartitionLeaderEpoch: 1}, 2, 10)
	second := e.batch(record.BatchSpec{BaseOffset: 2, PartitionLeaderEpoch: 1, ProducerID: 5, ProducerEpoch: 0, BaseSequence: 0}, 3, 10)
	third := e.batch(record.BatchSpec{BaseOffset: 5, PartitionLeaderEpoch: 2}, 1, 10)
	f.Add([]byte{})
	f.Add(bytes.Clone(third))
	f.Add(third[:40])
	f.Add(append(bytes.Clone(third), 0, 0, 0))
	flipped := bytes.Clone(third)
	flipped[len(flipped)-1] ^= 1
	f.Add(flipped)
	f.Add(bytes.Clone(first)) // offsets going backwards
	f.Add([]byte(record.MirrorPidResetBatch(record.ControlBatchSpec{ProducerID: -1, ProducerEpoch: -1, PartitionLeaderEpoch: 3})))
	prefix := append(bytes.Clone(first), second...)

	f.Fuzz(func(t *testing.T, tail []byte) {
		fsys := vfs.NewMem()
		dir := "/d/t-0"
		if err := vfs.MkdirAllDurable(fsys, dir); err != nil {
			t.Fatal(err)
		}
		data := append(bytes.Clone(prefix), tail...)
		if err := vfs.WriteFileAtomic(fsys, dir, "00000000000000000000.log", data); err != nil {
			t.Fatal(err)
		}
		env := newTestEnv(t)
		env.fs, env.dir = fsys, dir
		l, rep, err := Open(dir, env.options(false))
		if err != nil {
			t.Fatalf("recovery failed: %v", err)
		}
		if rep.LogEndOffset < 5 {
			t.Fatalf("valid prefix lost: %v", rep)
		}
		got := readAll(t, l, 0, FetchLogEnd)
		var kept int
		prev := int64(-1)
		for i, b := range got {
			if !b.ValidCRC() || b.BaseOffset() <= prev {
				t.Fatalf("batch %d kept invalid: %s", i, describeBatch(b))
			}
			prev = b.LastOffset()
			kept += len(b)
		}
		if !bytes.Equal(data[:len(prefix)], prefix) || kept < len(prefix) {
			t.Fatalf("prefix not kept: %d bytes", kept)
		}
		if int64(kept)+rep.TruncatedBytes != int64(len(data)) {
			t.Fatalf("kept %d + truncated %d != %d written", kept, rep.TruncatedBytes, len(data))
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		_, rep2, err := Open(dir, env.options(false))
		if err != nil || rep2.Lost() || rep2.LogEndOffset != rep.LogEndOffset {
			t.Fatalf("second recovery: %v %v", rep2, err)
		}
	})
}
