package replication

import "sync/atomic"

// replica is a follower as its leader sees it (Kafka's cluster.Replica):
// an immutable snapshot replaced as fetches arrive.
type replica struct {
	id    int32
	state atomic.Pointer[replicaState]
}

// replicaState is Kafka's ReplicaState.
type replicaState struct {
	// logStartOffset and logEndOffset are the follower's, as its last
	// fetch reported them; -1 until it fetches in this leadership.
	logStartOffset int64
	logEndOffset   int64
	// lastFetchLeaderLogEndOffset is the leader's log end offset when the
	// previous fetch arrived, and lastFetchTimeMs that fetch's time: a
	// follower that reaches it now was caught up then.
	lastFetchLeaderLogEndOffset int64
	lastFetchTimeMs             int64
	// lastCaughtUpTimeMs is the last time the follower had everything the
	// leader had; the ISR is those caught up within replica.lag.time.max.ms.
	lastCaughtUpTimeMs int64
	// brokerEpoch is the epoch the follower's fetch carried
	// (ReplicaState.Epoch); hasBrokerEpoch is false before any fetch.
	brokerEpoch    int64
	hasBrokerEpoch bool
	// fetchSeq is the Partition.fetchSeq of the fetch recorded last, 0
	// before any in this leadership: the mirror's ReplicasAt counts only
	// fetches that started after its handle was created.
	fetchSeq uint64
}

func newReplica(id int32) *replica {
	r := &replica{id: id}
	r.state.Store(&replicaState{logStartOffset: -1, logEndOffset: -1, lastFetchLeaderLogEndOffset: 0})
	return r
}

func (r *replica) snapshot() *replicaState { return r.state.Load() }

// isCaughtUp: the follower has the leader's log end offset, or had it
// within maxLagMs (Kafka's ReplicaState.isCaughtUp).
func (s *replicaState) isCaughtUp(leaderEndOffset, nowMs, maxLagMs int64) bool {
	return leaderEndOffset == s.logEndOffset || nowMs-s.lastCaughtUpTimeMs <= maxLagMs
}

// updateFetchState records a follower fetch (Kafka's
// Replica.updateFetchStateOrThrow): a fetch at or past the leader's log
// end offset now makes the follower caught up now; one at or past the log
// end offset of the previous fetch makes it caught up as of that fetch, so
// a follower kept just behind by a stream of small appends still counts
// as in sync.
func (r *replica) updateFetchState(fetchOffset, startOffset, nowMs, leaderEndOffset, brokerEpoch int64, seq uint64) {
	for {
		cur := r.state.Load()
		caughtUp := cur.lastCaughtUpTimeMs
		switch {
		case fetchOffset >= leaderEndOffset:
			caughtUp = max(caughtUp, nowMs)
		case fetchOffset >= cur.lastFetchLeaderLogEndOffset:
			caughtUp = max(caughtUp, cur.lastFetchTimeMs)
		}
		next := &replicaState{
			logStartOffset:              startOffset,
			logEndOffset:                fetchOffset,
			lastFetchLeaderLogEndOffset: max(leaderEndOffset, cur.lastFetchLeaderLogEndOffset),
			lastFetchTimeMs:             nowMs,
			lastCaughtUpTimeMs:          caughtUp,
			brokerEpoch:                 brokerEpoch,
			hasBrokerEpoch:              true,
			fetchSeq:                    max(seq, cur.fetchSeq),
		}
		if r.state.CompareAndSwap(cur, next) {
			return
		}
	}
}

// reset reinitialises the follower when this node leads a new epoch
// (Kafka's Replica.resetReplicaState). An ISR member counts as caught up
// now, anyone else as never, so the high watermark is not held back by a
// follower outside the ISR. A leader that was a follower knows nothing of
// the others' logs; one re-elected keeps what it knew, but a follower
// outside the ISR must fetch again before it may rejoin.
func (r *replica) reset(nowMs, leaderEndOffset int64, isNewLeader, inSync bool) {
	caughtUp := int64(0)
	if inSync {
		caughtUp = nowMs
	}
	cur := r.state.Load()
	if isNewLeader {
		r.state.Store(&replicaState{logStartOffset: -1, logEndOffset: -1, lastFetchLeaderLogEndOffset: -1,
			lastCaughtUpTimeMs: caughtUp})
		return
	}
	next := *cur
	next.lastFetchLeaderLogEndOffset, next.lastCaughtUpTimeMs, next.lastFetchTimeMs = leaderEndOffset, caughtUp, 0
	if inSync {
		next.lastFetchTimeMs = nowMs
	}
	r.state.Store(&next)
}

// clampToLeaderEnd lowers the follower's progress to the leader's log end
// offset after the leader's log was truncated (the mirror's truncations):
// the follower has at most what the leader kept, and a stale log end
// offset above it must not let the high watermark count offsets the
// follower holds from before the truncation.
func (r *replica) clampToLeaderEnd(leaderEndOffset int64) {
	for {
		cur := r.state.Load()
		if cur.logEndOffset <= leaderEndOffset && cur.lastFetchLeaderLogEndOffset <= leaderEndOffset {
			return
		}
		next := *cur
		next.logEndOffset = min(cur.logEndOffset, leaderEndOffset)
		next.lastFetchLeaderLogEndOffset = min(cur.lastFetchLeaderLogEndOffset, leaderEndOffset)
		if r.state.CompareAndSwap(cur, &next) {
			return
		}
	}
}
