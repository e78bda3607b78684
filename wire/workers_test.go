package wire

import (
	"sync"
	"testing"
	"time"
)

// Requests one after another run on one kept goroutine; requests that
// block at once each get a goroutine of their own, so none waits for
// another; at most maxIdleWorkers stay once they finish, and all end when
// the server stops.
func TestRequestWorkers(t *testing.T) {
	done := make(chan struct{})
	w := newRequestWorkers(done)
	var mu sync.Mutex
	ran := 0
	w.run = func(task) { mu.Lock(); ran++; mu.Unlock() }
	for i := range 50 {
		w.start(task{})
		waitFor(t, 5*time.Second, "the request to finish", func() bool { mu.Lock(); defer mu.Unlock(); return ran == i+1 })
		waitFor(t, 5*time.Second, "the worker to wait again", func() bool { return w.idle.Load() == 1 })
	}
	if n := w.spawned.Load(); n != 1 {
		t.Fatalf("50 requests in turn started %d goroutines, want 1", n)
	}

	const blocked = maxIdleWorkers + 16
	release := make(chan struct{})
	var running sync.WaitGroup
	running.Add(blocked)
	w.run = func(task) { running.Done(); <-release }
	for range blocked {
		w.start(task{})
	}
	running.Wait() // every request runs at once: none queued behind another
	close(release)
	waitFor(t, 5*time.Second, "the workers to settle", func() bool { return w.idle.Load() == maxIdleWorkers })
	if n := w.spawned.Load(); n != blocked {
		t.Fatalf("%d concurrent requests started %d goroutines in all, want %d", blocked, n, blocked)
	}

	close(done)
	waitFor(t, 5*time.Second, "the idle workers to end", func() bool { return w.idle.Load() == 0 })
}
