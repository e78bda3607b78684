package storage

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// TestCreateCloneLog: a clone holds the source's batches below the point
// byte for byte, shares its closed segments as hard links (on the OS and on
// MemFS, whose links behave alike), takes appends of its own at the point,
// and neither its appends nor its deletion change the source.
func TestCreateCloneLog(t *testing.T) {
	for _, linked := range []bool{true, false} {
		t.Run(map[bool]string{true: "os", false: "mem"}[linked], func(t *testing.T) {
			e := newManagerEnv(t)
			o := ManagerOptions{FS: e.fs, Clock: e.clock, Scheduler: InlineScheduler{}, DefaultConfig: e.cfg}
			dir := "/kafka-logs"
			if linked {
				o.FS, dir = vfs.OS{}, t.TempDir()
			}
			m, err := OpenManager(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			src, err := m.GetOrCreateLog(tpA, idA, e.cfg)
			if err != nil {
				t.Fatal(err)
			}
			e.produce(src, 30) // 2048-byte segments: several closed ones
			if len(src.Segments()) < 3 {
				t.Fatalf("source has %d segments, want several", len(src.Segments()))
			}
			const point = 40 // mid-way into the log, a batch boundary (2 records a batch)
			before := readAll(t, src, 0, FetchLogEnd)
			tpC, idC := TopicPartition{"orders-drill", 0}, TopicID{9}
			c, err := m.CreateCloneLog(tpC, idC, e.cfg, CloneSource{TP: tpA, ID: idA, UpTo: point})
			if err != nil {
				t.Fatal(err)
			}
			if c.LogEndOffset() != point || c.TopicID() != idC {
				t.Fatalf("clone: log end %d, topic id %v; want %d, %v", c.LogEndOffset(), c.TopicID(), point, idC)
			}
			got := readAll(t, c, 0, FetchLogEnd)
			var want []record.Batch
			for _, b := range before {
				if b.LastOffset() < point {
					want = append(want, b)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("clone has %d batches, want %d", len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("batch %d differs", i)
				}
			}
			if e, ok := c.epochs.LatestEpoch(); !ok || e != 1 {
				t.Fatalf("clone's latest epoch %d (%v), want 1", e, ok)
			}
			if linkedLogFiles(t, o.FS, filepath.Join(dir, tpC.String())) == 0 {
				t.Fatal("no segment shared as a hard link")
			}
			e.produce(c, 3)
			if err := m.DeleteLog(tpC); err != nil {
				t.Fatal(err)
			}
			after := readAll(t, src, 0, FetchLogEnd)
			if len(after) != len(before) {
				t.Fatalf("source has %d batches after the clone's life, had %d", len(after), len(before))
			}
			for i := range before {
				if !bytes.Equal(after[i], before[i]) {
					t.Fatalf("source batch %d changed", i)
				}
			}
		})
	}
}

// TestCloneProducerState: the clone's producer state is the source's at
// the clone point although its recovery replays only its last segment
// (from the copied snapshot at that segment's base): an idempotent
// producer's last sequence is the one below the point, and the next
// sequence appends while a repeat is a duplicate.
func TestCloneProducerState(t *testing.T) {
	e := newManagerEnv(t)
	m := e.open()
	defer m.Close()
	src, err := m.GetOrCreateLog(tpA, idA, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	te := &testEnv{t: t, clock: e.clock, comp: record.NewCompressor()}
	idem := func(seq int32) []byte {
		return te.batch(record.BatchSpec{ProducerID: 7, ProducerEpoch: 0, BaseSequence: seq, PartitionLeaderEpoch: 1}, 2, 200)
	}
	for seq := int32(0); seq < 60; seq += 2 { // 2048-byte segments: several
		if _, err := src.AppendAsLeader(idem(seq), 1, record.OriginClient); err != nil {
			t.Fatal(err)
		}
	}
	point := src.segs()[len(src.segs())-2].BaseOffset() + 2 // inside a closed segment: it is copied
	c, err := m.CreateCloneLog(TopicPartition{"orders-drill", 0}, TopicID{9}, e.cfg, CloneSource{TP: tpA, ID: idA, UpTo: point})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.ActiveProducers()
	if err != nil || len(ps) != 1 || ps[0].ProducerID != 7 || ps[0].LastSequence != int32(point)-1 {
		t.Fatalf("clone producers %+v (%v), want producer 7 at last sequence %d", ps, err, point-1)
	}
	if info, err := c.AppendAsLeader(idem(int32(point)-2), 1, record.OriginClient); err != nil || !info.Duplicate {
		t.Fatalf("repeat of the last batch below the point: %+v, %v; want a duplicate", info, err)
	}
	if info, err := c.AppendAsLeader(idem(int32(point)), 1, record.OriginClient); err != nil || info.FirstOffset != point {
		t.Fatalf("the next sequence: %+v, %v; want appended at %d", info, err, point)
	}
}
