package runtime

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strait-io/strait/storage/clock"
)

type countingLocker struct{ locks atomic.Int32 }

func (f *countingLocker) Lock()   { f.locks.Add(1) }
func (f *countingLocker) Unlock() {}

// Scheduling a key again replaces its task, Cancel drops it, due tasks
// fire in deadline order under the lock, and a callback may reschedule its
// own key.
func TestTimerReplaceCancelAndOrder(t *testing.T) {
	clk := clock.NewManual(time.Unix(0, 0))
	var mu countingLocker
	tm := NewTimer[string](clk, &mu)
	var fired []string
	tm.Schedule("a", 3*time.Second, func() { fired = append(fired, "a") })
	tm.Schedule("b", 1*time.Second, func() { fired = append(fired, "b") })
	tm.Schedule("c", 2*time.Second, func() { fired = append(fired, "c") })
	tm.Schedule("b", 4*time.Second, func() { fired = append(fired, "b2") }) // replaces b
	tm.Cancel("c")
	if !tm.IsScheduled("b") || tm.IsScheduled("c") {
		t.Fatalf("IsScheduled b %t c %t, want true false", tm.IsScheduled("b"), tm.IsScheduled("c"))
	}
	clk.Advance(3 * time.Second)
	tm.FireExpired()
	if strings.Join(fired, ",") != "a" {
		t.Fatalf("fired %v at 3s, want [a]", fired)
	}
	if tm.IsScheduled("a") {
		t.Fatal("a is still scheduled after it fired")
	}
	// A callback may reschedule itself.
	tm.Schedule("r", time.Second, func() {
		fired = append(fired, "r")
		tm.Schedule("r", time.Second, func() { fired = append(fired, "r2") })
	})
	clk.Advance(time.Second)
	tm.FireExpired()
	clk.Advance(time.Second)
	tm.FireExpired()
	if strings.Join(fired, ",") != "a,b2,r,r2" {
		t.Fatalf("fired %v, want a,b2,r,r2", fired)
	}
	if mu.locks.Load() != 4 {
		t.Fatalf("callbacks ran %d times under the lock, want 4", mu.locks.Load())
	}

	tm.Schedule("x", time.Second, func() { fired = append(fired, "x") })
	tm.Clear()
	clk.Advance(time.Hour)
	tm.FireExpired()
	if tm.IsScheduled("x") || len(fired) != 4 {
		t.Fatalf("after Clear: scheduled %t, fired %v", tm.IsScheduled("x"), fired)
	}
}

// Run fires a task scheduled ahead of everything at once, and notices a
// deadline passed by a manual clock without being woken; it returns when
// its context ends.
func TestTimerRun(t *testing.T) {
	clk := clock.NewManual(time.Unix(0, 0))
	var mu sync.Mutex
	tm := NewTimer[int](clk, &mu)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); tm.Run(ctx) }()

	fired := make(chan int, 2)
	tm.Schedule(1, 0, func() {
		if mu.TryLock() {
			t.Error("callback ran without the shard lock")
		}
		fired <- 1
	})
	recvWithin(t, fired, 1)
	tm.Schedule(2, time.Minute, func() { fired <- 2 })
	clk.Advance(time.Minute)
	recvWithin(t, fired, 2)
	cancel()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

func recvWithin[T comparable](t *testing.T, ch <-chan T, want T) {
	t.Helper()
	select {
	case got := <-ch:
		if got != want {
			t.Fatalf("got %v, want %v", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("nothing received, want %v", want)
	}
}
