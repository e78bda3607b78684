package raftmeta

import (
	"fmt"
	"slices"
)

// A partition reassignment (KIP-455) as Kafka's controller runs it
// (ReplicationControlManager.changePartitionReassignment,
// PartitionReassignmentReplicas, PartitionReassignmentRevert):
//
//  1. AlterPartitionReassignments sets Replicas to the target followed by
//     the current replicas the target drops, and records which of them are
//     being added and removed. Added replicas start as followers out of
//     the ISR and catch up.
//  2. Once the ISR holds every target replica, the next change of the
//     partition (the leader's AlterPartition adding the last of them, or
//     the request itself when nothing needs to catch up) completes it:
//     Replicas becomes the target, the ISR loses the removed replicas, the
//     leader moves if it was removed (to the first target replica in the
//     ISR), and the leader epoch is bumped because replicas left.
//  3. A null target cancels: back to the original replicas, the ISR less
//     the replicas being added.

// reassignment is a partition's replicas with the adding and removing
// replicas of its reassignment (Kafka's PartitionReassignmentReplicas).
type reassignment struct {
	replicas, adding, removing []int32
}

// inProgress reports whether the reassignment still has replicas to add
// or remove.
func (ra reassignment) inProgress() bool { return len(ra.adding) > 0 || len(ra.removing) > 0 }

// newReassignment is the reassignment from the current replicas to a
// target: adding and removing are sorted, and the replicas are the target
// followed by the removed ones.
func newReassignment(current, target []int32) reassignment {
	ra := reassignment{replicas: slices.Clone(target)}
	for _, r := range current {
		if !slices.Contains(target, r) {
			ra.removing = append(ra.removing, r)
		}
	}
	for _, r := range target {
		if !slices.Contains(current, r) {
			ra.adding = append(ra.adding, r)
		}
	}
	slices.Sort(ra.removing)
	slices.Sort(ra.adding)
	ra.replicas = append(ra.replicas, ra.removing...)
	return ra
}

// completedReassignment is the replicas and ISR a completed reassignment
// leaves.
type completedReassignment struct {
	replicas, isr []int32
}

// maybeComplete completes the reassignment when isr (the ISR the change
// sets) holds every replica it keeps, and keeps at least one
// (PartitionReassignmentReplicas.maybeCompleteReassignment).
func (ra reassignment) maybeComplete(isr []int32) (completedReassignment, bool) {
	if !ra.inProgress() {
		return completedReassignment{}, false
	}
	removed := func(r int32) bool { return slices.Contains(ra.removing, r) }
	done := completedReassignment{
		replicas: slices.DeleteFunc(slices.Clone(ra.replicas), removed),
		isr:      slices.DeleteFunc(slices.Clone(isr), removed),
	}
	if len(done.isr) == 0 || len(done.replicas) == 0 || !containsAll(done.isr, done.replicas) {
		return completedReassignment{}, false
	}
	return done, true
}

// originalReplicas are the replicas before the reassignment began: the
// current ones less those being added.
func (ra reassignment) originalReplicas() []int32 {
	return slices.DeleteFunc(slices.Clone(ra.replicas), func(r int32) bool { return slices.Contains(ra.adding, r) })
}

// reassignment is the partition's reassignment after the change's targets.
func (pc *partitionChange) reassignment() reassignment {
	ra := reassignment{replicas: pc.p.Replicas, adding: pc.p.AddingReplicas, removing: pc.p.RemovingReplicas}
	if pc.targetReplicas != nil {
		ra.replicas = pc.targetReplicas
	}
	if pc.targetAdding != nil {
		ra.adding = pc.targetAdding
	}
	if pc.targetRemoving != nil {
		ra.removing = pc.targetRemoving
	}
	return ra
}

// setChanges sets the record's replica fields where ra differs from p
// (PartitionChangeBuilder.setAssignmentChanges): an emptied adding or
// removing list is written empty, not nil, which would mean unchanged.
func (ra reassignment) setChanges(rec *PartitionChangeRecord, p *Partition) {
	if len(ra.replicas) > 0 && !slices.Equal(ra.replicas, p.Replicas) {
		rec.Replicas = slices.Clone(ra.replicas)
	}
	if !slices.Equal(ra.adding, p.AddingReplicas) {
		rec.AddingReplicas = append([]int32{}, ra.adding...)
	}
	if !slices.Equal(ra.removing, p.RemovingReplicas) {
		rec.RemovingReplicas = append([]int32{}, ra.removing...)
	}
}

// reassignmentRevert is what cancelling a partition's reassignment leaves
// (Kafka's PartitionReassignmentRevert): the original replicas, and the
// ISR less the replicas being added. When that ISR would be empty it is
// the first original replica, and unclean is set: only a topic that allows
// unclean elections may be reverted so.
type reassignmentRevert struct {
	replicas, isr []int32
	unclean       bool
}

func revertReassignment(p *Partition) reassignmentRevert {
	ra := reassignment{replicas: p.Replicas, adding: p.AddingReplicas, removing: p.RemovingReplicas}
	rv := reassignmentRevert{replicas: ra.originalReplicas()}
	rv.isr = slices.DeleteFunc(slices.Clone(p.ISR), func(r int32) bool { return slices.Contains(ra.adding, r) })
	if len(rv.isr) == 0 && len(rv.replicas) > 0 {
		rv.isr, rv.unclean = []int32{rv.replicas[0]}, true
	}
	return rv
}

// Reassigning reports whether a reassignment of the partition is under
// way (Kafka's isReassignmentInProgress).
func (p *Partition) Reassigning() bool {
	return len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0
}

// containsAll reports whether every member of sub is in s.
func containsAll(s, sub []int32) bool {
	for _, r := range sub {
		if !slices.Contains(s, r) {
			return false
		}
	}
	return true
}

// replicasOrNil copies s, nil when it is empty: an image holds no empty
// adding or removing lists, so one replayed from a log and one restored
// from a snapshot are equal.
func replicasOrNil(s []int32) []int32 {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// validReassigning checks a partition's adding and removing replicas:
// distinct replicas of the partition, none both added and removed.
func validReassigning(p *Partition) error {
	seen := map[int32]bool{}
	for _, list := range [][]int32{p.AddingReplicas, p.RemovingReplicas} {
		for _, r := range list {
			if seen[r] || !slices.Contains(p.Replicas, r) {
				return fmt.Errorf("adding %v and removing %v: broker %d is repeated or not a replica in %v",
					p.AddingReplicas, p.RemovingReplicas, r, p.Replicas)
			}
			seen[r] = true
		}
	}
	return nil
}

// unregisterBroker removes a broker's registration at its epoch
// (ClusterControlManager.replay(UnregisterBrokerRecord)).
func (b *builder) unregisterBroker(r *UnregisterBrokerRecord) error {
	if _, err := b.brokerAt(r.BrokerID, r.BrokerEpoch); err != nil {
		return err
	}
	delete(b.brokers(), r.BrokerID)
	b.changedBrokers[r.BrokerID] = true
	return nil
}

// brokerAt is the registered broker id at epoch: a record for another
// incarnation of the broker is refused (ClusterControlManager.replay).
func (b *builder) brokerAt(id int32, epoch int64) (*Broker, error) {
	cur, ok := b.next.Brokers[id]
	if !ok {
		return nil, fmt.Errorf("broker %d is not registered", id)
	}
	if cur.Epoch != epoch {
		return nil, fmt.Errorf("broker %d has epoch %d, not %d", id, cur.Epoch, epoch)
	}
	return cur, nil
}
