package raftmeta

import "slices"

// electionKind is PartitionChangeBuilder.Election.
type electionKind int8

const (
	// electOnline keeps the current leader if it may lead, else takes the
	// first replica, in replica order, that is in the ISR and may lead.
	electOnline electionKind = iota
	// electPreferred prefers the first replica (the preferred leader) when
	// it is in the ISR and may lead, then as electOnline.
	electPreferred
	// electUnclean is electOnline, then any replica that may lead, even out
	// of the ISR: the ISR becomes that replica alone (data may be lost).
	electUnclean
)

// partitionChange computes the PartitionChangeRecord that moves a partition
// to a target ISR and replica assignment and elects its leader, Kafka's
// PartitionChangeBuilder without eligible leader replicas (KIP-966): it is
// a pure function of the partition, the targets and which brokers may
// lead. Like Kafka's, every change completes a reassignment whose target
// ISR holds all its target replicas (completeReassignmentIfNeeded).
type partitionChange struct {
	p *Partition
	// mayLead reports whether a broker may lead (registered, unfenced, not
	// shutting down, or the broker being unfenced); replica membership is
	// checked separately.
	mayLead  func(int32) bool
	election electionKind
	// targetISR replaces the ISR (nil: unchanged). An empty target leaves
	// the ISR as it is, as Kafka does without ELR: a partition whose last
	// ISR member is fenced keeps it in the ISR and goes leaderless, so that
	// member can lead again when it comes back.
	targetISR []int32
	// minLeaderEpoch is PartitionChangeRecord.MinLeaderEpoch (KIP-1279).
	minLeaderEpoch int32
	// targetReplicas, targetAdding and targetRemoving replace the
	// partition's replicas and its reassignment's adding and removing
	// replicas (KIP-455, partition_reassign.go); nil: unchanged.
	targetReplicas, targetAdding, targetRemoving []int32
}

// electLeader returns the new leader (NoLeader if none) and whether the
// election was unclean (PartitionChangeBuilder.electLeader).
func (pc *partitionChange) electLeader(replicas, isr []int32) (int32, bool) {
	valid := func(r int32) bool { return r >= 0 && slices.Contains(isr, r) && pc.mayLead(r) }
	if pc.election == electPreferred {
		if pref := replicas[0]; valid(pref) {
			return pref, false
		}
	}
	if valid(pc.p.Leader) {
		// The current leader meets every constraint: no change.
		return pc.p.Leader, false
	}
	for _, r := range replicas {
		if valid(r) {
			return r, false
		}
	}
	if pc.election == electUnclean {
		for _, r := range replicas {
			if pc.mayLead(r) {
				return r, true
			}
		}
	}
	return NoLeader, false
}

// build returns the record, or nil when nothing would change
// (PartitionChangeBuilder.build and changeRecordIsNoOp).
func (pc *partitionChange) build() *PartitionChangeRecord {
	target := pc.p.ISR
	if pc.targetISR != nil {
		target = pc.targetISR
	}
	ra := pc.reassignment()
	if done, ok := ra.maybeComplete(target); ok {
		ra, target = reassignment{replicas: done.replicas}, done.isr
	}
	rec := &PartitionChangeRecord{
		PartitionID: pc.p.Index,
		TopicID:     pc.p.TopicID,
		Leader:      NoLeaderChange,
	}
	leader, unclean := pc.electLeader(ra.replicas, target)
	if leader != pc.p.Leader {
		rec.Leader = leader
		if unclean {
			// An unclean leader starts a new ISR of itself alone.
			rec.ISR = []int32{leader}
		}
	}
	if rec.Leader == NoLeaderChange && !containsAll(ra.replicas, pc.p.Replicas) {
		// A replica leaves the assignment: a new leader epoch fences it
		// (triggerLeaderEpochBumpForReplicaReassignmentIfNeeded).
		rec.Leader = pc.p.Leader
	}
	if rec.ISR == nil && len(target) > 0 && !slices.Equal(target, pc.p.ISR) {
		rec.ISR = slices.Clone(target)
	}
	if pc.minLeaderEpoch > pc.p.LeaderEpoch {
		rec.MinLeaderEpoch = pc.minLeaderEpoch
	}
	ra.setChanges(rec, pc.p)
	if rec.ISR == nil && rec.Leader == NoLeaderChange && rec.MinLeaderEpoch == 0 &&
		rec.Replicas == nil && rec.AddingReplicas == nil && rec.RemovingReplicas == nil {
		return nil
	}
	return rec
}

// apply is the partition after rec, as the FSM computes it (for answers
// that report the resulting state before the record is applied).
func (p *Partition) apply(rec *PartitionChangeRecord) *Partition {
	np := *p
	if rec.ISR != nil {
		np.ISR = slices.Clone(rec.ISR)
	}
	if rec.Replicas != nil {
		np.Replicas = slices.Clone(rec.Replicas)
	}
	if rec.AddingReplicas != nil {
		np.AddingReplicas = replicasOrNil(rec.AddingReplicas)
	}
	if rec.RemovingReplicas != nil {
		np.RemovingReplicas = replicasOrNil(rec.RemovingReplicas)
	}
	bump := rec.MinLeaderEpoch > np.LeaderEpoch
	if rec.Leader != NoLeaderChange {
		np.Leader = rec.Leader
		bump = true
	}
	if bump {
		np.LeaderEpoch = max(np.LeaderEpoch+1, rec.MinLeaderEpoch)
	}
	np.PartitionEpoch++
	return &np
}

// without returns s without the broker id, in order.
func without(s []int32, id int32) []int32 {
	out := make([]int32, 0, len(s))
	for _, r := range s {
		if r != id {
			out = append(out, r)
		}
	}
	return out
}

// leaderAndISRUpdates is ReplicationControlManager.generateLeaderAndIsrUpdates:
// for each partition chosen by match, it removes brokerToRemove from the ISR
// and elects a leader where the current one may no longer lead. A broker
// other than brokerToRemove may lead when it is active in img or is
// brokerToAdd (a broker being unfenced in the same batch, still fenced in
// img). Unclean elections follow each topic's unclean.leader.election.enable.
// Partitions are visited by topic name and index, so the records are the
// same on every run.
func (c *replicationControl) leaderAndISRUpdates(img *Image, brokerToRemove, brokerToAdd int32, match func(*Partition) bool) []Record {
	mayLead := func(r int32) bool {
		return r != brokerToRemove && (r == brokerToAdd || img.BrokerActive(r))
	}
	var records []Record
	for _, name := range img.TopicNames() {
		t := img.Topics[name]
		unclean := c.uncleanLeaderElection(img, name)
		for _, p := range t.Partitions {
			if !match(p) {
				continue
			}
			pc := partitionChange{p: p, mayLead: mayLead, targetISR: without(p.ISR, brokerToRemove)}
			if unclean {
				pc.election = electUnclean
			}
			if rec := pc.build(); rec != nil {
				records = append(records, rec)
			}
		}
	}
	return records
}

// inISROrLeading matches the partitions a broker is in the ISR of or leads
// (BrokersToIsrs.partitionsWithBrokerInIsr; a leader is always in its ISR,
// but a stale one must lose leadership too).
func inISROrLeading(id int32) func(*Partition) bool {
	return func(p *Partition) bool { return p.Leader == id || slices.Contains(p.ISR, id) }
}

// leaderless matches partitions without a leader
// (BrokersToIsrs.partitionsWithNoLeader).
func leaderless(p *Partition) bool { return p.Leader == NoLeader }

// leads reports whether a broker leads any partition
// (BrokersToIsrs.hasLeaderships).
func leads(img *Image, id int32) bool {
	for _, t := range img.Topics {
		for _, p := range t.Partitions {
			if p.Leader == id {
				return true
			}
		}
	}
	return false
}
