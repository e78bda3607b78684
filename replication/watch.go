package replication

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
	"github.com/strait-io/strait/storage"
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

// watchers are the requests of one kind parked on one partition: Kafka's
// purgatory watch list for a TopicPartitionOperationKey. Each waiter
// re-checks its own completion condition when woken.
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

// watchKind is which changes can complete a parked request, as Kafka keeps
// one purgatory per kind of delayed operation (delayedProducePurgatory,
// delayedFetchPurgatory, delayedDeleteRecordsPurgatory) and completes each
// only on the changes it depends on.
type watchKind uint8

const (
	// watchHighWatermark: acks=all produces, coordinator and mirror
	// appends waiting for the ISR, DeleteRecords. They complete on high
	// and low watermark moves, ISR and role changes — never on an append
	// alone, which is why an append does not wake them (with RF=3 every
	// append would otherwise wake every parked produce for nothing).
	watchHighWatermark watchKind = iota
	// watchConsumerFetch: consumer long polls. They read up to the high
	// watermark but, as in Kafka's delayedFetchPurgatory, also wake on
	// appends.
	watchConsumerFetch
	// watchFollowerFetch: follower long polls. They read up to the log
	// end offset and complete on appends, log start offset moves, errors
	// and diverging epochs, never on a high watermark move alone (Kafka's
	// DelayedFetch for a follower counts bytes only), so the first
	// follower's progress does not wake the second one's fetch.
	watchFollowerFetch
	numWatchKinds
)

// yieldsOnWake says whether a woken request of this kind lets the
// goroutines already runnable go before it checks again
// (yieldToConcurrentAppends). Only follower fetches do: for them it was
// measured to carry more per round trip; for acks=all produces it made no
// difference, and consumer fetches were not measured.
func (k watchKind) yieldsOnWake() bool { return k == watchFollowerFetch }

// partitionWatchers are a partition's parked requests, by kind.
type partitionWatchers [numWatchKinds]watchers

// notifyAll wakes every parked request: for role, ISR, log start offset
// and truncation changes, and anything else whose effect on a kind is not
// worth telling apart.
func (pw *partitionWatchers) notifyAll() {
	for k := range pw {
		pw[k].notify()
	}
}

// notifyAppend is an append to the log (Kafka's appendRecords completion
// actions): fetches wake for the new data; when the append moved the high
// watermark too (an ISR of the leader alone), everything does.
func (pw *partitionWatchers) notifyAppend(hwMoved bool) {
	if hwMoved {
		pw.notifyAll()
		return
	}
	pw[watchConsumerFetch].notify()
	pw[watchFollowerFetch].notify()
}

// notifyHighWatermark is a high watermark move without an append (a
// follower's fetch advanced it): what waits for the high watermark, and
// consumer fetches reading up to it, wake.
func (pw *partitionWatchers) notifyHighWatermark() {
	pw[watchHighWatermark].notify()
	pw[watchConsumerFetch].notify()
}

// await is one delayed operation's life (Kafka's
// DelayedOperationPurgatory.tryCompleteElseWatch plus expiry): it returns
// true as soon as tryComplete does, checked when a change of the kind it
// watches lands, and false when timeout passes, ctx ends, the server begins a graceful shutdown (reqctx.Draining: answer now, as
// DelayedOperation.forceComplete does) or the manager stops. tryComplete
// runs on the caller's goroutine only, so it needs no synchronisation of
// its own. It is checked once before watching (the common case completes
// without registering) and once after, so a change that lands between the
// two is not missed.
func (r *ReplicaManager) await(ctx context.Context, kind watchKind, parts []*Partition, timeout time.Duration, tryComplete func() bool) bool {
	return r.awaitWith(ctx, kind, parts, nil, timeout, tryComplete)
}

// awaitWith is await that also wakes on extra's notifications (nil:
// none).
func (r *ReplicaManager) awaitWith(ctx context.Context, kind watchKind, parts []*Partition, extra *watchers, timeout time.Duration, tryComplete func() bool) bool {
	if tryComplete() {
		return true
	}
	if timeout <= 0 {
		return false
	}
	w := newWaiter()
	for _, p := range parts {
		p.watchers[kind].add(w)
	}
	if extra != nil {
		extra.add(w)
	}
	defer func() {
		for _, p := range parts {
			p.watchers[kind].remove(w)
		}
		if extra != nil {
			extra.remove(w)
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
			if kind.yieldsOnWake() {
				yieldToConcurrentAppends()
			}
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

// yieldToConcurrentAppends lets the goroutines already runnable go first
// when a parked follower fetch wakes. The wake comes from the first of
// appends that often land together (a producer's in-flight requests,
// several producers, several partitions of one fetch), and the others are
// typically runnable at that moment. Answering at once carried only the
// first one, and the follower came straight back for the rest. Yielding
// once still answers without waiting for anything that is not already
// running, as replica.fetch.min.bytes=1 asks, but carries more per
// round trip. Round trips are most of a replica's cost: a 512 MiB RF=3
// acks=all run took 11.4-11.7k follower fetches instead of 13-17k, and
// 6-10% less node CPU.
func yieldToConcurrentAppends() { runtime.Gosched() }

// WatchConsumerReads returns a channel that receives whenever a consumer
// fetch parked on one of tps would wake (an append, a high watermark or
// last stable offset move, a role, ISR or log start offset change), and a
// function that stops watching. Wake-ups coalesce and never block the
// notifier. Partitions this node holds no replica of are not watched. It
// is for long polls outside this package: replication/share's
// ShareFetch parks on it (Kafka's DelayedShareFetchPartitionKey, completed
// where a DelayedFetch of the partition would be).
func (r *ReplicaManager) WatchConsumerReads(tps []storage.TopicPartition) (<-chan struct{}, func()) {
	w := newWaiter()
	var parts []*Partition
	for _, tp := range tps {
		if p, ok := r.Partition(tp); ok {
			p.watchers[watchConsumerFetch].add(w)
			parts = append(parts, p)
		}
	}
	var once sync.Once
	return w.ch, func() {
		once.Do(func() {
			for _, p := range parts {
				p.watchers[watchConsumerFetch].remove(w)
			}
		})
	}
}
