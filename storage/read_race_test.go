package storage

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/record"
)

// TestReadConcurrentWithAppends hammers Read while appends and rolls run.
// A reader that follows the log end (a follower or tail consumer fetching
// the offset after the last one it got) must never get
// OFFSET_OUT_OF_RANGE, and a read must never return a batch at or past
// the bound it reports (the log end offset, high watermark or last stable
// offset, by isolation): a client takes its next fetch offset
// from the data, and data past the log end offset the read loaded leads
// to a fetch past the log end offset the next read loads while the append
// that wrote it has yet to publish it.
func TestReadConcurrentWithAppends(t *testing.T) {
	e := newTestEnv(t)
	e.cfg.SegmentBytes = 16 << 10
	e.cfg.IndexIntervalBytes = 256
	l, _ := e.open(e.options(false))
	defer l.Close()

	batches := make([][]byte, 3)
	for i := range batches {
		batches[i] = e.batch(record.BatchSpec{}, 1+i, 40)
	}
	dur := time.Second
	if testing.Short() {
		dur = 200 * time.Millisecond
	}
	var (
		stop  atomic.Bool
		wg    sync.WaitGroup
		fails atomic.Int64
	)
	failf := func(format string, args ...any) {
		if fails.Add(1) <= 5 {
			t.Errorf(format, args...)
		}
		stop.Store(true)
	}
	wg.Add(1)
	go func() { // one producer; the high watermark follows the log end (one replica)
		defer wg.Done()
		defer stop.Store(true)
		deadline := time.Now().Add(dur)
		for i := 0; time.Now().Before(deadline) && !stop.Load(); i++ {
			buf := append([]byte(nil), batches[i%len(batches)]...)
			info, err := l.AppendAsLeader(buf, 1, record.OriginClient)
			if err != nil {
				failf("append: %v", err)
				return
			}
			l.MaybeIncrementHighWatermark(info.LastOffset + 1)
		}
	}()
	tail := func(iso FetchIsolation) {
		defer wg.Done()
		var next int64
		buf := make([]byte, 1<<20)
		for !stop.Load() {
			at := next
			fd, err := l.Read(at, 1<<20, iso, true)
			if err != nil {
				var oor *OffsetOutOfRangeError
				if errors.As(err, &oor) {
					failf("isolation %d: read at %d, an offset the previous read returned data up to: %v", iso, at, err)
				} else {
					failf("read at %d: %v", at, err)
				}
				return
			}
			bound := fd.LogEndOffset
			switch iso {
			case FetchHighWatermark:
				bound = fd.HighWatermark
			case FetchTxnCommitted:
				bound = fd.LastStableOffset
			}
			if fd.Records.Size == 0 {
				continue
			}
			data := buf[:fd.Records.Size]
			if err := fd.Records.ReadInto(data); err != nil {
				failf("read into: %v", err)
				return
			}
			it := record.NewIter(data)
			for b, ok := it.Next(); ok; b, ok = it.Next() {
				if b.LastOffset() < next {
					continue
				}
				if b.LastOffset() >= bound {
					failf("isolation %d: read at %d returned batch %d-%d, past the bound %d it reports (log end %d, high watermark %d)",
						iso, at, b.BaseOffset(), b.LastOffset(), bound, fd.LogEndOffset, fd.HighWatermark)
					return
				}
				next = b.NextOffset()
			}
		}
	}
	// Readers at offsets no higher than a bound seen before the read
	// started.
	seen := func() {
		defer wg.Done()
		var i int64
		for !stop.Load() {
			hw := l.HighWatermark()
			off := hw - i%7
			i++
			if off < 0 {
				off = 0
			}
			if _, err := l.Read(off, 1<<10, FetchHighWatermark, true); err != nil {
				failf("read at %d below the high watermark %d seen before: %v", off, hw, err)
				return
			}
		}
	}
	wg.Add(4)
	go tail(FetchLogEnd)
	go tail(FetchHighWatermark)
	go tail(FetchTxnCommitted)
	go seen()
	wg.Wait()
	if n := fails.Load(); n > 0 {
		t.Fatalf("%d failures; log end %d, %d segments", n, l.LogEndOffset(), len(l.Segments()))
	}
	if len(l.Segments()) < 2 {
		t.Fatalf("no rolls happened: %d segments", len(l.Segments()))
	}
}
