package storage

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// opCounts counts the syncs an ErrorFS sees.
type opCounts struct{ fileSyncs, dirSyncs atomic.Int64 }

func (c *opCounts) injector() vfs.Injector {
	return func(op vfs.Op, _ string) error {
		switch op {
		case vfs.OpSync:
			c.fileSyncs.Add(1)
		case vfs.OpSyncDir:
			c.dirSyncs.Add(1)
		}
		return nil
	}
}

func (c *opCounts) get() (file, dir int64) { return c.fileSyncs.Load(), c.dirSyncs.Load() }

// heldScheduler keeps tasks until run is called.
type heldScheduler struct {
	mu    sync.Mutex
	tasks []func()
}

func (h *heldScheduler) Go(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tasks = append(h.tasks, f)
}

func (h *heldScheduler) run() {
	h.mu.Lock()
	tasks := h.tasks
	h.tasks = nil
	h.mu.Unlock()
	for _, f := range tasks {
		f()
	}
}

// newDirEnv is a testEnv whose log directory exists durably, as LogManager
// leaves it, so Open creates the partition directory the lazy way; the
// log's background tasks wait for sched.run.
func newDirEnv(t *testing.T) (*testEnv, *heldScheduler, Options) {
	e := newTestEnv(t)
	if err := vfs.MkdirAllDurable(e.fs, filepath.Dir(e.dir)); err != nil {
		t.Fatal(err)
	}
	sched := &heldScheduler{}
	o := e.options(true)
	o.Scheduler, o.TopicID = sched, TopicID{2}
	return e, sched, o
}

func appendOne(t *testing.T, e *testEnv, l *Log) {
	t.Helper()
	if _, err := l.AppendAsLeader(e.batch(record.BatchSpec{}, 3, 100), 1, record.OriginClient); err != nil {
		t.Fatal(err)
	}
}

// TestNewLogSyncsInTheBackground: creating an empty log syncs nothing on
// the caller's goroutine; the task it schedules writes the topic id file
// through a synced temporary file and syncs the partition directory and
// the log directory's entry for it, once.
func TestNewLogSyncsInTheBackground(t *testing.T) {
	e, sched, o := newDirEnv(t)
	var c opCounts
	o.FS = vfs.WithErrors(e.fs, c.injector())
	l, _ := e.open(o)
	defer l.Close()
	if f, d := c.get(); f != 0 || d != 0 {
		t.Fatalf("creating a log: %d file syncs and %d directory syncs, want none", f, d)
	}
	if _, err := vfs.ReadFile(e.fs, filepath.Join(e.dir, PartitionMetadataFile)); !vfs.IsNotExist(err) {
		t.Fatalf("partition.metadata before the background task: %v", err)
	}
	sched.run()
	if f, d := c.get(); f != 1 || d != 2 {
		t.Fatalf("the background task: %d file syncs and %d directory syncs, want 1 and 2", f, d)
	}
	if id, err := readPartitionMetadata(e.fs, e.dir); err != nil || id != (TopicID{2}) {
		t.Fatalf("partition.metadata after the background task: %v, %v", id, err)
	}
	// The first append of an epoch leaves the leader epoch checkpoint to
	// the flush, which syncs the partition directory for it (the rename
	// of its temporary file) and for nothing else.
	appendOne(t, e, l)
	_, before := c.get()
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, d := c.get(); d != before+1 {
		t.Fatalf("a flush after the background task synced %d directories, want 1 (the epoch checkpoint's)", d-before)
	}
	appendOne(t, e, l)
	_, before = c.get()
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, d := c.get(); d != before {
		t.Fatalf("a second flush synced %d directories", d-before)
	}
}

// TestNewLogSurvivesPowerLossOnceFlushed: a flush that comes before the
// background task does its work; before it a power loss may take the new
// log away (it opens again empty), after it the data and the topic id
// survive, and the task then has nothing left to do.
func TestNewLogSurvivesPowerLossOnceFlushed(t *testing.T) {
	e, sched, o := newDirEnv(t)
	l, _ := e.open(o)
	appendOne(t, e, l)
	before := e.fs.CrashClone(vfsCrash())
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	after := e.fs.CrashClone(vfsCrash())
	var c opCounts
	l.fsys = vfs.WithErrors(e.fs, c.injector())
	sched.run()
	if f, d := c.get(); f != 0 || d != 0 {
		t.Fatalf("the background task after the flush: %d file syncs and %d directory syncs, want none", f, d)
	}
	l.Close()

	for _, tc := range []struct {
		name string
		fs   *vfs.MemFS
		want int
	}{{"before the first flush", before, 0}, {"after it", after, 1}} {
		e.fs = tc.fs
		l, _ := e.open(e.options(false))
		if got := len(readAll(t, l, 0, FetchLogEnd)); got != tc.want {
			t.Errorf("power loss %s: %d batches, want %d", tc.name, got, tc.want)
		}
		if tc.want > 0 && l.TopicID() != (TopicID{2}) {
			t.Errorf("power loss %s: topic id %v", tc.name, l.TopicID())
		}
		l.Close()
	}
}

// TestNewDirTaskAfterCloseDoesNothing: a log closed (or deleted) before its
// background task ran leaves the task nothing to touch, since a new log
// may already use the path.
func TestNewDirTaskAfterCloseDoesNothing(t *testing.T) {
	e, sched, o := newDirEnv(t)
	l, _ := e.open(o)
	l.abandon() // as LogManager.Abandon, or a close that found the log failed
	var c opCounts
	l.fsys = vfs.WithErrors(e.fs, c.injector())
	sched.run()
	if f, d := c.get(); f != 0 || d != 0 {
		t.Fatalf("the background task after the log was closed: %d file syncs and %d directory syncs", f, d)
	}
	if err := l.failed.Load(); err != nil {
		t.Fatalf("the background task failed the closed log: %v", err)
	}
}

// TestRecoveryMakesANewDirectoryDurable: a process that created a log
// and crashed before flushing it leaves the directory's entries unsynced;
// recovery on the next start calls the recovered data durable, so it
// syncs them, and a power loss after that keeps the data.
func TestRecoveryMakesANewDirectoryDurable(t *testing.T) {
	e, _, o := newDirEnv(t)
	l, _ := e.open(o)
	appendOne(t, e, l)
	_ = l // the process crashes: the kernel keeps what it wrote

	l, _ = e.open(e.options(false))
	if rp, leo := l.RecoveryPoint(), l.LogEndOffset(); rp != leo {
		t.Fatalf("recovery point %d after recovery, want the log end %d", rp, leo)
	}
	e.fs = e.fs.CrashClone(vfsCrash())
	l2, _ := e.open(e.options(false))
	defer l2.Close()
	if got := len(readAll(t, l2, 0, FetchLogEnd)); got != 1 {
		t.Fatalf("power loss after recovery: %d batches, want 1", got)
	}
}
