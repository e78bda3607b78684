package index

import (
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/strait-io/strait/storage/vfs"
)

// ddEnv is the state of one datadriven file: an in-memory filesystem (with
// a logging wrapper so tests can show file operations) holding one index.
type ddEnv struct {
	mem   *vfs.MemFS
	errFS *vfs.ErrorFS // between fs and mem, for the fail command
	fs    *vfs.LoggingFS
	idx   anyIndex
	// reopen opens the index again with the last open command's arguments.
	reopen func() (anyIndex, error)
}

// anyIndex is what every index has in common, so the shared commands are
// written once.
type anyIndex interface {
	Path() string
	Load() error
	Entries() int
	IsFull() bool
	Flush() error
	Close() error
	Reset() error
	Rename(string) error
	Delete() error
	TruncateTo(int64) error
	SanityCheck() error
}

const ddDir = "/data"

func newDDEnv(t *testing.T) *ddEnv {
	mem := vfs.NewMem()
	if err := mem.MkdirAll(ddDir); err != nil {
		t.Fatal(err)
	}
	if err := mem.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	e := &ddEnv{}
	e.setMem(mem)
	return e
}

func (e *ddEnv) setMem(mem *vfs.MemFS) {
	e.mem = mem
	e.errFS = vfs.WithErrors(mem, nil)
	e.fs = vfs.WithLogging(e.errFS, ddDir)
}

func errOr(err error, ok string) string {
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	return ok + "\n"
}

// open runs the open command and remembers how to reopen.
func (e *ddEnv) open(open func(fsys vfs.FS) (anyIndex, error)) string {
	e.reopen = func() (anyIndex, error) { return open(e.fs) }
	idx, err := e.reopen()
	if err != nil {
		return errOr(err, "")
	}
	e.idx = idx
	return "ok\n"
}

// common runs the commands every index shares; ok is false for others.
func (e *ddEnv) common(t *testing.T, d *datadriven.TestData) (out string, ok bool) {
	switch d.Cmd {
	case "reopen":
		// Close then open again on the same filesystem: a clean restart.
		if err := e.idx.Close(); err != nil {
			return errOr(err, ""), true
		}
		idx, err := e.reopen()
		if err != nil {
			return errOr(err, ""), true
		}
		e.idx = idx
		return "ok\n", true
	case "crash":
		// Power loss: only synced bytes under durable names survive. The
		// old index is dropped without Close, as a dead process would.
		e.setMem(e.mem.CrashClone(vfs.CrashOptions{}))
		idx, err := e.reopen()
		if err != nil {
			return errOr(err, ""), true
		}
		e.idx = idx
		return "ok\n", true
	case "flush":
		return errOr(e.idx.Flush(), "ok"), true
	case "close":
		return errOr(e.idx.Close(), "ok"), true
	case "reset":
		return errOr(e.idx.Reset(), "ok"), true
	case "delete":
		return errOr(e.idx.Delete(), "ok"), true
	case "rename":
		var to string
		d.ScanArgs(t, "to", &to)
		return errOr(e.idx.Rename(filepath.Join(ddDir, to)), "path: "+e.idx.Path()), true
	case "truncate-to":
		var off int64
		d.ScanArgs(t, "offset", &off)
		return errOr(e.idx.TruncateTo(off), "ok"), true
	case "sanity-check":
		return errOr(e.idx.SanityCheck(), "ok"), true
	case "load":
		return errOr(e.idx.Load(), "ok"), true
	case "is-full":
		return fmt.Sprintln(e.idx.IsFull()), true
	case "entries":
		return fmt.Sprintln(e.idx.Entries()), true
	case "fail":
		// Make every filesystem operation of kind op= fail until "heal".
		var op string
		d.ScanArgs(t, "op", &op)
		for o := vfs.OpCreate; o <= vfs.OpSyncDir; o++ {
			if o.String() == op {
				e.errFS.SetInjector(failOn(o))
				return "ok\n", true
			}
		}
		t.Fatalf("unknown op %q", op)
	case "heal":
		e.errFS.SetInjector(nil)
		return "ok\n", true
	case "fs-log":
		// File operations since the last fs-log: namespace changes, syncs
		// and truncates (vfs.LoggingFS does not log reads and writes).
		s := e.fs.Take()
		if s == "" {
			return "(none)\n", true
		}
		return s, true
	case "file":
		return e.fileInfo(), true
	case "raw":
		return e.raw(t, d), true
	case "write-raw":
		// Writes bytes straight into the file behind the index's back, at
		// the end unless at= is given: torn tails and corruption.
		var h string
		d.ScanArgs(t, "hex", &h)
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		f, err := e.mem.OpenReadWrite(e.idx.Path())
		if vfs.IsNotExist(err) {
			f, err = e.mem.Create(e.idx.Path())
		}
		if err != nil {
			return errOr(err, ""), true
		}
		defer f.Close()
		at, err := f.Size()
		if err != nil {
			t.Fatal(err)
		}
		d.MaybeScanArgs(t, "at", &at)
		if _, err := f.WriteAt(b, at); err != nil {
			t.Fatal(err)
		}
		return e.fileInfo(), true
	}
	return "", false
}

func (e *ddEnv) fileInfo() string {
	fi, err := e.mem.Stat(e.idx.Path())
	if vfs.IsNotExist(err) {
		return fmt.Sprintf("file %s: missing\n", filepath.Base(e.idx.Path()))
	}
	if err != nil {
		return errOr(err, "")
	}
	return fmt.Sprintf("file %s: %d bytes\n", filepath.Base(e.idx.Path()), fi.Size)
}

// raw prints the file's bytes in hex, one entry of width= bytes a line.
func (e *ddEnv) raw(t *testing.T, d *datadriven.TestData) string {
	var width int
	d.ScanArgs(t, "width", &width)
	b, err := vfs.ReadFile(e.mem, e.idx.Path())
	if err != nil {
		return errOr(err, "")
	}
	var sb strings.Builder
	for len(b) > 0 {
		n := min(width, len(b))
		fmt.Fprintf(&sb, "%x\n", b[:n])
		b = b[n:]
	}
	if sb.Len() == 0 {
		return "(empty)\n"
	}
	return sb.String()
}

// dump prints entries (via lines) and the file's size.
func (e *ddEnv) dump(lines func() ([]string, error)) string {
	ls, err := lines()
	if err != nil {
		return errOr(err, "")
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "entries: %d\n", len(ls))
	for i, l := range ls {
		fmt.Fprintf(&sb, "%d: %s\n", i, l)
	}
	sb.WriteString(e.fileInfo())
	return sb.String()
}

func TestOffsetIndexDataDriven(t *testing.T) {
	e := newDDEnv(t)
	var x *OffsetIndex
	datadriven.RunTest(t, "testdata/offset_index", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd == "open" {
			var base int64
			var maxSize int
			d.ScanArgs(t, "base", &base)
			d.ScanArgs(t, "max-size", &maxSize)
			return e.open(func(fsys vfs.FS) (anyIndex, error) {
				idx, err := OpenOffsetIndex(fsys, filepath.Join(ddDir, fmt.Sprintf("%020d.index", base)), base, maxSize)
				if err != nil {
					return nil, err
				}
				x = idx
				return idx, nil
			})
		}
		if out, ok := e.common(t, d); ok {
			return out
		}
		switch d.Cmd {
		case "append":
			var off int64
			var pos int32
			d.ScanArgs(t, "offset", &off)
			d.ScanArgs(t, "pos", &pos)
			return errOr(appendThenWrite(d, x.file, x.Append(off, pos)), "ok")
		case "lookup":
			var target int64
			d.ScanArgs(t, "offset", &target)
			off, pos := x.Lookup(target)
			return fmt.Sprintf("offset=%d pos=%d\n", off, pos)
		case "entry":
			var i int
			d.ScanArgs(t, "i", &i)
			off, pos, err := x.Entry(i)
			return errOr(err, fmt.Sprintf("offset=%d pos=%d", off, pos))
		case "last-offset":
			return fmt.Sprintln(x.LastOffset())
		case "fetch-upper-bound":
			var pos, size int32
			d.ScanArgs(t, "pos", &pos)
			d.ScanArgs(t, "size", &size)
			off, ok := x.FetchUpperBoundOffset(pos, size)
			if !ok {
				return "none\n"
			}
			return fmt.Sprintf("offset=%d\n", off)
		case "dump":
			return e.dump(func() ([]string, error) {
				ls := make([]string, x.Entries())
				for i := range ls {
					off, pos, err := x.Entry(i)
					if err != nil {
						return nil, err
					}
					ls[i] = fmt.Sprintf("offset=%d pos=%d", off, pos)
				}
				return ls, nil
			})
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

func TestTimeIndexDataDriven(t *testing.T) {
	e := newDDEnv(t)
	var x *TimeIndex
	datadriven.RunTest(t, "testdata/time_index", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd == "open" {
			var base int64
			var maxSize int
			d.ScanArgs(t, "base", &base)
			d.ScanArgs(t, "max-size", &maxSize)
			return e.open(func(fsys vfs.FS) (anyIndex, error) {
				idx, err := OpenTimeIndex(fsys, filepath.Join(ddDir, fmt.Sprintf("%020d.timeindex", base)), base, maxSize)
				if err != nil {
					return nil, err
				}
				x = idx
				return idx, nil
			})
		}
		if out, ok := e.common(t, d); ok {
			return out
		}
		switch d.Cmd {
		case "append":
			var ts, off int64
			d.ScanArgs(t, "ts", &ts)
			d.ScanArgs(t, "offset", &off)
			return errOr(appendThenWrite(d, x.file, x.MaybeAppend(ts, off, d.HasArg("skip-full-check"))), "ok")
		case "lookup":
			var target int64
			d.ScanArgs(t, "ts", &target)
			ts, off := x.Lookup(target)
			return fmt.Sprintf("ts=%d offset=%d\n", ts, off)
		case "entry":
			var i int
			d.ScanArgs(t, "i", &i)
			ts, off, err := x.Entry(i)
			return errOr(err, fmt.Sprintf("ts=%d offset=%d", ts, off))
		case "last-entry":
			ts, off := x.LastEntry()
			return fmt.Sprintf("ts=%d offset=%d\n", ts, off)
		case "dump":
			return e.dump(func() ([]string, error) {
				ls := make([]string, x.Entries())
				for i := range ls {
					ts, off, err := x.Entry(i)
					if err != nil {
						return nil, err
					}
					ls[i] = fmt.Sprintf("ts=%d offset=%d", ts, off)
				}
				return ls, nil
			})
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

// txnIndexAny adapts TxnIndex, which has no size limit, to anyIndex.
type txnIndexAny struct{ *TxnIndex }

func (txnIndexAny) IsFull() bool { return false }

func TestTxnIndexDataDriven(t *testing.T) {
	e := newDDEnv(t)
	var x *TxnIndex
	datadriven.RunTest(t, "testdata/txn_index", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd == "open" {
			var start int64
			d.ScanArgs(t, "start", &start)
			return e.open(func(fsys vfs.FS) (anyIndex, error) {
				idx, err := OpenTxnIndex(fsys, filepath.Join(ddDir, fmt.Sprintf("%020d.txnindex", start)), start)
				if err != nil {
					return nil, err
				}
				x = idx
				return txnIndexAny{idx}, nil
			})
		}
		if out, ok := e.common(t, d); ok {
			return out
		}
		switch d.Cmd {
		case "append":
			var a AbortedTxn
			d.ScanArgs(t, "pid", &a.ProducerID)
			d.ScanArgs(t, "first", &a.FirstOffset)
			d.ScanArgs(t, "last", &a.LastOffset)
			d.ScanArgs(t, "lso", &a.LastStableOffset)
			return errOr(appendThenWrite(d, x.file, x.Append(a)), "ok")
		case "collect":
			var fetch, upper int64
			d.ScanArgs(t, "fetch", &fetch)
			d.ScanArgs(t, "upper", &upper)
			txns, complete, err := x.CollectAbortedTxns(fetch, upper)
			if err != nil {
				return errOr(err, "")
			}
			var sb strings.Builder
			fmt.Fprintf(&sb, "complete: %t\n", complete)
			for _, a := range txns {
				fmt.Fprintf(&sb, "%v\n", a)
			}
			return sb.String()
		case "dump":
			return e.dump(func() ([]string, error) {
				all, err := x.All()
				if err != nil {
					return nil, err
				}
				ls := make([]string, len(all))
				for i, a := range all {
					ls[i] = a.String()
				}
				return ls, nil
			})
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

// appendThenWrite writes an appended entry to the file right away, so the
// scripts can show the file layout and what a crash keeps entry by entry;
// "deferred" leaves it in memory until the next flush, as the log does.
func appendThenWrite(d *datadriven.TestData, f *entryFile, err error) error {
	if err != nil || d.HasArg("deferred") {
		return err
	}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	return f.writeBackNowLocked()
}
