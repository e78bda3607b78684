package storage

import (
	"errors"
	"testing"

	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// batchesIn decodes the whole batches of a read.
func batchesIn(t *testing.T, fd FetchDataInfo) []record.Batch {
	t.Helper()
	buf := make([]byte, fd.Records.Size)
	if err := fd.Records.ReadInto(buf); err != nil {
		t.Fatal(err)
	}
	var out []record.Batch
	it := record.NewIter(buf)
	for b, ok := it.Next(); ok; b, ok = it.Next() {
		out = append(out, b)
	}
	return out
}

// An append writes its batch and publishes the segment's size before it
// publishes the log end offset. A read in between must not return the
// batch: its reader would fetch next from past the log end offset that
// read reported, and a read there is OFFSET_OUT_OF_RANGE until the append
// finishes (a kgo consumer then applied its reset policy and went back to
// offset 0; TestFetchConcurrentWithProducers failed 20 of 200 runs). The
// window is a few instructions wide; an abort marker widens it
// deterministically, since its append creates the segment's transaction
// index between the two publications, and the test pauses that create.
func TestReadWhileAnAppendPublishesItsBatch(t *testing.T) {
	e := newIOEnv(t, nil)
	l := e.log
	e.mustAppend(ioAppend{records: 3, epoch: 1})                    // 0-2
	e.mustAppend(ioAppend{records: 2, epoch: 1, pid: 7, txn: true}) // 3-4, open
	l.MaybeIncrementHighWatermark(l.LogEndOffset())
	leo := l.LogEndOffset() // 5, where the abort marker goes

	pause := vfs.PauseOn(vfs.OpCreate, TxnIndexFileSuffix)
	e.efs.SetInjector(pause.Injector())
	defer pause.Release()
	done := make(chan error, 1)
	go func() { done <- e.marker(7, false, 1) }()
	<-pause.Paused
	if got := l.activeSegment().Size(); got == l.logEnd.Load().pos {
		t.Fatalf("the marker's bytes are not published yet (segment size %d); the pause is not in the window", got)
	}
	for _, iso := range []FetchIsolation{FetchLogEnd, FetchHighWatermark, FetchTxnCommitted} {
		fd, err := l.Read(0, 1<<20, iso, true)
		if err != nil {
			t.Fatalf("isolation %d: read at 0: %v", iso, err)
		}
		bound := map[FetchIsolation]int64{FetchLogEnd: fd.LogEndOffset, FetchHighWatermark: fd.HighWatermark,
			FetchTxnCommitted: fd.LastStableOffset}[iso]
		if fd.LogEndOffset != leo {
			t.Fatalf("isolation %d: log end %d while the marker's append is unfinished, want %d", iso, fd.LogEndOffset, leo)
		}
		next := int64(0)
		for _, b := range batchesIn(t, fd) {
			if b.LastOffset() >= bound {
				t.Fatalf("isolation %d: read returned batch %d-%d, not below the bound %d it reports (log end %d, high watermark %d)",
					iso, b.BaseOffset(), b.LastOffset(), bound, fd.LogEndOffset, fd.HighWatermark)
			}
			next = b.NextOffset()
		}
		// Where the reader goes next must be in range.
		if _, err := l.Read(next, 1<<20, iso, true); err != nil {
			var oor *OffsetOutOfRangeError
			if errors.As(err, &oor) {
				t.Fatalf("isolation %d: the next read, at %d, is out of range: %v", iso, next, err)
			}
			t.Fatal(err)
		}
	}
	pause.Release()
	if err := <-done; err != nil {
		t.Fatalf("abort marker: %v", err)
	}
	// Once published, the marker is read like any batch.
	fd, err := l.Read(leo, 1<<20, FetchLogEnd, true)
	if err != nil || fd.LogEndOffset != leo+1 {
		t.Fatalf("after the append: read at %d: log end %d, %v", leo, fd.LogEndOffset, err)
	}
	if bs := batchesIn(t, fd); len(bs) != 1 || bs[0].BaseOffset() != leo || !bs[0].IsControl() {
		t.Fatalf("after the append: %d batches at %d, want the marker", len(bs), leo)
	}
}
