package storage

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/strait-io/strait/storage/vfs"
)

// checkpointWriteCounter counts, per checkpoint file, the atomic writes
// (the rename of its temporary file into place) through an ErrorFS.
type checkpointWriteCounter struct {
	mu     sync.Mutex
	writes map[string]int
}

func (c *checkpointWriteCounter) inject(op vfs.Op, path string) error {
	if op == vfs.OpRename && strings.HasSuffix(path, TmpFileSuffix) {
		c.mu.Lock()
		c.writes[strings.TrimSuffix(filepath.Base(path), TmpFileSuffix)]++
		c.mu.Unlock()
	}
	return nil
}

// take returns the counts since the last take, files sorted.
func (c *checkpointWriteCounter) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Sorted(maps.Keys(c.writes))
	clear(c.writes)
	return out
}

func openCountingManager(t *testing.T, e *managerEnv) (*LogManager, *checkpointWriteCounter) {
	t.Helper()
	c := &checkpointWriteCounter{writes: map[string]int{}}
	m, err := OpenManager("/kafka-logs", ManagerOptions{FS: vfs.WithErrors(e.fs, c.inject), Clock: e.clock,
		Scheduler: InlineScheduler{}, DefaultConfig: e.cfg})
	if err != nil {
		t.Fatal(err)
	}
	return m, c
}

// TestCheckpointsOnTheirOwnSchedules: each periodic pass writes its own
// file (Kafka's separate tasks for high watermarks, recovery points and log
// start offsets), and a file whose offsets did not change since it was
// written is not written again.
func TestCheckpointsOnTheirOwnSchedules(t *testing.T) {
	e := newManagerEnv(t)
	m, c := openCountingManager(t, e)
	defer m.Close()
	a, _ := m.GetOrCreateLog(tpA, idA, e.cfg)
	e.produce(a, 3)
	a.UpdateHighWatermark(a.LogEndOffset())
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	c.take()

	for _, pass := range []struct {
		run  func() error
		file string
	}{
		{m.CheckpointHighWatermarks, ReplicationCheckpointFile},
		{m.CheckpointRecoveryPoints, RecoveryPointCheckpointFile},
		{m.CheckpointLogStartOffsets, LogStartOffsetCheckpointFile},
	} {
		if err := pass.run(); err != nil {
			t.Fatal(err)
		}
		if got := c.take(); !slices.Equal(got, []string{pass.file}) {
			t.Fatalf("the %s pass wrote %v", pass.file, got)
		}
	}

	// Checkpoint writes them all: only the cleaner's is new.
	if err := m.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if got := c.take(); !slices.Equal(got, []string{CleanerOffsetCheckpointFile}) {
		t.Fatalf("Checkpoint after the passes wrote %v", got)
	}

	// Nothing changed: no pass writes anything.
	for _, pass := range []func() error{m.CheckpointHighWatermarks, m.CheckpointRecoveryPoints, m.CheckpointLogStartOffsets, m.Checkpoint} {
		if err := pass(); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.take(); len(got) != 0 {
		t.Fatalf("unchanged offsets written again: %v", got)
	}

	// New records moved the high watermark, not yet the recovery point.
	e.produce(a, 1)
	a.UpdateHighWatermark(a.LogEndOffset())
	if err := m.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if got := c.take(); !slices.Equal(got, []string{ReplicationCheckpointFile}) {
		t.Fatalf("after a new high watermark, wrote %v", got)
	}
	hws, err := ReadOffsetCheckpoint(e.fs, "/kafka-logs", ReplicationCheckpointFile)
	if err != nil || hws[tpA] != a.LogEndOffset() {
		t.Fatalf("high watermark checkpoint %v %v, want %d", hws, err, a.LogEndOffset())
	}
}

// TestHighWatermarkPassWritesLoweredRecoveryPoint: a truncation lowers a
// log's recovery point below the checkpointed one; the next high
// watermark pass writes the recovery points too, so a crash does not start
// recovery past the records the truncation rewrote (Kafka checkpoints the
// recovery points on truncation, LogManager.truncateTo).
func TestHighWatermarkPassWritesLoweredRecoveryPoint(t *testing.T) {
	e := newManagerEnv(t)
	m, c := openCountingManager(t, e)
	defer m.Close()
	a, _ := m.GetOrCreateLog(tpA, idA, e.cfg)
	e.produce(a, 10)
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckpointRecoveryPoints(); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckpointHighWatermarks(); err != nil {
		t.Fatal(err)
	}
	c.take()

	// A flush moves the recovery point up: that waits for its own pass.
	e.produce(a, 1)
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckpointHighWatermarks(); err != nil {
		t.Fatal(err)
	}
	if got := c.take(); len(got) != 0 {
		t.Fatalf("a raised recovery point written by the high watermark pass: %v", got)
	}
	if err := m.CheckpointRecoveryPoints(); err != nil {
		t.Fatal(err)
	}
	c.take()

	if _, err := a.TruncateTo(6); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckpointHighWatermarks(); err != nil {
		t.Fatal(err)
	}
	if got := c.take(); !slices.Equal(got, []string{RecoveryPointCheckpointFile}) {
		t.Fatalf("after a truncation the high watermark pass wrote %v", got)
	}
	rps, err := ReadOffsetCheckpoint(e.fs, "/kafka-logs", RecoveryPointCheckpointFile)
	if err != nil || rps[tpA] != 6 {
		t.Fatalf("recovery point checkpoint %v %v, want 6", rps, err)
	}
}
