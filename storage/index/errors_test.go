package index

import (
	"errors"
	"testing"

	"github.com/strait-io/strait/storage/vfs"
)

// IO errors surface wrapped (errors.Is finds vfs.ErrInjected) and leave the
// index as it was, so the operation can be retried.

func failOn(op vfs.Op) vfs.Injector {
	return func(o vfs.Op, _ string) error {
		if o == op {
			return vfs.ErrInjected
		}
		return nil
	}
}

// Appends stay in memory until Flush; a failed write-back keeps them there
// and leaves the file as it was, so the next Flush retries.
func TestFlushWriteErrorKeepsEntriesForRetry(t *testing.T) {
	mem := vfs.NewMem()
	must(t, mem.MkdirAll("/d"))
	efs := vfs.WithErrors(mem, nil)
	x, err := OpenOffsetIndex(efs, "/d/x.index", 0, 1024)
	must(t, err)
	defer x.Close()
	must(t, x.Append(1, 10))
	must(t, x.Flush())
	must(t, x.Append(2, 20))
	if b := mustReadFile(t, mem, "/d/x.index"); len(b) != 8 {
		t.Fatalf("an unflushed append reached the file: %d bytes", len(b))
	}

	efs.SetInjector(failOn(vfs.OpWrite))
	if err := x.Flush(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Flush with failing write = %v, want ErrInjected", err)
	}
	if n := x.Entries(); n != 2 {
		t.Fatalf("Entries after failed flush = %d, want 2", n)
	}
	if off, pos := x.Lookup(5); off != 2 || pos != 20 {
		t.Fatalf("Lookup after failed flush = %d, %d", off, pos)
	}
	if b := mustReadFile(t, mem, "/d/x.index"); len(b) != 8 {
		t.Fatalf("failed write-back left %d bytes, want 8", len(b))
	}

	efs.SetInjector(nil)
	must(t, x.Flush())
	if b := mustReadFile(t, mem, "/d/x.index"); len(b) != 16 {
		t.Fatalf("file has %d bytes, want 16", len(b))
	}
}

func TestTruncateErrorLeavesIndexUnchanged(t *testing.T) {
	mem := vfs.NewMem()
	must(t, mem.MkdirAll("/d"))
	efs := vfs.WithErrors(mem, nil)
	x, err := OpenTimeIndex(efs, "/d/x.timeindex", 0, 1024)
	must(t, err)
	defer x.Close()
	must(t, x.MaybeAppend(10, 1, false))
	must(t, x.MaybeAppend(20, 2, false))
	must(t, x.Flush()) // truncation only touches the file for written entries

	efs.SetInjector(failOn(vfs.OpTruncate))
	if err := x.TruncateTo(2); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("TruncateTo with failing truncate = %v, want ErrInjected", err)
	}
	if n := x.Entries(); n != 2 {
		t.Fatalf("Entries after failed truncate = %d, want 2", n)
	}
	efs.SetInjector(nil)
	must(t, x.TruncateTo(2))
	if n := x.Entries(); n != 1 {
		t.Fatalf("Entries after truncate = %d, want 1", n)
	}
}

func TestLoadErrorIsRetried(t *testing.T) {
	mem := vfs.NewMem()
	must(t, mem.MkdirAll("/d"))
	w, err := OpenTxnIndex(mem, "/d/x.txnindex", 0)
	must(t, err)
	must(t, w.Append(AbortedTxn{ProducerID: 1, FirstOffset: 1, LastOffset: 2, LastStableOffset: 1}))
	must(t, w.Close())

	for _, op := range []vfs.Op{vfs.OpOpen, vfs.OpRead} {
		efs := vfs.WithErrors(mem, failOn(op))
		x, err := OpenTxnIndex(efs, "/d/x.txnindex", 0)
		must(t, err)
		if _, err := x.All(); !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("All with failing %v = %v, want ErrInjected", op, err)
		}
		efs.SetInjector(nil)
		all, err := x.All()
		must(t, err)
		if len(all) != 1 || all[0].LastOffset != 2 {
			t.Fatalf("All after retry = %v", all)
		}
		must(t, x.Close())
	}
}

// A failed directory sync is retried by the next Flush: the new file's name
// is not durable until one succeeds.
func TestFlushRetriesDirSync(t *testing.T) {
	mem := vfs.NewMem()
	must(t, mem.MkdirAll("/d"))
	must(t, mem.SyncDir("/"))
	efs := vfs.WithErrors(mem, nil)
	x, err := OpenOffsetIndex(efs, "/d/x.index", 0, 1024)
	must(t, err)
	defer x.Close()
	must(t, x.Append(0, 0))

	efs.SetInjector(failOn(vfs.OpSync))
	if err := x.Flush(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Flush with failing sync = %v", err)
	}
	efs.SetInjector(failOn(vfs.OpSyncDir))
	if err := x.Flush(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Flush with failing dir sync = %v", err)
	}
	if _, err := mem.CrashClone(vfs.CrashOptions{}).Stat("/d/x.index"); !vfs.IsNotExist(err) {
		t.Fatalf("index name durable before a successful dir sync: %v", err)
	}
	efs.SetInjector(nil)
	must(t, x.Flush())
	fi, err := mem.CrashClone(vfs.CrashOptions{}).Stat("/d/x.index")
	must(t, err)
	if fi.Size != OffsetEntrySize {
		t.Fatalf("after crash the index has %d bytes, want %d", fi.Size, OffsetEntrySize)
	}
}
