package storage

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/strait-io/strait/storage/vfs"
)

func (e *managerEnv) openDirs(dirs ...string) (*LogManager, error) {
	return OpenManagerDirs(dirs, ManagerOptions{FS: e.fs, Clock: e.clock, Scheduler: InlineScheduler{}, DefaultConfig: e.cfg})
}

// Logs spread over the directories with the fewest partitions first, each
// directory keeps its own checkpoints and clean shutdown marker, and a
// restart finds every log where it was.
func TestLogManagerSeveralDirs(t *testing.T) {
	e := newManagerEnv(t)
	dirs := []string{"/d1", "/d2/"}
	m, err := e.openDirs(dirs...)
	if err != nil {
		t.Fatal(err)
	}
	where := map[TopicPartition]string{}
	for p := int32(0); p < 5; p++ {
		tp := TopicPartition{"orders", p}
		l, err := m.GetOrCreateLog(tp, idA, e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		e.produce(l, int(p)+1)
		l.UpdateHighWatermark(2 * int64(p+1))
		where[tp], _ = m.LogDir(tp)
	}
	// Kafka's nextLogDirs: the emptiest directory, log.dirs order on a tie.
	want := []string{"/d1", "/d2", "/d1", "/d2", "/d1"}
	for p, d := range want {
		if got := where[TopicPartition{"orders", int32(p)}]; got != d {
			t.Fatalf("orders-%d went to %s, want %s (all: %v)", p, got, d, where)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/d1", "/d2"} {
		if _, err := e.fs.Stat(filepath.Join(d, CleanShutdownFile)); err != nil {
			t.Fatalf("%s has no clean shutdown marker: %v", d, err)
		}
	}
	ckpt, _ := vfs.ReadFile(e.fs, "/d2/"+ReplicationCheckpointFile)
	if string(ckpt) != "0\n2\norders 1 4\norders 3 8\n" {
		t.Fatalf("/d2's replication-offset-checkpoint is %q", ckpt)
	}

	m, err = e.openDirs(dirs...)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := len(m.Logs()); got != 5 {
		t.Fatalf("%d logs after the restart, want 5", got)
	}
	for tp, d := range where {
		l, _ := m.Log(tp)
		if got, _ := m.LogDir(tp); got != d {
			t.Fatalf("%s is in %s after the restart, was in %s", tp, got, d)
		}
		if rep, _ := m.RecoveryReport(tp); !rep.Clean {
			t.Fatalf("%s recovered after a clean shutdown", tp)
		}
		if l.LogEndOffset() != 2*int64(tp.Partition+1) || l.HighWatermark() != 2*int64(tp.Partition+1) {
			t.Fatalf("%s: LEO %d HW %d after the restart", tp, l.LogEndOffset(), l.HighWatermark())
		}
	}
}

// A partition in two directories stops the start (Kafka's "Duplicate log
// directories"), and log.dirs may not name a directory twice.
func TestLogManagerSeveralDirsRefused(t *testing.T) {
	e := newManagerEnv(t)
	if _, err := e.openDirs("/d1", "/d1/"); err == nil || !strings.Contains(err.Error(), "duplicate log directory") {
		t.Fatalf("a repeated log dir: %v", err)
	}
	m, err := e.openDirs("/d1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.GetOrCreateLog(tpA, idA, e.cfg); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.fs.MkdirAll("/d2/" + tpA.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.openDirs("/d1", "/d2"); err == nil || !strings.Contains(err.Error(), "duplicate log directories for orders-0") {
		t.Fatalf("a partition in two dirs: %v", err)
	}
}
