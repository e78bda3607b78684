package index

import (
	"errors"
	"testing"

	"github.com/strait-io/strait/storage/vfs"
)

// A crash may keep any prefix of the bytes written after the last sync (a
// torn tail). After it, every index must load exactly the entries that are
// whole in that prefix: at least the synced ones, never a partial one.
func TestCrashKeepsSyncedPrefix(t *testing.T) {
	rng := propertyRNG(t)
	for round := range 200 {
		mem := vfs.NewMem()
		must(t, mem.MkdirAll("/d"))
		must(t, mem.SyncDir("/"))
		oi, err := OpenOffsetIndex(mem, "/d/0.index", 0, 1<<20)
		must(t, err)
		ti, err := OpenTimeIndex(mem, "/d/0.timeindex", 0, 1<<20)
		must(t, err)
		xi, err := OpenTxnIndex(mem, "/d/0.txnindex", 0)
		must(t, err)
		total := 1 + rng.IntN(40)
		synced := rng.IntN(total + 1)
		for i := range total {
			if i == synced {
				must(t, oi.Flush())
				must(t, ti.Flush())
				must(t, xi.Flush())
			}
			must(t, oi.Append(int64(i), int32(10*i)))
			must(t, ti.MaybeAppend(int64(100+i), int64(i), false))
			must(t, xi.Append(AbortedTxn{ProducerID: int64(i), FirstOffset: int64(i), LastOffset: int64(i), LastStableOffset: int64(i)}))
		}
		if synced == total {
			must(t, oi.Flush())
			must(t, ti.Flush())
			must(t, xi.Flush())
		}
		crashed := mem.CrashClone(vfs.CrashOptions{Rand: rng})

		oi2, err := OpenOffsetIndex(crashed, "/d/0.index", 0, 1<<20)
		must(t, err)
		ti2, err := OpenTimeIndex(crashed, "/d/0.timeindex", 0, 1<<20)
		must(t, err)
		xi2, err := OpenTxnIndex(crashed, "/d/0.txnindex", 0)
		must(t, err)
		for name, idx := range map[string]interface {
			Entries() int
			SanityCheck() error
			Path() string
		}{"offset": oi2, "time": ti2, "txn": xi2} {
			n := idx.Entries()
			// synced == 0 means the flush ran before any file existed, so
			// nothing (not even the name) is promised.
			if n < synced || n > total {
				t.Fatalf("round %d: %s index has %d entries after crash, synced %d of %d", round, name, n, synced, total)
			}
			must(t, idx.SanityCheck())
			fi, err := crashed.Stat(idx.Path())
			if err != nil && !(name == "txn" && n == 0 && errors.Is(err, vfs.ErrNotExist)) {
				t.Fatalf("round %d: stat %s: %v", round, idx.Path(), err)
			}
			if err == nil && fi.Size%map[string]int64{"offset": 8, "time": 12, "txn": 34}[name] != 0 {
				t.Fatalf("round %d: %s index file has %d bytes, not whole entries", round, name, fi.Size)
			}
		}
		// What survived is exactly what was appended.
		for i := range oi2.Entries() {
			off, pos, err := oi2.Entry(i)
			must(t, err)
			if off != int64(i) || pos != int32(10*i) {
				t.Fatalf("round %d: offset entry %d = %d, %d", round, i, off, pos)
			}
		}
		for i := range ti2.Entries() {
			ts, off, err := ti2.Entry(i)
			must(t, err)
			if ts != int64(100+i) || off != int64(i) {
				t.Fatalf("round %d: time entry %d = %d, %d", round, i, ts, off)
			}
		}
		all, err := xi2.All()
		must(t, err)
		for i, a := range all {
			if a.ProducerID != int64(i) || a.LastOffset != int64(i) {
				t.Fatalf("round %d: txn entry %d = %v", round, i, a)
			}
		}
	}
}
