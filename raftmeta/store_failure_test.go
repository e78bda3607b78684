package raftmeta

import (
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
