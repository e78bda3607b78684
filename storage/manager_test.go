package storage

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

type managerEnv struct {
	t     *testing.T
	fs    *vfs.MemFS
	clock *clock.Manual
	cfg   LogConfig
}

func newManagerEnv(t *testing.T) *managerEnv {
	cfg := DefaultLogConfig()
	cfg.SegmentBytes = 2048
	return &managerEnv{t: t, fs: vfs.NewMem(), clock: clock.NewManual(time.UnixMilli(1_700_000_000_000)), cfg: cfg}
}

func (e *managerEnv) open() *LogManager {
	e.t.Helper()
	m, err := OpenManager("/kafka-logs", ManagerOptions{FS: e.fs, Clock: e.clock, Scheduler: InlineScheduler{}, DefaultConfig: e.cfg})
	if err != nil {
		e.t.Fatalf("open manager: %v", err)
	}
	return m
}

func (e *managerEnv) produce(l *Log, n int) {
	e.t.Helper()
	te := &testEnv{t: e.t, clock: e.clock, comp: record.NewCompressor()}
	for i := 0; i < n; i++ {
		if _, err := l.AppendAsLeader(te.batch(record.BatchSpec{PartitionLeaderEpoch: 1}, 2, 200), 1, record.OriginClient); err != nil {
			e.t.Fatal(err)
		}
	}
}

var (
	tpA = TopicPartition{"orders", 0}
	tpB = TopicPartition{"orders", 1}
	idA = TopicID{1, 2, 3}
)

func TestLogManagerCleanRestart(t *testing.T) {
	e := newManagerEnv(t)
	m := e.open()
	a, err := m.GetOrCreateLog(tpA, idA, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.GetOrCreateLog(tpB, idA, e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.produce(a, 20)
	e.produce(b, 3)
	a.UpdateHighWatermark(30)
	b.UpdateHighWatermark(6)
	if _, err := m.GetOrCreateLog(tpA, TopicID{9}, e.cfg); err == nil {
		t.Fatal("a different topic id for an existing partition must be refused")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{CleanShutdownFile, RecoveryPointCheckpointFile, LogStartOffsetCheckpointFile, ReplicationCheckpointFile} {
		if _, err := e.fs.Stat(filepath.Join("/kafka-logs", f)); err != nil {
			t.Fatalf("%s missing after clean close: %v", f, err)
		}
	}
	ckpt, _ := vfs.ReadFile(e.fs, "/kafka-logs/"+ReplicationCheckpointFile)
	if string(ckpt) != "0\n2\norders 0 30\norders 1 6\n" {
		t.Fatalf("replication-offset-checkpoint is %q", ckpt)
	}
	meta, _ := vfs.ReadFile(e.fs, "/kafka-logs/orders-0/"+PartitionMetadataFile)
	if string(meta) != "version: 0\ntopic_id: "+idA.String()+"\n" {
		t.Fatalf("partition.metadata is %q", meta)
	}

	m = e.open()
	defer m.Close()
	rep, ok := m.RecoveryReport(tpA)
	if !ok || !rep.Clean || rep.SegmentsRecovered != 0 || rep.LogEndOffset != 40 {
		t.Fatalf("report %v", rep)
	}
	a, _ = m.Log(tpA)
	if a.TopicID() != idA || a.HighWatermark() != 30 || a.LogEndOffset() != 40 {
		t.Fatalf("reopened: id %s hw %d leo %d", a.TopicID(), a.HighWatermark(), a.LogEndOffset())
	}
	// The marker is gone, durably: a crash from now on is detected.
	if _, err := e.fs.Stat("/kafka-logs/" + CleanShutdownFile); !vfs.IsNotExist(err) {
		t.Fatalf("clean shutdown marker still present: %v", err)
	}
	crashed := e.fs.CrashClone(vfs.CrashOptions{})
	if _, err := crashed.Stat("/kafka-logs/" + CleanShutdownFile); !vfs.IsNotExist(err) {
		t.Fatal("marker removal was not durable")
	}
}

func TestLogManagerCrashRecoversFromCheckpoints(t *testing.T) {
	e := newManagerEnv(t)
	m := e.open()
	a, _ := m.GetOrCreateLog(tpA, idA, e.cfg)
	e.produce(a, 18) // rolls flush older segments
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	a.UpdateHighWatermark(36)
	if err := m.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	segs := len(a.Segments())
	e.produce(a, 1) // unflushed, lost in the crash
	if len(a.Segments()) != segs {
		t.Fatal("the unflushed append rolled (and so flushed); adjust the sizes")
	}
	e.fs = e.fs.CrashClone(vfs.CrashOptions{})

	m = e.open()
	defer m.Close()
	rep, _ := m.RecoveryReport(tpA)
	if rep.Clean || rep.LogEndOffset != 36 {
		t.Fatalf("report %v", rep)
	}
	// Only the segment at the recovery point is rescanned.
	if rep.SegmentsRecovered != 1 {
		t.Fatalf("recovered %d segments, want 1 (from the recovery point)", rep.SegmentsRecovered)
	}
	a, _ = m.Log(tpA)
	if a.HighWatermark() != 36 {
		t.Fatalf("hw %d", a.HighWatermark())
	}
	if got := readAll(t, a, 0, FetchLogEnd); len(got) != 18 {
		t.Fatalf("read %d batches after crash, want 18", len(got))
	}
}

func TestLogManagerDeleteLog(t *testing.T) {
	e := newManagerEnv(t)
	m := e.open()
	a, _ := m.GetOrCreateLog(tpA, idA, e.cfg)
	e.produce(a, 3)
	if err := m.DeleteLog(tpA); err != nil {
		t.Fatal(err)
	}
	names, _ := e.fs.List("/kafka-logs")
	for _, n := range names {
		if strings.HasPrefix(n, "orders-0") {
			t.Fatalf("%s left behind", n)
		}
	}
	if _, ok := m.Log(tpA); ok {
		t.Fatal("deleted log still listed")
	}
	// A deletion interrupted after the rename is finished at the next start.
	if err := e.fs.MkdirAll("/kafka-logs/orders-1.abc-delete"); err != nil {
		t.Fatal(err)
	}
	m.Close()
	m = e.open()
	defer m.Close()
	if _, err := e.fs.Stat("/kafka-logs/orders-1.abc-delete"); !vfs.IsNotExist(err) {
		t.Fatal("interrupted deletion not finished")
	}
	if len(m.Logs()) != 0 {
		t.Fatalf("logs %v", m.Logs())
	}
}

func TestLogManagerMaintenance(t *testing.T) {
	e := newManagerEnv(t)
	e.cfg.RetentionMs = 60_000
	e.cfg.FileDeleteDelayMs = 0
	m := e.open()
	defer m.Close()
	a, _ := m.GetOrCreateLog(tpA, idA, e.cfg)
	e.produce(a, 20)
	a.UpdateHighWatermark(a.LogEndOffset())
	before := len(a.Segments())
	e.clock.Advance(61 * time.Second)
	e.produce(a, 1)
	a.UpdateHighWatermark(a.LogEndOffset())
	if err := m.RunMaintenance(); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckpointLogStartOffsets(); err != nil {
		t.Fatal(err)
	}
	if got := a.Segments(); len(got) != 1 || before < 2 {
		t.Fatalf("segments %v (before %d)", got, before)
	}
	if a.LogStartOffset() != a.Segments()[0] {
		t.Fatalf("log start %d", a.LogStartOffset())
	}
	starts, err := ReadOffsetCheckpoint(e.fs, "/kafka-logs", LogStartOffsetCheckpointFile)
	if err != nil || starts[tpA] != a.LogStartOffset() {
		t.Fatalf("log-start-offset-checkpoint %v %v", starts, err)
	}
}

func TestOffsetCheckpointMalformed(t *testing.T) {
	fs := vfs.NewMem()
	for _, content := range []string{"1\n0\n", "0\n2\nt 0 1\n", "0\n1\nt x 1\n", "0\n1\nt 0\n", "junk"} {
		vfs.WriteFileAtomic(fs, "/", "ckpt", []byte(content))
		if _, err := ReadOffsetCheckpoint(fs, "/", "ckpt"); err == nil || !strings.Contains(err.Error(), "malformed checkpoint file") {
			t.Fatalf("%q: err %v", content, err)
		}
	}
}

// TestLogManagerReportsFailures: the manager's OnFailure hears of a log
// that fails and of checkpoints it cannot write, both failures of the log
// directory (Kafka takes the directory offline for either).
func TestLogManagerReportsFailures(t *testing.T) {
	e := newManagerEnv(t)
	efs := vfs.WithErrors(e.fs, nil)
	var heard []*StorageError
	m, err := OpenManager("/kafka-logs", ManagerOptions{FS: efs, Clock: e.clock, Scheduler: InlineScheduler{}, DefaultConfig: e.cfg,
		OnFailure: func(se *StorageError) { heard = append(heard, se) }})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := m.GetOrCreateLog(tpA, idA, e.cfg)
	e.produce(a, 1)
	if err := m.Checkpoint(); err != nil || len(heard) != 0 {
		t.Fatalf("checkpoint on a working disk: %v, heard %v", err, heard)
	}

	efs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpRename && strings.HasSuffix(path, RecoveryPointCheckpointFile+TmpFileSuffix) {
			return vfs.ErrInjected
		}
		return nil
	})
	// An unchanged file is not written again: move the recovery point.
	e.produce(a, 1)
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	err = m.Checkpoint()
	if len(heard) != 1 || err != heard[0] || heard[0].Op != "checkpoint" || heard[0].Dir != "/kafka-logs" {
		t.Fatalf("failed checkpoint: %v, heard %v; want one StorageError with op checkpoint", err, heard)
	}

	efs.SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpWrite && strings.Contains(path, "/orders-0/") {
			return vfs.ErrInjected
		}
		return nil
	})
	if _, err := a.AppendAsLeader((&testEnv{t: t, clock: e.clock, comp: record.NewCompressor()}).batch(record.BatchSpec{PartitionLeaderEpoch: 1}, 1, 10), 1, record.OriginClient); err == nil {
		t.Fatal("append on a failed disk succeeded")
	}
	if len(heard) != 2 || heard[1].Op != "append" || heard[1].Dir != "/kafka-logs/orders-0" {
		t.Fatalf("failed append: heard %v; want the log's StorageError after the checkpoint's", heard)
	}
	efs.SetInjector(nil)
	m.Abandon()
}
