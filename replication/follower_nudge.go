package replication

import (
	"sync"
	"sync/atomic"
)

// Why a leader cuts short a follower's long poll when one of its new
// partitions gets data.
//
// A follower fetches every partition it replicates from one leader in one
// request, and adds a partition it has just been assigned (a new topic, a
// leader elected elsewhere) only to its next request: the one in flight is
// parked on the leader for up to replica.fetch.wait.max.ms (500 ms) while
// its partitions are idle, and an append to the new partition wakes only
// fetches that include it. An acks=all produce to a topic created a moment
// before therefore waited about 500 ms for the followers, and so did the
// first one to a partition whose leader had just moved. Kafka's fetcher
// threads behave the same way (AbstractFetcherThread adds partitions to
// the next fetch); we do better at no cost to the steady state: an append
// to a partition whose follower has not fetched it in this leadership ends
// that follower's parked fetch, and its next one carries the partition.
//
// The nudge is counted per follower broker: a parked fetch completes when
// the count moved since it parked, whatever its own partitions hold. A
// follower that goes on leaving the partition out (it has not created it
// yet: each broker applies the assignment on its own) is nudged again by
// the next append, never in a loop of its own. Polling again soon instead
// was tried: the follower then often asked for the partition before the
// leader had created it, and the leader's error for a partition it does
// not know yet backs the partition off for replica.fetch.backoff.ms, a
// second.

// followerNudges holds, per follower broker, its parked fetches and the
// nudges sent to it.
type followerNudges struct {
	mu   sync.RWMutex
	byID map[int32]*followerNudge
}

type followerNudge struct {
	parked watchers
	count  atomic.Uint64
}

// of returns follower id's nudge state, created on first use.
func (f *followerNudges) of(id int32) *followerNudge {
	f.mu.RLock()
	n, ok := f.byID[id]
	f.mu.RUnlock()
	if ok {
		return n
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok = f.byID[id]
	if !ok {
		if f.byID == nil {
			f.byID = map[int32]*followerNudge{}
		}
		n = &followerNudge{}
		f.byID[id] = n
	}
	return n
}

// nudgeWatch is one parked fetch's view of its follower's nudges: those
// counted after seen end it. The zero value, for a consumer's fetch,
// watches nothing.
type nudgeWatch struct {
	n    *followerNudge
	seen uint64
}

// watchNudges starts watching the nudges of the follower sending params,
// if it is one.
func (r *ReplicaManager) watchNudges(params *fetchParams) nudgeWatch {
	if !params.isFromFollower() {
		return nudgeWatch{}
	}
	n := r.nudges.of(params.replicaID)
	return nudgeWatch{n: n, seen: n.count.Load()}
}

// nudged reports whether the follower was nudged since the watch began.
func (w nudgeWatch) nudged() bool { return w.n != nil && w.n.count.Load() != w.seen }

// watchers is where the fetch parks to hear of nudges (nil: nowhere).
func (w nudgeWatch) watchers() *watchers {
	if w.n == nil {
		return nil
	}
	return &w.n.parked
}

// nudge ends follower id's parked fetches.
func (f *followerNudges) nudge(id int32) {
	n := f.of(id)
	n.count.Add(1)
	n.parked.notify()
}

// nudgeFollowersNotFetching nudges each follower of p that has not fetched
// p since this node became its leader; called after an append to p.
func (p *Partition) nudgeFollowersNotFetching() {
	for id, r := range *p.followers.Load() {
		if !r.snapshot().hasBrokerEpoch {
			p.mgr.nudges.nudge(id)
		}
	}
}
