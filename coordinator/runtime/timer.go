package runtime

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/strait-io/strait/storage/clock"
)

// timerMaxWait bounds how long Run sleeps, so that a clock that jumps (a
// test's manual clock) is noticed.
const timerMaxWait = 250 * time.Millisecond

// Timer is a shard's timers (Kafka's CoordinatorTimer): callbacks keyed by
// K, run after a delay with the shard's lock held. Scheduling a key again
// replaces its deadline and callback, as CoordinatorTimer.schedule does.
//
// Schedule and Cancel are called with the shard lock held (from request
// handling, a writer's done callback, or another timer callback).
// Callbacks run with the shard lock held and only if their task is still
// the current one for its key, so a callback never runs after the state it
// acts on was changed by a reschedule or a cancel. A shard runs its timer
// with Run on a goroutine of its own from when it is loaded until it is
// unloaded, and Clears it when it unloads.
type Timer[K comparable] struct {
	clock clock.Clock
	lock  sync.Locker // the shard lock, taken around callbacks

	mu    sync.Mutex
	tasks map[K]*timerTask[K]
	queue taskHeap[K]
	wake  chan struct{}
}

type timerTask[K comparable] struct {
	key      K
	deadline time.Time
	fn       func()
	index    int // in the heap; -1 once popped or cancelled
}

// NewTimer returns a timer telling time by c whose callbacks run with lock
// held (the shard's mutex).
func NewTimer[K comparable](c clock.Clock, lock sync.Locker) *Timer[K] {
	return &Timer[K]{
		clock: c,
		lock:  lock,
		tasks: map[K]*timerTask[K]{},
		wake:  make(chan struct{}, 1),
	}
}

// Schedule runs fn after d, replacing any task with the same key.
func (t *Timer[K]) Schedule(key K, d time.Duration, fn func()) {
	t.mu.Lock()
	if old := t.tasks[key]; old != nil && old.index >= 0 {
		heap.Remove(&t.queue, old.index)
	}
	task := &timerTask[K]{key: key, deadline: t.clock.Now().Add(d), fn: fn}
	t.tasks[key] = task
	heap.Push(&t.queue, task)
	first := t.queue[0] == task
	t.mu.Unlock()
	if first {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

// Cancel drops the task with key, if any.
func (t *Timer[K]) Cancel(key K) {
	t.mu.Lock()
	if old := t.tasks[key]; old != nil {
		if old.index >= 0 {
			heap.Remove(&t.queue, old.index)
		}
		delete(t.tasks, key)
	}
	t.mu.Unlock()
}

// IsScheduled reports whether a task with key is pending.
func (t *Timer[K]) IsScheduled(key K) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tasks[key] != nil
}

// Clear drops every task.
func (t *Timer[K]) Clear() {
	t.mu.Lock()
	clear(t.tasks)
	t.queue = nil
	t.mu.Unlock()
}

// FireExpired runs the callbacks of every task whose deadline passed, each
// with the shard lock held. Run calls it; tests with a manual clock call
// it after advancing the clock. It must not be called with the shard lock
// held.
func (t *Timer[K]) FireExpired() {
	now := t.clock.Now()
	var due []*timerTask[K]
	t.mu.Lock()
	for len(t.queue) > 0 && !t.queue[0].deadline.After(now) {
		due = append(due, heap.Pop(&t.queue).(*timerTask[K]))
	}
	t.mu.Unlock()
	for _, task := range due {
		t.lock.Lock()
		t.mu.Lock()
		current := t.tasks[task.key] == task
		if current {
			delete(t.tasks, task.key)
		}
		t.mu.Unlock()
		if current {
			task.fn()
		}
		t.lock.Unlock()
	}
}

// Run fires tasks as they come due until ctx is done. It sleeps until the
// next deadline, but at most timerMaxWait, so that a clock that jumps (a
// test's manual clock) is noticed.
func (t *Timer[K]) Run(ctx context.Context) {
	tm := time.NewTimer(timerMaxWait)
	defer tm.Stop()
	for {
		t.FireExpired()
		wait := timerMaxWait
		t.mu.Lock()
		if len(t.queue) > 0 {
			wait = min(wait, max(t.queue[0].deadline.Sub(t.clock.Now()), 0))
		}
		t.mu.Unlock()
		tm.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
		case <-tm.C:
		}
	}
}

// taskHeap orders tasks by deadline.
type taskHeap[K comparable] []*timerTask[K]

func (h taskHeap[K]) Len() int           { return len(h) }
func (h taskHeap[K]) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h taskHeap[K]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *taskHeap[K]) Push(x any) {
	task := x.(*timerTask[K])
	task.index = len(*h)
	*h = append(*h, task)
}
func (h *taskHeap[K]) Pop() any {
	old := *h
	n := len(old)
	task := old[n-1]
	old[n-1] = nil
	task.index = -1
	*h = old[:n-1]
	return task
}
