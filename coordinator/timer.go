package coordinator

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/strait-io/strait/storage/clock"
)

// timerKind names what a timer is for; with the group and member ids it
// keys the timer, so scheduling the same key again replaces the deadline.
type timerKind int8

const (
	timerHeartbeat  timerKind = iota // a member's session timeout
	timerJoin                        // the join phase: rebalance timeout or initial delay
	timerSync                        // the sync phase: members that never sent SyncGroup
	timerExpiration                  // offsets.retention.check.interval.ms
)

type timerKey struct {
	kind   timerKind
	group  string
	member string
}

type timerTask struct {
	key      timerKey
	deadline time.Time
	fn       func()
	index    int // in the heap; -1 once popped or cancelled
}

// shardTimer is a shard's timers (Kafka's CoordinatorTimer). schedule and
// cancel are called with the shard mutex held; callbacks run with the
// shard mutex held and only if their task is still the current one for
// its key, so a callback never runs after the state it acts on was
// changed by a reschedule or a cancel.
type shardTimer struct {
	clock   clock.Clock
	lock    sync.Locker // the shard mutex, taken around callbacks
	maxWait time.Duration

	mu    sync.Mutex
	tasks map[timerKey]*timerTask
	queue taskHeap
	wake  chan struct{}
}

func newShardTimer(c clock.Clock, lock sync.Locker) *shardTimer {
	return &shardTimer{
		clock:   c,
		lock:    lock,
		maxWait: 250 * time.Millisecond,
		tasks:   map[timerKey]*timerTask{},
		wake:    make(chan struct{}, 1),
	}
}

// schedule runs fn after d, replacing any task with the same key.
func (t *shardTimer) schedule(key timerKey, d time.Duration, fn func()) {
	t.mu.Lock()
	if old := t.tasks[key]; old != nil && old.index >= 0 {
		heap.Remove(&t.queue, old.index)
	}
	task := &timerTask{key: key, deadline: t.clock.Now().Add(d), fn: fn}
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

// cancel drops the task with key, if any.
func (t *shardTimer) cancel(key timerKey) {
	t.mu.Lock()
	if old := t.tasks[key]; old != nil {
		if old.index >= 0 {
			heap.Remove(&t.queue, old.index)
		}
		delete(t.tasks, key)
	}
	t.mu.Unlock()
}

// isScheduled reports whether a task with key is pending.
func (t *shardTimer) isScheduled(key timerKey) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tasks[key] != nil
}

// clear drops every task.
func (t *shardTimer) clear() {
	t.mu.Lock()
	clear(t.tasks)
	t.queue = nil
	t.mu.Unlock()
}

// fireExpired runs the callbacks of every task whose deadline passed.
func (t *shardTimer) fireExpired() {
	now := t.clock.Now()
	var due []*timerTask
	t.mu.Lock()
	for len(t.queue) > 0 && !t.queue[0].deadline.After(now) {
		due = append(due, heap.Pop(&t.queue).(*timerTask))
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

// run fires tasks as they come due until ctx is done. It sleeps until the
// next deadline, but at most maxWait, so that a clock that jumps (a test's
// manual clock) is noticed.
func (t *shardTimer) run(ctx context.Context) {
	tm := time.NewTimer(t.maxWait)
	defer tm.Stop()
	for {
		t.fireExpired()
		wait := t.maxWait
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
type taskHeap []*timerTask

func (h taskHeap) Len() int           { return len(h) }
func (h taskHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h taskHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *taskHeap) Push(x any) {
	task := x.(*timerTask)
	task.index = len(*h)
	*h = append(*h, task)
}
func (h *taskHeap) Pop() any {
	old := *h
	n := len(old)
	task := old[n-1]
	old[n-1] = nil
	task.index = -1
	*h = old[:n-1]
	return task
}
