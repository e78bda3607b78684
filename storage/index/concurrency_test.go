package index

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/strait-io/strait/storage/vfs"
)

// One appender (also flushing) and several readers on each index, under
// -race. Readers check every answer is one the appender could have
// produced and that answers only move forward, since entries are only
// added.

const (
	concEntries = 3000
	concReaders = 4
)

func runConcurrently(t *testing.T, appender func() error, reader func(r int) error) {
	t.Helper()
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, concReaders+1)
	for r := range concReaders {
		wg.Go(func() {
			for !done.Load() {
				if err := reader(r); err != nil {
					errs <- err
					return
				}
			}
			// One more pass after the appender finished.
			if err := reader(r); err != nil {
				errs <- err
			}
		})
	}
	if err := appender(); err != nil {
		errs <- err
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestOffsetIndexConcurrentLookup(t *testing.T) {
	mem := vfs.NewMem()
	must(t, mem.MkdirAll("/d"))
	const base = 1000
	x, err := OpenOffsetIndex(mem, "/d/x.index", base, concEntries*OffsetEntrySize)
	must(t, err)
	defer x.Close()
	// Entry i is (base+2i, 100i).
	lastSeen := make([]int64, concReaders)
	runConcurrently(t, func() error {
		for i := range concEntries {
			if err := x.Append(base+2*int64(i), int32(100*i)); err != nil {
				return err
			}
			if i%500 == 0 {
				if err := x.Flush(); err != nil {
					return err
				}
			}
		}
		return nil
	}, func(r int) error {
		n := x.Entries()
		target := int64(base + 2*concEntries) // past the end: the last entry
		off, pos := x.Lookup(target)
		got := offsetPosition{off, pos}
		rel := got.Offset - base
		if rel%2 != 0 || int64(got.Position) != 50*rel {
			return fmt.Errorf("Lookup(%d) = %+v: not an appended entry", target, got)
		}
		if got.Offset < lastSeen[r] {
			return fmt.Errorf("Lookup(%d) went back from %d to %d", target, lastSeen[r], got.Offset)
		}
		if n > 0 && got.Offset < base+2*int64(n-1) {
			return fmt.Errorf("Lookup(%d) = %+v misses entry %d seen before", target, got, n-1)
		}
		lastSeen[r] = got.Offset
		// A lookup inside the index: exact on even offsets, else the one below.
		mid := base + int64(n)
		if off, _ := x.Lookup(mid); n > 0 && off != mid-mid%2 {
			return fmt.Errorf("Lookup(%d) = %d, want offset %d", mid, off, mid-mid%2)
		}
		return nil
	})
	if n := x.Entries(); n != concEntries {
		t.Fatalf("Entries = %d, want %d", n, concEntries)
	}
}

func TestTimeIndexConcurrentLookup(t *testing.T) {
	mem := vfs.NewMem()
	must(t, mem.MkdirAll("/d"))
	const base = 1000
	x, err := OpenTimeIndex(mem, "/d/x.timeindex", base, (concEntries+1)*TimeEntrySize)
	must(t, err)
	defer x.Close()
	// Entry i is (ts 10000+10i, offset base+3i).
	lastSeen := make([]int64, concReaders)
	runConcurrently(t, func() error {
		for i := range concEntries {
			if err := x.MaybeAppend(10000+10*int64(i), base+3*int64(i), false); err != nil {
				return err
			}
			if i%500 == 0 {
				if err := x.Flush(); err != nil {
					return err
				}
			}
		}
		return nil
	}, func(r int) error {
		lastTs, _ := x.LastEntry()
		ts, off := x.Lookup(1 << 62)
		got := timestampOffset{ts, off}
		if got.Timestamp == NoTimestamp {
			if got.Offset != base {
				return fmt.Errorf("empty Lookup = %+v", got)
			}
			return nil
		}
		i := (got.Timestamp - 10000) / 10
		if got.Timestamp != 10000+10*i || got.Offset != base+3*i {
			return fmt.Errorf("Lookup = %+v: not an appended entry", got)
		}
		if got.Timestamp < lastTs || got.Timestamp < lastSeen[r] {
			return fmt.Errorf("Lookup = %+v went back (last entry ts %d, seen %d)", got, lastTs, lastSeen[r])
		}
		lastSeen[r] = got.Timestamp
		return nil
	})
}

func TestTxnIndexConcurrentCollect(t *testing.T) {
	mem := vfs.NewMem()
	must(t, mem.MkdirAll("/d"))
	x, err := OpenTxnIndex(mem, "/d/x.txnindex", 0)
	must(t, err)
	defer x.Close()
	const n = 300
	seen := make([]int, concReaders)
	runConcurrently(t, func() error {
		for i := range int64(n) {
			if err := x.Append(AbortedTxn{ProducerID: i, FirstOffset: 10 * i, LastOffset: 10*i + 5, LastStableOffset: 10 * i}); err != nil {
				return err
			}
		}
		return x.Flush()
	}, func(r int) error {
		txns, complete, err := x.CollectAbortedTxns(0, 1<<62)
		if err != nil {
			return err
		}
		if complete {
			return fmt.Errorf("complete with upper bound 1<<62")
		}
		for i, a := range txns {
			if a.ProducerID != int64(i) || a.LastOffset != 10*int64(i)+5 {
				return fmt.Errorf("entry %d = %v", i, a)
			}
		}
		if len(txns) < seen[r] {
			return fmt.Errorf("saw %d entries after %d", len(txns), seen[r])
		}
		seen[r] = len(txns)
		return nil
	})
	all, err := x.All()
	must(t, err)
	if len(all) != n {
		t.Fatalf("All() has %d entries, want %d", len(all), n)
	}
}

// The first use may come from several readers at once; exactly one load
// runs and all see the same entries.
func TestConcurrentLazyLoad(t *testing.T) {
	mem := vfs.NewMem()
	must(t, mem.MkdirAll("/d"))
	w, err := OpenOffsetIndex(mem, "/d/x.index", 0, 1024)
	must(t, err)
	for i := range 50 {
		must(t, w.Append(int64(i), int32(i)))
	}
	must(t, w.Close())
	var opens atomic.Int64
	counting := vfs.WithErrors(mem, func(op vfs.Op, _ string) error {
		if op == vfs.OpOpen || op == vfs.OpCreate {
			opens.Add(1)
		}
		return nil
	})
	x, err := OpenOffsetIndex(counting, "/d/x.index", 0, 1024)
	must(t, err)
	defer x.Close()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if off, pos := x.Lookup(30); off != 30 || pos != 30 {
				t.Errorf("Lookup(30) = %d, %d", off, pos)
			}
		})
	}
	wg.Wait()
	if n := opens.Load(); n != 1 {
		t.Fatalf("file opened %d times, want 1", n)
	}
}
