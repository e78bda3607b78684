package raftmeta

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// maxCatchUpWait bounds Quorum.CatchUp: a command this node stored but
// never sees committed (it lost touch with the leader, which a new leader
// may then overwrite) must not hold a request for long.
const maxCatchUpWait = 5 * time.Second

// appliedMark is the raft index up to which the FSM has applied the log
// and told its subscribers, and a way to wait for it to pass an index.
type appliedMark struct {
	idx atomic.Uint64
	mu  sync.Mutex
	ch  chan struct{} // closed at the next advance; nil while nobody waits
}

// advance moves the mark to i if that is further and wakes the waiters.
func (m *appliedMark) advance(i uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i <= m.idx.Load() {
		return
	}
	m.idx.Store(i)
	if m.ch != nil {
		close(m.ch)
		m.ch = nil
	}
}

// wait blocks until the mark reaches target, ctx ends or timeout fires,
// and reports whether the mark reached target.
func (m *appliedMark) wait(ctx context.Context, target uint64, timeout <-chan time.Time) bool {
	for {
		m.mu.Lock()
		if m.idx.Load() >= target {
			m.mu.Unlock()
			return true
		}
		if m.ch == nil {
			m.ch = make(chan struct{})
		}
		ch := m.ch
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		case <-timeout:
			return false
		}
	}
}

// Why a broker can wait for metadata it holds but has not applied.
//
// A committed controller write reaches the brokers in two steps: each
// stores the entry when the leader sends it, then applies it when it
// learns the entry committed (at once, thanks to the commit notice). The
// controller answers the client after the commit, so a client that
// created a topic and then asked another broker for its metadata could
// arrive between the two steps and be told UNKNOWN_TOPIC_OR_PARTITION;
// franz-go then waits 250 ms before asking again. A broker asked about a
// topic it does not know now first applies what it already stored. One
// that stored nothing new answers at once, as before.

// CatchUp waits until the FSM has applied, and told its subscribers of,
// every command this node's log holds or is storing, for at most
// maxCatchUpWait. It reports whether there was such a command.
func (q *Quorum) CatchUp(ctx context.Context) bool {
	target := q.store.LastCommand()
	if q.fsm.applied.idx.Load() >= target {
		return false
	}
	t := time.NewTimer(maxCatchUpWait)
	defer t.Stop()
	q.fsm.applied.wait(ctx, target, t.C)
	return true
}
