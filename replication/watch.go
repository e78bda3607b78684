package replication

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strait-io/strait/wire/reqctx"
)

// waiter is one parked request (a delayed operation). Its channel holds at
// most one wake-up, so a notifier never blocks and wake-ups coalesce.
type waiter struct{ ch chan struct{} }

func newWaiter() *waiter { return &waiter{ch: make(chan struct{}, 1)} }

func (w *waiter) wake() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// watchers are the requests parked on one partition: Kafka's purgatory
// watch list for a TopicPartitionOperationKey. A partition notifies them
// after every append, high watermark move, follower progress update and role
// change; each waiter re-checks its own completion condition.
type watchers struct {
	// n counts the registered waiters so the hot path (an append with no
	// one waiting) skips the mutex. A waiter increments n before checking
	// its condition and a notifier loads n after publishing its change;
	// sequentially consistent atomics mean one of them sees the other, so
	// no wake-up is lost.
	n   atomic.Int32
	mu  sync.Mutex
	set map[*waiter]struct{}
}

func (ws *watchers) add(w *waiter) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.set == nil {
		ws.set = map[*waiter]struct{}{}
	}
	if _, ok := ws.set[w]; !ok {
		ws.set[w] = struct{}{}
		ws.n.Add(1)
	}
}

func (ws *watchers) remove(w *waiter) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if _, ok := ws.set[w]; ok {
		delete(ws.set, w)
		ws.n.Add(-1)
	}
}

// notify wakes every waiter (Kafka's checkAndComplete for the key).
func (ws *watchers) notify() {
	if ws.n.Load() == 0 {
		return
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for w := range ws.set {
		w.wake()
	}
}

// await is one delayed operation's life (Kafka's
// DelayedOperationPurgatory.tryCompleteElseWatch plus expiry): it returns
// true as soon as tryComplete does, and false when timeout passes, ctx ends,
// the server begins a graceful shutdown (reqctx.Draining: answer now, as
// DelayedOperation.forceComplete does) or the manager stops. tryComplete
// runs on the caller's goroutine only, so it needs no synchronisation of
// its own. It is checked once before watching (the common case completes
// without registering) and once after, so a change that lands between the
// two is not missed.
func (r *ReplicaManager) await(ctx context.Context, parts []*Partition, timeout time.Duration, tryComplete func() bool) bool {
	if tryComplete() {
		return true
	}
	if timeout <= 0 {
		return false
	}
	w := newWaiter()
	for _, p := range parts {
		p.watchers.add(w)
	}
	defer func() {
		for _, p := range parts {
			p.watchers.remove(w)
		}
	}()
	if tryComplete() {
		return true
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	draining := reqctx.Draining(ctx) // a graceful shutdown expires the wait
	for {
		select {
		case <-w.ch:
			if tryComplete() {
				return true
			}
		case <-t.C:
			return false
		case <-draining:
			return false
		case <-ctx.Done():
			return false
		case <-r.done:
			return false
		}
	}
}
