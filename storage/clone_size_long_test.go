//go:build long

package storage

import (
	"testing"
	"time"

	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// TestCloneOfOneGiB measures CreateCloneLog on a 1 GiB log of idempotent
// 16 KiB batches on the OS filesystem, with 1 GiB segments (Kafka's
// default), 128 MiB ones (closed segments linked with their indexes) and
// 2 GiB ones (the whole log in the segment holding the clone point, which
// is copied and recovered: the worst case, bounded by segment.bytes). It
// reports the times; it asserts only that the clone holds the whole log.
func TestCloneOfOneGiB(t *testing.T) {
	for _, segBytes := range []int32{1 << 30, 128 << 20, 2<<30 - 1} {
		e := newManagerEnv(t)
		e.cfg.SegmentBytes = segBytes
		m, err := OpenManager(t.TempDir(), ManagerOptions{FS: vfs.OS{}, Clock: e.clock, Scheduler: InlineScheduler{}, DefaultConfig: e.cfg})
		if err != nil {
			t.Fatal(err)
		}
		src, err := m.GetOrCreateLog(tpA, idA, e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		te := &testEnv{t: t, clock: e.clock, comp: record.NewCompressor()}
		const perBatch, valueSize = 16, 1 << 10
		var seq int32
		for src.LogEndOffset()*valueSize < 1<<30 {
			b := te.batch(record.BatchSpec{ProducerID: 7, ProducerEpoch: 0, BaseSequence: seq, PartitionLeaderEpoch: 1}, perBatch, valueSize)
			if _, err := src.AppendAsLeader(b, 1, record.OriginClient); err != nil {
				t.Fatal(err)
			}
			seq += perBatch
		}
		point := src.LogEndOffset()
		begin := time.Now()
		c, err := m.CreateCloneLog(TopicPartition{"orders-drill", 0}, TopicID{9}, e.cfg, CloneSource{TP: tpA, ID: idA, UpTo: point})
		took := time.Since(begin)
		if err != nil {
			t.Fatal(err)
		}
		if c.LogEndOffset() != point {
			t.Fatalf("clone ends at %d, want %d", c.LogEndOffset(), point)
		}
		t.Logf("segment.bytes=%d: %d segments, %d records: CreateCloneLog took %v", segBytes, len(src.segs()), point, took)
		m.Close()
	}
}
