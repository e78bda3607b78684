package index

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/strait-io/strait/storage/vfs"
)

// The layout tests pin the exact bytes Kafka's OffsetIndex, TimeIndex and
// TransactionIndex (AbortedTxn) read, so DumpLogSegments can read our files.
// Expected bytes are written out by hand, not produced by the code under
// test. Each runs on the in-memory FS and on the real one.

func forEachFS(t *testing.T, fn func(t *testing.T, fsys vfs.FS, dir string)) {
	t.Run("mem", func(t *testing.T) {
		mem := vfs.NewMem()
		if err := mem.MkdirAll("/data"); err != nil {
			t.Fatal(err)
		}
		fn(t, mem, "/data")
	})
	t.Run("os", func(t *testing.T) { fn(t, vfs.OS{}, t.TempDir()) })
}

func mustReadFile(t *testing.T, fsys vfs.FS, path string) []byte {
	t.Helper()
	b, err := vfs.ReadFile(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestOffsetIndexLayout(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		path := filepath.Join(dir, "00000000000000001000.index")
		x, err := OpenOffsetIndex(fsys, path, 1000, 10485760)
		must(t, err)
		must(t, x.Append(1000, 0))
		must(t, x.Append(1005, 4096))
		must(t, x.Append(1000+0x01020304, 0x7f000001))
		must(t, x.Flush())
		must(t, x.Close())
		want := []byte{
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // relative 0, position 0
			0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x10, 0x00, // relative 5, position 4096
			0x01, 0x02, 0x03, 0x04, 0x7f, 0x00, 0x00, 0x01, // relative 0x01020304, position 0x7f000001
		}
		if got := mustReadFile(t, fsys, path); !bytes.Equal(got, want) {
			t.Fatalf("file bytes\n got %x\nwant %x", got, want)
		}

		// And hand-built bytes read back as those entries.
		y, err := OpenOffsetIndex(fsys, path, 1000, 10485760)
		must(t, err)
		defer y.Close()
		for i, w := range []offsetPosition{{1000, 0}, {1005, 4096}, {1000 + 0x01020304, 0x7f000001}} {
			off, pos, err := y.Entry(i)
			must(t, err)
			if got := (offsetPosition{off, pos}); got != w {
				t.Errorf("entry %d = %+v, want %+v", i, got, w)
			}
		}
	})
}

func TestTimeIndexLayout(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		path := filepath.Join(dir, "00000000000000001000.timeindex")
		x, err := OpenTimeIndex(fsys, path, 1000, 10485760)
		must(t, err)
		must(t, x.MaybeAppend(1700000000000, 1000, false))
		must(t, x.MaybeAppend(0x0102030405060708, 1000+0x0a0b0c0d, false))
		must(t, x.Close())
		want := []byte{
			0x00, 0x00, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, 0x00, 0x00, 0x00, 0x00, // 1700000000000, relative 0
			0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0a, 0x0b, 0x0c, 0x0d,
		}
		if got := mustReadFile(t, fsys, path); !bytes.Equal(got, want) {
			t.Fatalf("file bytes\n got %x\nwant %x", got, want)
		}
		y, err := OpenTimeIndex(fsys, path, 1000, 10485760)
		must(t, err)
		defer y.Close()
		ts, off := y.LastEntry()
		if last, w := (timestampOffset{ts, off}), (timestampOffset{0x0102030405060708, 1000 + 0x0a0b0c0d}); last != w {
			t.Errorf("last entry = %+v, want %+v", last, w)
		}
	})
}

func TestTxnIndexLayout(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		path := filepath.Join(dir, "00000000000000001000.txnindex")
		x, err := OpenTxnIndex(fsys, path, 1000)
		must(t, err)
		a := AbortedTxn{ProducerID: 0x0102030405060708, FirstOffset: 0x1112131415161718, LastOffset: 0x2122232425262728, LastStableOffset: 0x3132333435363738}
		b := AbortedTxn{ProducerID: -1, FirstOffset: 0x2122232425262729, LastOffset: 0x2122232425262729, LastStableOffset: 0}
		must(t, x.Append(a))
		must(t, x.Append(b))
		must(t, x.Close())
		want := []byte{
			0x00, 0x00, // version 0
			0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // producer id
			0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, // first offset
			0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, // last offset
			0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, // last stable offset
			0x00, 0x00,
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x29,
			0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x29,
			0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		}
		if got := mustReadFile(t, fsys, path); !bytes.Equal(got, want) {
			t.Fatalf("file bytes\n got %x\nwant %x", got, want)
		}
		y, err := OpenTxnIndex(fsys, path, 1000)
		must(t, err)
		defer y.Close()
		all, err := y.All()
		must(t, err)
		if len(all) != 2 || all[0] != a || all[1] != b {
			t.Errorf("All() = %v, want [%v %v]", all, a, b)
		}
	})
}

// A transaction index that never got an entry leaves no file behind, even
// after Flush and Close: segments without aborts have no .txnindex.
func TestTxnIndexNoFileWithoutEntries(t *testing.T) {
	forEachFS(t, func(t *testing.T, fsys vfs.FS, dir string) {
		path := filepath.Join(dir, "00000000000000000000.txnindex")
		x, err := OpenTxnIndex(fsys, path, 0)
		must(t, err)
		txns, complete, err := x.CollectAbortedTxns(0, 100)
		must(t, err)
		if len(txns) != 0 || complete {
			t.Fatalf("CollectAbortedTxns on empty = %v, %t", txns, complete)
		}
		must(t, x.Flush())
		must(t, x.Reset())
		must(t, x.Close())
		if _, err := fsys.Stat(path); !vfs.IsNotExist(err) {
			t.Fatalf("Stat(%s) = %v, want not-exist", path, err)
		}
	})
}
