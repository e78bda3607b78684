package storage

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/strait-io/strait/storage/vfs"
)

// allocated is how many bytes of disk a file holds, and its size.
func allocated(t *testing.T, path string) (blocks, size int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("SKIPPED: no block counts on this platform")
	}
	return st.Blocks * 512, fi.Size()
}

// The active segment reserves its blocks a chunk ahead of its appends
// without changing the file's size (segment_prealloc.go), gives them back
// when it stops being active, and what was written reads back whole
// after a reopen. A segment below a chunk of data reserves nothing.
func TestActiveSegmentPreallocates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "topic-0")
	l := openBenchLog(t, vfs.OS{}, dir, DefaultLogConfig())
	buf := benchBatch(t, 16, 1024)
	path := filepath.Join(dir, "00000000000000000000.log")

	appendN(t, l, buf, 8) // 128 KiB: below a chunk
	if blocks, size := allocated(t, path); blocks > size+64<<10 {
		t.Fatalf("a segment of %d bytes holds %d bytes of disk: reserved before it held a chunk", size, blocks)
	}

	n := (preallocChunk + 2<<20) / len(buf)
	appendN(t, l, buf, n)
	blocks, size := allocated(t, path)
	if size != l.Size() {
		t.Fatalf("file size %d, log size %d: preallocation changed the size", size, l.Size())
	}
	if blocks < size+1<<20 {
		t.Skipf("SKIPPED: %s holds %d bytes of disk for %d of data: this filesystem does not preallocate (fallocate KEEP_SIZE); the broker writes as before", path, blocks, size)
	}

	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	if blocks, size := allocated(t, path); blocks > size+64<<10 {
		t.Fatalf("a rolled segment of %d bytes still holds %d bytes of disk", size, blocks)
	}
	leo := l.logEndOffset()
	closeBenchLog(t, l)

	l = openBenchLog(t, vfs.OS{}, dir, DefaultLogConfig())
	defer closeBenchLog(t, l)
	if got := l.logEndOffset(); got != leo {
		t.Fatalf("after a reopen the log ends at %d, want %d", got, leo)
	}
}
