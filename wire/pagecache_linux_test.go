package wire

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/strait-io/strait/storage/vfs"
)

// dropPageCache evicts p's file from the page cache, so reading it
// reads the disk (where the filesystem keeps it on one).
func dropPageCache(t *testing.T, p *filePartition) {
	t.Helper()
	if err := p.file.Sync(); err != nil {
		t.Fatal(err)
	}
	fd, ok := p.file.(vfs.FD)
	if !ok {
		t.Fatal("segment file without a descriptor")
	}
	_ = unix.Fadvise(int(fd.Fd()), 0, 0, unix.FADV_DONTNEED)
}
