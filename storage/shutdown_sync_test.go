package storage

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/strait-io/strait/storage/vfs"
)

// TestCleanShutdownSyncsTheFileSystemOnce: a clean shutdown writes each
// log's last files (index entries, producer snapshot, epoch checkpoint)
// without fsyncing any file of a partition directory and then syncs the
// log directory's file system once, before the checkpoints and the clean
// shutdown marker; a power loss right after Close loses nothing, and the
// next start recovers nothing. Before, every log fsynced its .log, indexes,
// snapshot and directory in turn (five to seven fsyncs a log).
func TestCleanShutdownSyncsTheFileSystemOnce(t *testing.T) {
	e := newManagerEnv(t)
	var ops syncOps
	efs := vfs.WithErrors(e.fs, nil)
	open := func(fsys vfs.FS) *LogManager {
		t.Helper()
		m, err := OpenManager("/kafka-logs", ManagerOptions{FS: fsys, Clock: e.clock, Scheduler: InlineScheduler{}, DefaultConfig: e.cfg})
		if err != nil {
			t.Fatalf("open manager: %v", err)
		}
		return m
	}
	m := open(efs)
	const parts = 4
	for i := range parts {
		l, err := m.GetOrCreateLog(TopicPartition{"s", int32(i)}, idA, e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		e.produce(l, 3+i) // rolls (segment.bytes 2048): indexes, snapshots
	}
	efs.SetInjector(ops.inject)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	efs.SetInjector(nil)
	if in := ops.inPartitionDirs("/kafka-logs"); len(in) > 0 {
		t.Errorf("the shutdown synced files of the partitions one by one: %v", in)
	}
	if got := ops.count(vfs.OpSyncDir, "/kafka-logs"); got == 0 {
		t.Error("the log directory's file system was never synced")
	}

	// A power loss right after the shutdown: everything is there, clean.
	disk := e.fs.CrashClone(vfs.CrashOptions{})
	if _, err := disk.Stat(filepath.Join("/kafka-logs", CleanShutdownFile)); err != nil {
		t.Fatalf("clean shutdown marker after a power loss: %v", err)
	}
	m = open(disk)
	defer m.Close()
	for i := range parts {
		tp := TopicPartition{"s", int32(i)}
		l, ok := m.Log(tp)
		if !ok {
			t.Fatalf("%s lost", tp)
		}
		if want := int64(2 * (3 + i)); l.LogEndOffset() != want {
			t.Errorf("%s ends at %d after a power loss, want %d", tp, l.LogEndOffset(), want)
		}
		if rep, _ := m.RecoveryReport(tp); rep == nil || !rep.Clean {
			t.Errorf("%s: recovery report %v, want a clean load", tp, rep)
		}
	}
}

// TestShutdownWhoseSyncFailsIsNotClean: when the file system sync at the
// end of a shutdown fails, Close says so and writes neither the clean
// shutdown marker nor recovery points past what was durable before: the
// next start recovers the logs.
func TestShutdownWhoseSyncFailsIsNotClean(t *testing.T) {
	e := newManagerEnv(t)
	efs := vfs.WithErrors(e.fs, nil)
	m, err := OpenManager("/kafka-logs", ManagerOptions{FS: efs, Clock: e.clock, Scheduler: InlineScheduler{}, DefaultConfig: e.cfg})
	if err != nil {
		t.Fatal(err)
	}
	l, err := m.GetOrCreateLog(tpA, idA, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.produce(l, 2)
	before, _ := vfs.ReadFile(e.fs, filepath.Join("/kafka-logs", RecoveryPointCheckpointFile))
	var once sync.Once
	efs.SetInjector(func(op vfs.Op, path string) error {
		var err error
		if op == vfs.OpSyncDir && path == "/kafka-logs" {
			once.Do(func() { err = vfs.ErrInjected }) // the file system sync comes first
		}
		return err
	})
	if err := m.Close(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Close: %v, want the sync's error", err)
	}
	efs.SetInjector(nil)
	if _, err := e.fs.Stat(filepath.Join("/kafka-logs", CleanShutdownFile)); !vfs.IsNotExist(err) {
		t.Errorf("clean shutdown marker after a failed sync: %v", err)
	}
	if after, _ := vfs.ReadFile(e.fs, filepath.Join("/kafka-logs", RecoveryPointCheckpointFile)); string(after) != string(before) {
		t.Errorf("recovery points written after a failed sync: %q, was %q", after, before)
	}
	m, err = OpenManager("/kafka-logs", ManagerOptions{FS: e.fs, Clock: e.clock, Scheduler: InlineScheduler{}, DefaultConfig: e.cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if rep, _ := m.RecoveryReport(tpA); rep == nil || rep.Clean {
		t.Errorf("recovery report %v, want a recovery", rep)
	}
	if l, ok := m.Log(tpA); !ok || l.LogEndOffset() != 4 {
		t.Errorf("log after the restart: %v", l)
	}
}

// syncOps records the syncs (file and directory) an ErrorFS sees.
type syncOps struct {
	mu  sync.Mutex
	ops []syncOp
}

type syncOp struct {
	op   vfs.Op
	path string
}

func (s *syncOps) inject(op vfs.Op, path string) error {
	if op == vfs.OpSync || op == vfs.OpSyncDir {
		s.mu.Lock()
		s.ops = append(s.ops, syncOp{op, path})
		s.mu.Unlock()
	}
	return nil
}

func (s *syncOps) count(op vfs.Op, path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, o := range s.ops {
		if o.op == op && o.path == path {
			n++
		}
	}
	return n
}

// inPartitionDirs lists the syncs of anything below a directory of root.
func (s *syncOps) inPartitionDirs(root string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, o := range s.ops {
		if rel, err := filepath.Rel(root, o.path); err == nil && rel != "." && !strings.HasPrefix(rel, "..") && strings.Contains(rel, string(filepath.Separator)) ||
			(o.op == vfs.OpSyncDir && filepath.Dir(o.path) == root) {
			out = append(out, o.op.String()+" "+o.path)
		}
	}
	return out
}
