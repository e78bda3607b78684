package index

import (
	"testing"

	"github.com/strait-io/strait/storage/vfs"
)

// TestDiscardLeavesTheFileAlone: an index holds no file descriptor and
// opens its file by path to write back, so a segment dropped unclean (its
// log failed, or replaced by its future log, whose files may now be at
// this path) discards what was not written: the file keeps the flushed
// entries only, while a clean Close writes the rest.
func TestDiscardLeavesTheFileAlone(t *testing.T) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	open := func(path string) *OffsetIndex {
		t.Helper()
		x, err := OpenOffsetIndex(mem, path, 100, 1024)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	size := func(path string) int64 {
		t.Helper()
		st, err := mem.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size
	}
	for _, discard := range []bool{true, false} {
		path := "/d/discard.index"
		if !discard {
			path = "/d/close.index"
		}
		x := open(path)
		if err := x.Append(101, 10); err != nil {
			t.Fatal(err)
		}
		if err := x.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := x.Append(102, 20); err != nil {
			t.Fatal(err)
		}
		want := int64(2 * OffsetEntrySize)
		if discard {
			x.Discard()
			want = OffsetEntrySize
		} else if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		if got := size(path); got != want {
			t.Errorf("discard=%v: the file holds %d bytes, want %d", discard, got, want)
		}
	}
}

// An index whose file went with its segment (removed while entries waited
// to be written back) closes without an error, and Delete writes nothing
// before removing: the index holds no descriptor, so a write-back would
// reopen the path (a broker's graceful stop failed on the .deleted
// segments of a topic whose retention had just run).
func TestCloseAfterTheFileWent(t *testing.T) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"close", "delete"} {
		path := "/d/" + op + ".index"
		x, err := OpenOffsetIndex(mem, path, 100, 1024)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Append(101, 10); err != nil {
			t.Fatal(err)
		}
		if err := x.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := x.Append(102, 20); err != nil {
			t.Fatal(err)
		}
		if err := mem.Remove(path); err != nil {
			t.Fatal(err)
		}
		if op == "close" {
			err = x.Close()
		} else {
			err = x.Delete()
		}
		if err != nil {
			t.Fatalf("%s of an index whose file was removed: %v", op, err)
		}
		if _, err := mem.Stat(path); !vfs.IsNotExist(err) {
			t.Fatalf("%s brought the removed file back: %v", op, err)
		}
	}
}
