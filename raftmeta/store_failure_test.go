package raftmeta

import (
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/hashicorp/raft"
)

// openFailingStore opens a store whose disk fails once the toggle is on.
func openFailingStore(t *testing.T) (*Store, *errorfs.Toggle) {
	t.Helper()
	disk := &errorfs.Toggle{Injector: errorfs.ErrInjected}
	s, err := OpenStore(t.TempDir(), errorfs.Wrap(vfs.Default, disk), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLogs([]*raft.Log{testLog(1)}); err != nil {
		t.Fatal(err)
	}
	return s, disk
}

// returns runs fn on its own goroutine and reports whether it returned
// within a while; a parked fn stays parked.
func returns(fn func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
		return true
	case <-time.After(300 * time.Millisecond):
		return false
	}
}

// A write the disk fails, once raft owns the store: the owner hears it
// once, and neither the write that failed nor any later one returns
// (hashicorp/raft panics on a term it cannot persist; pebble's Fatalf must
// not return). Before anyone listens, pebble's Fatalf panics as it did.
func TestStoreFailureHaltsItsWriters(t *testing.T) {
	t.Run("nobody listens", func(t *testing.T) {
		s, disk := openFailingStore(t)
		disk.On()
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), "injected") {
				t.Fatalf("failed write with no listener: recovered %v, want pebble's panic", r)
			}
			if s.Failed() {
				t.Fatal("Failed with no listener")
			}
		}()
		_ = s.StoreLogs([]*raft.Log{testLog(2)})
		t.Fatal("failed write returned")
	})
	t.Run("the owner listens", func(t *testing.T) {
		s, disk := openFailingStore(t)
		var heard atomic.Int32
		var what atomic.Value
		s.SetOnFailure(func(err error) { heard.Add(1); what.Store(err.Error()) })
		disk.On()
		if returns(func() { _ = s.StoreLogs([]*raft.Log{testLog(2)}) }) {
			t.Fatal("StoreLogs returned after the disk failed")
		}
		if returns(func() { _ = s.SetUint64([]byte("CurrentTerm"), 7) }) {
			t.Fatal("SetUint64 returned after the store failed")
		}
		if n := heard.Load(); n != 1 {
			t.Fatalf("owner heard %d failures, want 1", n)
		}
		if msg, _ := what.Load().(string); !strings.Contains(msg, "injected") {
			t.Fatalf("owner heard %q, want the injected error", msg)
		}
		if !s.Failed() {
			t.Fatal("store not Failed")
		}
	})
}

// diskFullSnapshots is a snapshot store whose every operation fails, and
// whose sinks fail their writes, as on a full disk; Cancel works.
type diskFullSnapshots struct{ cancelled atomic.Int32 }

var errDiskFull = errors.New("no space left on device")

func (d *diskFullSnapshots) Create(raft.SnapshotVersion, uint64, uint64, raft.Configuration, uint64, raft.Transport) (raft.SnapshotSink, error) {
	return nil, errDiskFull
}
func (d *diskFullSnapshots) List() ([]*raft.SnapshotMeta, error) { return nil, errDiskFull }
func (d *diskFullSnapshots) Open(string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	return nil, nil, errDiskFull
}

type diskFullSink struct{ d *diskFullSnapshots }

func (s diskFullSink) Write([]byte) (int, error) { return 0, errDiskFull }
func (s diskFullSink) Close() error              { return errDiskFull }
func (s diskFullSink) ID() string                { return "1-2-3" }
func (s diskFullSink) Cancel() error             { s.d.cancelled.Add(1); return nil }

// raft's snapshots live in the metadata log directory too: their IO
// errors take the raft log's path. With nobody listening they are
// returned; with the owner listening, each operation that meets one parks
// and the owner hears once. A cancelled snapshot is no failure.
func TestSnapshotStoreFailureHaltsItsCallers(t *testing.T) {
	s, _ := openFailingStore(t)
	inner := &diskFullSnapshots{}
	snaps := snapshotsOf(inner, s)
	if _, err := snaps.Create(1, 1, 1, raft.Configuration{}, 1, nil); !errors.Is(err, errDiskFull) {
		t.Fatalf("Create with nobody listening: %v, want the disk's error", err)
	}

	var heard atomic.Int32
	s.SetOnFailure(func(error) { heard.Add(1) })
	sink := haltingSink{SnapshotSink: diskFullSink{inner}, s: s}
	if err := sink.Cancel(); err != nil || inner.cancelled.Load() != 1 || heard.Load() != 0 {
		t.Fatalf("Cancel: %v, cancelled %d, heard %d; want it passed through unheard", err, inner.cancelled.Load(), heard.Load())
	}
	for what, op := range map[string]func(){
		"Create": func() { _, _ = snaps.Create(1, 1, 1, raft.Configuration{}, 1, nil) },
		"List":   func() { _, _ = snaps.List() },
		"Open":   func() { _, _, _ = snaps.Open("1-2-3") },
		"Write":  func() { _, _ = sink.Write([]byte("x")) },
		"Close":  func() { _ = sink.Close() },
	} {
		if returns(op) {
			t.Fatalf("%s returned after its error, with the owner listening", what)
		}
	}
	if n := heard.Load(); n != 1 || !s.Failed() {
		t.Fatalf("owner heard %d failures (Failed %v), want 1", n, s.Failed())
	}
}
