package replication

import (
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/producer"
	"github.com/strait-io/strait/storage/record"
)

// Partition is one local replica of a topic partition (Kafka's
// cluster.Partition): its log, its role in the current leader epoch and,
// when it leads, its followers' progress, the ISR and the high watermark.
type Partition struct {
	tp      storage.TopicPartition
	topicID storage.TopicID
	localID int32
	// log is the partition's log, replaced only when a replica moves
	// between log directories (AlterReplicaLogDirs, log_dir_move.go) under
	// the exclusive leaderIsrUpdateLock. Every write holds that lock shared
	// and so sees the current log; a read loads it once per call.
	log    atomic.Pointer[storage.Log]
	logger *slog.Logger
	mgr    *ReplicaManager

	// leaderIsrUpdateLock is Kafka's lock of the same name: appends and
	// high watermark moves hold it shared, role and ISR changes
	// exclusively, so an append never carries an epoch the partition has
	// left.
	leaderIsrUpdateLock sync.RWMutex
	// state is the current role; replaced (never mutated) under the
	// exclusive lock, read lock-free by fetches and fencing checks.
	state atomic.Pointer[partitionState]
	// followers maps each assigned follower to its progress; replaced under
	// the exclusive lock when the assignment changes.
	followers atomic.Pointer[map[int32]*replica]
	minISR    atomic.Int32
	removed   atomic.Bool

	// fetchSeq numbers follower fetches in the order their reads start;
	// truncation is what the last truncation of this leader's log (the
	// mirror's) left, so progress read before it is not counted.
	fetchSeq   atomic.Uint64
	truncation atomic.Pointer[leaderTruncation]
	// mirrorAccess is the write access the mirror set (mirror_access.go).
	mirrorAccess atomic.Pointer[mirrorAccess]

	watchers partitionWatchers
}

// partitionState is a Partition's role in one leader epoch (Kafka's
// PartitionState plus the leader epoch fields of Partition).
type partitionState struct {
	leader         int32
	leaderEpoch    int32
	partitionEpoch int32
	replicas       []int32
	// isr is the committed ISR: the controller's.
	isr []int32
	// maximalIsr is the ISR the high watermark and acks=all count
	// (KIP-497): the committed one plus a replica whose addition is in
	// flight, since a larger ISR only makes the high watermark stricter.
	maximalIsr []int32
	// pending is the ISR change in flight to the controller, nil when the
	// ISR is committed (Kafka's PendingExpandIsr / PendingShrinkIsr). At
	// most one is in flight per partition.
	pending *pendingIsrChange
	// leaderEpochStartOffset is the log end offset when this node became
	// leader in leaderEpoch, -1 when it is not the leader. A high watermark
	// below it is still catching up from the election (OFFSET_NOT_AVAILABLE).
	leaderEpochStartOffset int64
}

// pendingIsrChange is an AlterPartition in flight (Kafka's
// sentLeaderAndIsr): the proposed ISR with each member's broker epoch as
// of the proposal, so a member that restarted since cannot join on the
// strength of its previous life's progress (KIP-903).
type pendingIsrChange struct {
	newIsr       []int32
	brokerEpochs []int64
	expand       bool
}

// isInflight reports whether an ISR change awaits the controller.
func (s *partitionState) isInflight() bool { return s.pending != nil }

func newPartition(tp storage.TopicPartition, id storage.TopicID, mgr *ReplicaManager, log *storage.Log) *Partition {
	p := &Partition{tp: tp, topicID: id, localID: mgr.nodeID, mgr: mgr, logger: mgr.logger.With("partition", tp.String())}
	p.log.Store(log)
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
func (p *Partition) Log() *storage.Log { return p.log.Load() }

// IsLeader reports whether this node leads the partition.
func (p *Partition) IsLeader() bool { return p.state.Load().leader == p.localID }

// Leader is the leader's node id, -1 when there is none.
func (p *Partition) Leader() int32 { return p.state.Load().leader }

// LeaderEpoch is the current leader epoch.
func (p *Partition) LeaderEpoch() int32 { return p.state.Load().leaderEpoch }

// PartitionEpoch is the current partition epoch.
func (p *Partition) PartitionEpoch() int32 { return p.state.Load().partitionEpoch }

// ISR is the committed in-sync replica set.
func (p *Partition) ISR() []int32 { return slices.Clone(p.state.Load().isr) }

// MaximalISR is the ISR counted for the high watermark: the committed one
// plus a replica whose addition is in flight (KIP-497).
func (p *Partition) MaximalISR() []int32 { return slices.Clone(p.state.Load().maximalIsr) }

// IsrChangeInflight reports whether an AlterPartition awaits the controller.
func (p *Partition) IsrChangeInflight() bool { return p.state.Load().isInflight() }

// HighWatermark is the log's high watermark.
func (p *Partition) HighWatermark() int64 { return p.Log().HighWatermark() }

// roleChange is what applyState did, for the replica manager.
type roleChange struct {
	// leadership: this node became or stopped being the leader, or leads
	// a new epoch (the listeners hear of it).
	leadership bool
	// newFollowerEpoch: this node follows in a new leader epoch; its
	// fetcher restarts (Kafka's makeFollower returning true).
	newFollowerEpoch bool
	// skipped: the change was older than the state (a lower partition
	// epoch, as after an AlterPartition answer applied first).
	skipped bool
}

// applyState moves the partition to the leadership and ISR in pp (Kafka's
// makeLeader / makeFollower). A state with a lower partition epoch than
// the current one is skipped: the AlterPartition answer that produced the
// current one arrived first. The caller wakes the partition's waiters once
// the image that goes with the new state is published, so they answer
// with the new leader.
func (p *Partition) applyState(pp *raftmeta.Partition, minISR int32, nowMs int64) roleChange {
	p.leaderIsrUpdateLock.Lock()
	defer p.leaderIsrUpdateLock.Unlock()
	old := p.state.Load()
	if pp.PartitionEpoch < old.partitionEpoch {
		p.logger.Info("skipped a partition state older than the current one", "partitionEpoch", pp.PartitionEpoch,
			"currentPartitionEpoch", old.partitionEpoch)
		return roleChange{skipped: true}
	}
	p.minISR.Store(minISR)
	if pp.PartitionEpoch == old.partitionEpoch && pp.LeaderEpoch == old.leaderEpoch && pp.Leader == old.leader {
		// The state the partition already has: an AlterPartition answer
		// applied it before the metadata did. Unlike Kafka's makeLeader,
		// keep an ISR change proposed since: its request may still reach
		// the controller, which takes it at this partition epoch, and
		// forgetting it would let the high watermark pass the member it
		// adds before the controller's ISR has it.
		return roleChange{}
	}
	st := &partitionState{
		leader:                 pp.Leader,
		leaderEpoch:            pp.LeaderEpoch,
		partitionEpoch:         pp.PartitionEpoch,
		replicas:               slices.Clone(pp.Replicas),
		isr:                    slices.Clone(pp.ISR),
		maximalIsr:             slices.Clone(pp.ISR),
		leaderEpochStartOffset: -1,
	}
	wasLeader := old.leader == p.localID
	isLeader := st.leader == p.localID
	newEpoch := st.leaderEpoch > old.leaderEpoch
	if isLeader {
		followers := p.newFollowers(st.replicas, *p.followers.Load())
		if newEpoch {
			// A new epoch starts at the log end offset; the followers'
			// progress is reset (Kafka's makeLeader: resetReplicaState).
			st.leaderEpochStartOffset = p.Log().LogEndOffset()
			for _, r := range *followers {
				r.reset(nowMs, st.leaderEpochStartOffset, !wasLeader, slices.Contains(st.isr, r.id))
			}
			p.logger.Info("leader", "leaderEpoch", st.leaderEpoch, "startOffset", st.leaderEpochStartOffset,
				"partitionEpoch", st.partitionEpoch, "highWatermark", p.Log().HighWatermark(), "isr", st.isr)
		} else {
			st.leaderEpochStartOffset = old.leaderEpochStartOffset
		}
		p.followers.Store(followers)
	} else if newEpoch {
		empty := map[int32]*replica{}
		p.followers.Store(&empty)
		p.logger.Info("follower", "leaderEpoch", st.leaderEpoch, "leader", st.leader,
			"logEndOffset", p.Log().LogEndOffset(), "highWatermark", p.Log().HighWatermark())
	}
	p.state.Store(st)
	if isLeader {
		// The ISR may have shrunk to the leader alone: the high watermark
		// can move at once.
		p.maybeIncrementHighWatermark(nowMs)
	}
	return roleChange{
		leadership:       wasLeader != isLeader || (isLeader && newEpoch),
		newFollowerEpoch: !isLeader && newEpoch,
	}
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
		m[id] = newReplica(id)
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
	p.watchers.notifyAll()
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
	return p.Log(), st, nil
}

// appendRecordsToLeader appends a producer's (or a coordinator's) batch with
// the current leader epoch and advances the high watermark (Kafka's
// Partition.appendRecordsToLeader).
func (p *Partition) appendRecordsToLeader(buf []byte, origin record.AppendOrigin, requiredAcks int16) (storage.AppendInfo, error) {
	return p.appendVerifiedToLeader(buf, origin, requiredAcks, nil)
}

// appendVerifiedToLeader is appendRecordsToLeader for a transactional
// write verified with guard (KIP-890, txn_verify.go); nil requires none.
func (p *Partition) appendVerifiedToLeader(buf []byte, origin record.AppendOrigin, requiredAcks int16, guard *producer.VerificationGuard) (storage.AppendInfo, error) {
	p.leaderIsrUpdateLock.RLock()
	st := p.state.Load()
	if st.leader != p.localID || p.removed.Load() {
		p.leaderIsrUpdateLock.RUnlock()
		return storage.AppendInfo{}, kerr.NotLeaderForPartition
	}
	if origin == record.OriginClient {
		// A mirror topic's partition is written by its mirror only
		// (KIP-1279); the check is under the lock SetMirrorAccess takes
		// exclusively, so no client append slips past a change to
		// read-only.
		if err := p.checkMirrorWrite(p.mgr.currentImage(), st); err != nil {
			p.leaderIsrUpdateLock.RUnlock()
			return storage.AppendInfo{}, err
		}
	}
	if requiredAcks == -1 && len(st.isr) < effectiveMinISR(p.minISR.Load(), len(st.replicas)) {
		// Refuse rather than write data that cannot reach
		// min.insync.replicas (Kafka's NotEnoughReplicasException).
		p.leaderIsrUpdateLock.RUnlock()
		return storage.AppendInfo{}, kerr.NotEnoughReplicas
	}
	info, err := p.Log().AppendAsLeaderVerified(buf, st.leaderEpoch, origin, guard)
	hwMoved := false
	if err == nil {
		hwMoved = p.maybeIncrementHighWatermark(p.mgr.nowMs())
	}
	p.leaderIsrUpdateLock.RUnlock()
	if err == nil {
		// The log end offset moved even when the high watermark did not:
		// follower long polls wait on it.
		p.watchers.notifyAppend(hwMoved)
		p.nudgeFollowersNotFetching()
	}
	return info, err
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
	// With no batch of the current epoch in the log, the current epoch
	// starts at the log end offset: where this node was elected, unless
	// the mirror appended the source's batches (with their own, lower
	// epochs) or truncated the log since. The log end offset is read
	// before the latest epoch: an append stamps the epoch cache before it
	// moves the log end offset, so a log end offset that includes a batch
	// of the current epoch is never paired with an older latest epoch.
	leo := p.Log().LogEndOffset()
	latest, haveLatest := p.Log().LatestEpoch()
	if st.leader == p.localID && st.leaderEpochStartOffset >= 0 && (!haveLatest || latest < st.leaderEpoch) {
		switch {
		case requested == st.leaderEpoch:
			return st.leaderEpoch, leo, true
		case requested > st.leaderEpoch:
			return -1, -1, false
		case haveLatest && requested >= latest:
			return latest, leo, true
		case !haveLatest:
			// No epoch below the current one is known: the requester must
			// truncate to where this epoch starts.
			return requested, leo, true
		}
	}
	return p.Log().EndOffsetForEpoch(requested)
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
