package replication

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// followerProgress is what the high watermark needs of one follower.
type followerProgress struct {
	logEndOffset int64
	// counts: the follower is in the maximal ISR, or caught up and
	// eligible to join it, so the leader waits for it.
	counts bool
}

// highWatermark is the offset every replica the leader waits for has
// reached (Kafka's Partition.maybeIncrementLeaderHW): the leader's log end
// offset lowered to the log end offset of each follower in the maximal
// ISR, and of each follower caught up enough to join it (so a follower
// catching up is not outrun by a high watermark that only the leader
// sets). A follower that has not fetched in this leadership has offset
// -1 and holds the high watermark where it is. ok is false when the
// committed ISR is below the effective min.insync.replicas, where Kafka 4
// (KIP-966) holds the high watermark.
func highWatermark(leaderLEO int64, isrSize, effectiveMinISR int, followers []followerProgress) (hw int64, ok bool) {
	if isrSize < effectiveMinISR {
		return 0, false
	}
	hw = leaderLEO
	for _, f := range followers {
		if f.counts && f.logEndOffset < hw {
			hw = f.logEndOffset
		}
	}
	return hw, true
}

// effectiveMinISR is min.insync.replicas capped at the replication factor
// (Kafka's Partition.effectiveMinIsr), so a topic configured above its
// replica count can still be written.
func effectiveMinISR(minISR int32, replicas int) int {
	return min(int(max(minISR, 1)), max(replicas, 1))
}

// maybeIncrementHighWatermark raises the high watermark to what the
// replicas the leader waits for have. leaderIsrUpdateLock must be held
// (either way).
func (p *Partition) maybeIncrementHighWatermark(nowMs int64) bool {
	st := p.state.Load()
	if st.leader != p.localID {
		return false
	}
	leo := p.Log().LogEndOffset()
	followers := *p.followers.Load()
	progress := make([]followerProgress, 0, len(followers))
	for _, r := range followers {
		s := r.snapshot()
		counts := slices.Contains(st.maximalIsr, r.id) ||
			(s.isCaughtUp(leo, nowMs, p.mgr.cfg.ReplicaLagTimeMaxMs) && p.mgr.isReplicaIsrEligible(r.id, s))
		progress = append(progress, followerProgress{logEndOffset: s.logEndOffset, counts: counts})
	}
	hw, ok := highWatermark(leo, len(st.isr), effectiveMinISR(p.minISR.Load(), len(st.replicas)), progress)
	if !ok {
		return false
	}
	_, moved := p.Log().MaybeIncrementHighWatermark(hw)
	return moved
}

// checkEnoughReplicasReachOffset says whether an acks=all append ending
// before requiredOffset is acknowledged (Kafka's method of the same name):
// done once the high watermark passes it, with
// NOT_ENOUGH_REPLICAS_AFTER_APPEND if the maximal ISR is below
// min.insync.replicas by then (it shrank after the append).
func (p *Partition) checkEnoughReplicasReachOffset(requiredOffset int64) (bool, error) {
	st := p.state.Load()
	if st.leader != p.localID || p.removed.Load() {
		return false, kerr.NotLeaderForPartition
	}
	if p.Log().HighWatermark() < requiredOffset {
		return false, nil
	}
	if len(st.maximalIsr) < effectiveMinISR(p.minISR.Load(), len(st.replicas)) {
		return true, kerr.NotEnoughReplicasAfterAppend
	}
	return true, nil
}

// CheckEnoughReplicasReachOffset is checkEnoughReplicasReachOffset for
// callers that wait for acks=all themselves (a simulation's producers):
// done reports the wait is over, err why it failed.
func (p *Partition) CheckEnoughReplicasReachOffset(requiredOffset int64) (done bool, err error) {
	return p.checkEnoughReplicasReachOffset(requiredOffset)
}

// lowWatermark is the smallest log start offset among the replicas (Kafka's
// lowWatermarkIfLeader): DeleteRecords is done when it reaches the target.
// Followers that have not reported yet are skipped.
func (p *Partition) lowWatermark() int64 {
	low := p.Log().LogStartOffset()
	for _, r := range *p.followers.Load() {
		if s := r.snapshot().logStartOffset; s >= 0 && s < low {
			low = s
		}
	}
	return low
}
