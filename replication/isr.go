package replication

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// isReplicaIsrEligible: a follower may join (or hold back the high
// watermark as if in) the ISR only while its broker is registered,
// unfenced and not in controlled shutdown, and its fetches carry the
// broker epoch of that registration, or -1 (Kafka's isReplicaIsrEligible
// in KRaft mode; a restarted broker registers with a new epoch, so fetches
// of its previous life do not count). The controller refuses a broker in
// controlled shutdown with INELIGIBLE_REPLICA: proposing it anyway retries
// the refused AlterPartition on every fetch until it stops.
func (r *ReplicaManager) isReplicaIsrEligible(id int32, s *replicaState) bool {
	b, ok := r.currentImage().Brokers[id]
	if !ok || b.Fenced || b.InControlledShutdown || !s.hasBrokerEpoch {
		return false
	}
	return s.brokerEpoch == -1 || s.brokerEpoch == b.Epoch
}

// updateFollowerFetchState records a follower's fetch position as its log
// end offset, adds it to the ISR when it caught up and advances the high
// watermark (Kafka's updateFollowerFetchState). leaderEndOffset is the
// leader's log end offset when the fetch was read. It reports false when
// replicaID is not an assigned follower, or when its fetch carries an
// older broker epoch than its registration (a fetch from before a restart,
// NOT_LEADER_OR_FOLLOWER in Kafka).
func (p *Partition) updateFollowerFetchState(replicaID int32, fetchOffset, followerStartOffset, leaderEndOffset, brokerEpoch, nowMs int64, seq uint64) bool {
	p.leaderIsrUpdateLock.RLock()
	r, ok := (*p.followers.Load())[replicaID]
	if ok && brokerEpoch != -1 {
		if b, known := p.mgr.currentImage().Brokers[replicaID]; known && b.Epoch > brokerEpoch {
			ok = false
		}
	}
	if ok && p.staleFetch(seq) {
		// The fetch read the log before the mirror truncated it: its
		// offset says nothing about the follower's log now.
		p.leaderIsrUpdateLock.RUnlock()
		return true
	}
	var endMoved, startMoved bool
	if ok {
		prev := r.snapshot()
		r.updateFetchState(fetchOffset, followerStartOffset, nowMs, leaderEndOffset, brokerEpoch, seq)
		endMoved, startMoved = prev.logEndOffset != fetchOffset, prev.logStartOffset != followerStartOffset
	}
	p.leaderIsrUpdateLock.RUnlock()
	if !ok {
		return false
	}
	p.maybeExpandIsr(r, nowMs)
	var hwMoved bool
	if endMoved {
		p.leaderIsrUpdateLock.RLock()
		hwMoved = p.maybeIncrementHighWatermark(nowMs)
		p.leaderIsrUpdateLock.RUnlock()
	}
	// acks=all produces and consumer fetches wait on the high watermark,
	// DeleteRecords on the followers' log start offsets (the low
	// watermark). Progress that moves neither wakes no one, as in Kafka's
	// updateFollowerFetchState (tryCompleteDelayedRequests only when the
	// HW or LW was incremented): with RF=3 the first follower to report an
	// offset would otherwise wake every parked produce and the other
	// follower's long poll for nothing.
	switch {
	case startMoved:
		p.watchers.notifyAll()
	case hwMoved:
		p.watchers.notifyHighWatermark()
	}
	return true
}

// isAssignedFollower reports whether id is one of the partition's
// followers in the current epoch.
func (p *Partition) isAssignedFollower(id int32) bool {
	_, ok := (*p.followers.Load())[id]
	return ok
}

// needsExpandIsr: r is not in the ISR, no change is in flight, and r has
// caught up with the high watermark and with the start of this leader
// epoch (Kafka's needsExpandIsr and isFollowerInSync: joining before
// reaching the epoch start could let it win an election missing committed
// data of the epoch).
func (p *Partition) needsExpandIsr(st *partitionState, r *replica) bool {
	if st.leader != p.localID || st.isInflight() || slices.Contains(st.isr, r.id) {
		return false
	}
	s := r.snapshot()
	return s.logEndOffset >= p.Log().HighWatermark() && s.logEndOffset >= p.epochStartOffset(st) &&
		p.mgr.isReplicaIsrEligible(r.id, s)
}

// maybeExpandIsr proposes adding r to the ISR (Kafka's maybeExpandIsr). The
// proposal counts in the maximal ISR at once: it only makes the high
// watermark stricter, and is safe whether or not the controller takes it.
func (p *Partition) maybeExpandIsr(r *replica, nowMs int64) {
	if !p.needsExpandIsr(p.state.Load(), r) {
		return
	}
	p.leaderIsrUpdateLock.Lock()
	st := p.state.Load()
	if !p.needsExpandIsr(st, r) {
		p.leaderIsrUpdateLock.Unlock()
		return
	}
	proposed := *st
	newIsr := append(slices.Clone(st.isr), r.id)
	proposed.maximalIsr = newIsr
	proposed.pending = &pendingIsrChange{newIsr: newIsr, brokerEpochs: p.isrBrokerEpochs(newIsr), expand: true}
	p.state.Store(&proposed)
	p.leaderIsrUpdateLock.Unlock()
	p.logger.Info("expanding the ISR", "isr", st.isr, "adding", r.id, "leaderEpoch", st.leaderEpoch,
		"partitionEpoch", st.partitionEpoch)
	// Outside the lock: the answer may move the high watermark.
	p.mgr.alterPartition.submit(p, &proposed)
}

// outOfSyncReplicas are the ISR followers that have not caught up with
// the leader's log end within replica.lag.time.max.ms, or are no longer
// assigned (Kafka's getOutOfSyncReplicas); none while a change is in
// flight.
func (p *Partition) outOfSyncReplicas(st *partitionState, nowMs int64) []int32 {
	if st.leader != p.localID || st.isInflight() {
		return nil
	}
	leo := p.Log().LogEndOffset()
	followers := *p.followers.Load()
	var out []int32
	for _, id := range st.isr {
		if id == p.localID {
			continue
		}
		r, ok := followers[id]
		if !ok || !r.snapshot().isCaughtUp(leo, nowMs, p.mgr.cfg.ReplicaLagTimeMaxMs) {
			out = append(out, id)
		}
	}
	return out
}

// maybeShrinkIsr proposes removing lagging followers from the ISR (Kafka's
// maybeShrinkIsr). Unlike an expansion, the proposal does not count until
// the controller takes it: a smaller ISR would let the high watermark
// advance past what a member it keeps has.
func (p *Partition) maybeShrinkIsr(nowMs int64) {
	if len(p.outOfSyncReplicas(p.state.Load(), nowMs)) == 0 {
		return
	}
	p.leaderIsrUpdateLock.Lock()
	st := p.state.Load()
	out := p.outOfSyncReplicas(st, nowMs)
	if len(out) == 0 {
		p.leaderIsrUpdateLock.Unlock()
		return
	}
	newIsr := slices.DeleteFunc(slices.Clone(st.isr), func(id int32) bool { return slices.Contains(out, id) })
	proposed := *st
	proposed.pending = &pendingIsrChange{newIsr: newIsr, brokerEpochs: p.isrBrokerEpochs(newIsr)}
	p.state.Store(&proposed)
	p.leaderIsrUpdateLock.Unlock()
	p.logger.Info("shrinking the ISR", "isr", st.isr, "outOfSync", out, "highWatermark", p.Log().HighWatermark(),
		"logEndOffset", p.Log().LogEndOffset())
	p.mgr.alterPartition.submit(p, &proposed)
}

// isrBrokerEpochs are the broker epochs sent with a proposed ISR (Kafka's
// addBrokerEpochToIsr): this broker's own, and for followers the epoch of
// their fetches, -1 for one that has not fetched in this leadership (the
// controller then skips the check; a member that crashed meanwhile was
// fenced and left the ISR, bumping the partition epoch, so the proposal
// fails anyway).
func (p *Partition) isrBrokerEpochs(isr []int32) []int64 {
	followers := *p.followers.Load()
	out := make([]int64, len(isr))
	for i, id := range isr {
		out[i] = -1
		if id == p.localID {
			out[i] = p.mgr.cfg.BrokerEpoch()
		} else if r, ok := followers[id]; ok {
			if s := r.snapshot(); s.hasBrokerEpoch {
				out[i] = s.brokerEpoch
			}
		}
	}
	return out
}

// alterPartitionResult is the controller's answer for one partition.
type alterPartitionResult struct {
	errorCode      int16
	leaderEpoch    int32
	partitionEpoch int32
	isr            []int32
}

// completeAlterPartition applies the controller's answer to a proposed ISR
// change (Kafka's submitAlterPartition callback with
// handleAlterPartitionUpdate / handleAlterPartitionError). An answer for a
// state the partition has left (new metadata arrived) is ignored. It
// reports whether to send the proposal again.
func (p *Partition) completeAlterPartition(proposed *partitionState, res alterPartitionResult) (retry bool) {
	nowMs := p.mgr.nowMs()
	p.leaderIsrUpdateLock.Lock()
	st := p.state.Load()
	if st != proposed {
		p.leaderIsrUpdateLock.Unlock()
		p.logger.Debug("ignoring an AlterPartition answer for a state already replaced")
		return false
	}
	moved := false
	switch res.errorCode {
	case 0:
		switch {
		case res.leaderEpoch != st.leaderEpoch:
			p.logger.Debug("ignoring an ISR update from another leader epoch", "leaderEpoch", res.leaderEpoch)
		case res.partitionEpoch < st.partitionEpoch:
			p.logger.Debug("ignoring an ISR update older than the state", "partitionEpoch", res.partitionEpoch)
		default:
			next := *st
			next.isr, next.maximalIsr, next.pending = slices.Clone(res.isr), slices.Clone(res.isr), nil
			next.partitionEpoch = res.partitionEpoch
			p.state.Store(&next)
			p.logger.Info("ISR updated", "isr", next.isr, "partitionEpoch", next.partitionEpoch)
			// The ISR may now be the leader alone.
			moved = p.maybeIncrementHighWatermark(nowMs)
		}
	case kerr.OperationNotAttempted.Code, kerr.IneligibleReplica.Code:
		// The controller says the partition epoch is right and nothing
		// was applied: back to the committed ISR.
		next := *st
		next.maximalIsr, next.pending = slices.Clone(st.isr), nil
		p.state.Store(&next)
		p.logger.Info("the controller refused the ISR change", "code", res.errorCode, "isr", st.isr)
	case kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicID.Code, kerr.FencedLeaderEpoch.Code,
		kerr.InvalidUpdateVersion.Code, kerr.InvalidRequest.Code, kerr.NewLeaderElected.Code:
		// The partition's metadata is stale: stay pending until the
		// metadata delta replaces the state.
		p.logger.Debug("ISR change failed; awaiting new metadata", "code", res.errorCode)
	default:
		retry = true
	}
	p.leaderIsrUpdateLock.Unlock()
	if moved {
		p.watchers.notifyAll()
	}
	return retry
}
