package replication

import (
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// Partition is one local replica of a topic partition (Kafka's
// cluster.Partition): its log, its role in the current leader epoch and,
// when it leads, its followers' progress and the high watermark.
type Partition struct {
	tp      storage.TopicPartition
	topicID storage.TopicID
	localID int32
	log     *storage.Log
	logger  *slog.Logger

	// leaderIsrUpdateLock is Kafka's lock of the same name: appends and
	// high watermark moves hold it shared, role changes exclusively, so an
	// append never carries an epoch the partition has left.
	leaderIsrUpdateLock sync.RWMutex
	// state is the current role; replaced (never mutated) under the
	// exclusive lock, read lock-free by fetches and fencing checks.
	state atomic.Pointer[partitionState]
	// followers maps each assigned follower to its progress; replaced under
	// the exclusive lock when the leader epoch or assignment changes.
	followers atomic.Pointer[map[int32]*replica]
	minISR    atomic.Int32
	removed   atomic.Bool

	watchers watchers
}

// partitionState is a Partition's role in one leader epoch (Kafka's
// PartitionState plus the leader epoch fields of Partition).
type partitionState struct {
	leader         int32
	leaderEpoch    int32
	partitionEpoch int32
	replicas       []int32
	isr            []int32
	// leaderEpochStartOffset is the log end offset when this node became
	// leader in leaderEpoch, -1 when it is not the leader. A high watermark
	// below it is still catching up from the election (OFFSET_NOT_AVAILABLE).
	leaderEpochStartOffset int64
}

// replica is a follower's progress as the leader sees it (Kafka's Replica).
type replica struct {
	id             int32
	logEndOffset   atomic.Int64
	logStartOffset atomic.Int64
}

func newPartition(tp storage.TopicPartition, id storage.TopicID, localID int32, log *storage.Log, logger *slog.Logger) *Partition {
	p := &Partition{tp: tp, topicID: id, localID: localID, log: log, logger: logger.With("partition", tp.String())}
	p.state.Store(&partitionState{leader: -1, leaderEpoch: -1, partitionEpoch: -1, leaderEpochStartOffset: -1})
	empty := map[int32]*replica{}
	p.followers.Store(&empty)
	p.minISR.Store(1)
	return p
}

// TopicPartition names the partition.
func (p *Partition) TopicPartition() storage.TopicPartition { return p.tp }

// TopicID is the partition's topic id.
func (p *Partition) TopicID() storage.TopicID { return p.topicID }

// Log is the partition's log.
func (p *Partition) Log() *storage.Log { return p.log }

// IsLeader reports whether this node leads the partition.
func (p *Partition) IsLeader() bool { return p.state.Load().leader == p.localID }

// LeaderEpoch is the current leader epoch.
func (p *Partition) LeaderEpoch() int32 { return p.state.Load().leaderEpoch }

// HighWatermark is the log's high watermark.
func (p *Partition) HighWatermark() int64 { return p.log.HighWatermark() }

// applyState moves the partition to the leadership and ISR in pp (Kafka's
// makeLeader / makeFollower). It reports whether this node's leadership
// changed: it became or stopped being the leader, or leads a new epoch.
// The caller wakes the partition's waiters once the image that goes with
// the new state is published, so they answer with the new leader.
func (p *Partition) applyState(pp *raftmeta.Partition, minISR int32) bool {
	p.leaderIsrUpdateLock.Lock()
	defer p.leaderIsrUpdateLock.Unlock()
	p.minISR.Store(minISR)
	old := p.state.Load()
	st := &partitionState{
		leader:                 pp.Leader,
		leaderEpoch:            pp.LeaderEpoch,
		partitionEpoch:         pp.PartitionEpoch,
		replicas:               slices.Clone(pp.Replicas),
		isr:                    slices.Clone(pp.ISR),
		leaderEpochStartOffset: -1,
	}
	wasLeader := old.leader == p.localID
	isLeader := st.leader == p.localID
	newEpoch := old.leaderEpoch != st.leaderEpoch
	if isLeader {
		if !wasLeader || newEpoch {
			// A new epoch starts at the log end offset; followers must
			// prove their progress again (Kafka resets remote replica
			// state in makeLeader).
			st.leaderEpochStartOffset = p.log.LogEndOffset()
			p.followers.Store(p.newFollowers(st.replicas, nil))
		} else {
			st.leaderEpochStartOffset = old.leaderEpochStartOffset
			p.followers.Store(p.newFollowers(st.replicas, *p.followers.Load()))
		}
	}
	p.state.Store(st)
	if isLeader {
		// The ISR may have shrunk to the leader alone: the high watermark
		// can move at once.
		p.maybeIncrementHighWatermark()
	}
	return wasLeader != isLeader || (isLeader && newEpoch)
}

// newFollowers builds the follower progress map for replicas, keeping the
// progress of those already in old.
func (p *Partition) newFollowers(replicas []int32, old map[int32]*replica) *map[int32]*replica {
	m := make(map[int32]*replica, len(replicas))
	for _, id := range replicas {
		if id == p.localID {
			continue
		}
		if r, ok := old[id]; ok {
			m[id] = r
			continue
		}
		r := &replica{id: id}
		r.logEndOffset.Store(-1)
		r.logStartOffset.Store(-1)
		m[id] = r
	}
	return &m
}

// markRemoved fences the partition after it left this broker and wakes
// its waiters so they notice.
func (p *Partition) markRemoved() {
	p.leaderIsrUpdateLock.Lock()
	p.removed.Store(true)
	p.state.Store(&partitionState{leader: -1, leaderEpoch: p.state.Load().leaderEpoch, partitionEpoch: -1, leaderEpochStartOffset: -1})
	p.leaderIsrUpdateLock.Unlock()
	p.watchers.notify()
}

// checkCurrentLeaderEpoch fences a request carrying the requester's view
// of the leader epoch (KIP-320); -1 means the request has none.
func checkCurrentLeaderEpoch(requested int32, st *partitionState) error {
	switch {
	case requested < 0:
		return nil
	case requested < st.leaderEpoch:
		return kerr.FencedLeaderEpoch
	case requested > st.leaderEpoch:
		return kerr.UnknownLeaderEpoch
	}
	return nil
}

// localLogWithEpoch returns the log after fencing the requester's leader
// epoch and, when requireLeader is set, checking this node leads (Kafka's
// getLocalLog: fencing comes first).
func (p *Partition) localLogWithEpoch(currentLeaderEpoch int32, requireLeader bool) (*storage.Log, *partitionState, error) {
	st := p.state.Load()
	if err := checkCurrentLeaderEpoch(currentLeaderEpoch, st); err != nil {
		return nil, st, err
	}
	if p.removed.Load() || (requireLeader && st.leader != p.localID) {
		return nil, st, kerr.NotLeaderForPartition
	}
	return p.log, st, nil
}

// appendRecordsToLeader appends a producer's (or a coordinator's) batch with
// the current leader epoch and advances the high watermark (Kafka's
// Partition.appendRecordsToLeader).
func (p *Partition) appendRecordsToLeader(buf []byte, origin record.AppendOrigin, requiredAcks int16) (storage.AppendInfo, error) {
	p.leaderIsrUpdateLock.RLock()
	st := p.state.Load()
	if st.leader != p.localID || p.removed.Load() {
		p.leaderIsrUpdateLock.RUnlock()
		return storage.AppendInfo{}, kerr.NotLeaderForPartition
	}
	if requiredAcks == -1 && len(st.isr) < effectiveMinISR(p.minISR.Load(), len(st.replicas)) {
		// Refuse rather than write data that cannot reach
		// min.insync.replicas (Kafka's NotEnoughReplicasException).
		p.leaderIsrUpdateLock.RUnlock()
		return storage.AppendInfo{}, kerr.NotEnoughReplicas
	}
	info, err := p.log.AppendAsLeader(buf, st.leaderEpoch, origin)
	if err == nil {
		p.maybeIncrementHighWatermark()
	}
	p.leaderIsrUpdateLock.RUnlock()
	if err == nil {
		// The log end offset moved even when the high watermark did not:
		// follower long polls wait on it.
		p.watchers.notify()
	}
	return info, err
}

// maybeIncrementHighWatermark raises the high watermark to what the ISR
// has replicated. leaderIsrUpdateLock must be held (either way).
func (p *Partition) maybeIncrementHighWatermark() bool {
	st := p.state.Load()
	if st.leader != p.localID {
		return false
	}
	followers := *p.followers.Load()
	hw, ok := highWatermark(p.log.LogEndOffset(), st.isr, p.localID,
		effectiveMinISR(p.minISR.Load(), len(st.replicas)),
		func(id int32) (int64, bool) {
			r, ok := followers[id]
			if !ok {
				return 0, false
			}
			return r.logEndOffset.Load(), true
		})
	if !ok {
		return false
	}
	_, moved := p.log.MaybeIncrementHighWatermark(hw)
	return moved
}

// updateFollowerFetchState records a follower's fetch position as its log
// end offset and advances the high watermark (Kafka's
// updateFollowerFetchState). It reports false when replicaID is not an
// assigned follower.
func (p *Partition) updateFollowerFetchState(replicaID int32, fetchOffset, followerStartOffset int64) bool {
	p.leaderIsrUpdateLock.RLock()
	r, ok := (*p.followers.Load())[replicaID]
	changed := false
	if ok {
		changed = r.logEndOffset.Swap(fetchOffset) != fetchOffset
		changed = r.logStartOffset.Swap(followerStartOffset) != followerStartOffset || changed
		if changed {
			p.maybeIncrementHighWatermark()
		}
	}
	p.leaderIsrUpdateLock.RUnlock()
	if changed {
		// acks=all produces and DeleteRecords wait on follower progress;
		// a repeated fetch at the same offset changes nothing and wakes
		// no one (it would wake the fetch itself when it long-polls).
		p.watchers.notify()
	}
	return ok
}

// isAssignedFollower reports whether id is one of the partition's
// followers in the current epoch.
func (p *Partition) isAssignedFollower(id int32) bool {
	_, ok := (*p.followers.Load())[id]
	return ok
}

// checkEnoughReplicasReachOffset says whether an acks=all append ending
// before requiredOffset is acknowledged (Kafka's method of the same name):
// done once the high watermark passes it, with NOT_ENOUGH_REPLICAS_AFTER_APPEND
// if the ISR shrank below min.insync.replicas meanwhile.
func (p *Partition) checkEnoughReplicasReachOffset(requiredOffset int64) (bool, error) {
	st := p.state.Load()
	if st.leader != p.localID || p.removed.Load() {
		return false, kerr.NotLeaderForPartition
	}
	if p.log.HighWatermark() < requiredOffset {
		return false, nil
	}
	if len(st.isr) < effectiveMinISR(p.minISR.Load(), len(st.replicas)) {
		return true, kerr.NotEnoughReplicasAfterAppend
	}
	return true, nil
}

// lowWatermark is the smallest log start offset among the replicas (Kafka's
// lowWatermarkIfLeader): DeleteRecords is done when it reaches the target.
// Followers that have not reported yet are skipped.
func (p *Partition) lowWatermark() int64 {
	low := p.log.LogStartOffset()
	for _, r := range *p.followers.Load() {
		if s := r.logStartOffset.Load(); s >= 0 && s < low {
			low = s
		}
	}
	return low
}

// endOffsetForEpoch answers OffsetForLeaderEpoch for the local log (KIP-101,
// KIP-279). Kafka writes the new leader epoch into the epoch cache when a
// replica becomes leader (maybeAssignEpochStartOffset); storage.Log has no
// such call yet, so the cache learns the epoch only with its first append.
// Until then the answer is the one that cache entry would give: the current
// epoch ends at the log end offset, and an epoch between the cached latest
// and the current one ends where the current one starts.
func (p *Partition) endOffsetForEpoch(st *partitionState, requested int32) (int32, int64, bool) {
	if requested < 0 {
		return -1, -1, false
	}
	latest, haveLatest := p.log.LatestEpoch()
	if st.leader == p.localID && st.leaderEpochStartOffset >= 0 && (!haveLatest || latest < st.leaderEpoch) {
		switch {
		case requested == st.leaderEpoch:
			return st.leaderEpoch, p.log.LogEndOffset(), true
		case requested > st.leaderEpoch:
			return -1, -1, false
		case haveLatest && requested >= latest:
			return latest, st.leaderEpochStartOffset, true
		case !haveLatest:
			// No epoch below the current one is known: the requester must
			// truncate to where this epoch starts.
			return requested, st.leaderEpochStartOffset, true
		}
	}
	return p.log.EndOffsetForEpoch(requested)
}

// lastOffsetForLeaderEpoch is Kafka's Partition.lastOffsetForLeaderEpoch:
// fencing, leadership, then the epoch lookup; an unknown epoch answers
// -1/-1 without an error.
func (p *Partition) lastOffsetForLeaderEpoch(currentLeaderEpoch, requested int32, requireLeader bool) (int32, int64, error) {
	_, st, err := p.localLogWithEpoch(currentLeaderEpoch, requireLeader)
	if err != nil {
		return -1, -1, err
	}
	ep, end, ok := p.endOffsetForEpoch(st, requested)
	if !ok {
		return -1, -1, nil
	}
	return ep, end, nil
}
