package coordinator

import "errors"

// reconciliation is the input of reconcile: where the member should go and
// what the group knows (CurrentAssignmentBuilder's with* arguments).
type reconciliation struct {
	targetEpoch int32
	target      assignment
	// partitionEpoch is the epoch of a partition's current owner, -1 when
	// it is free.
	partitionEpoch func(t topicID, p int32) int32
	// owned is what the member reported owning; nil when it left the
	// field out.
	owned ownedPartitions
	// subscribed are the topic ids the member subscribes to, by name or
	// through its resolved regex, among the topics that exist.
	subscribed map[topicID]bool
	// enforceSubscription strips topics the member no longer subscribes to
	// from its assignment at once (the subscription changed in this
	// heartbeat).
	enforceSubscription bool
}

// errUnknownMemberState fences a member in a state this coordinator does
// not know that still owns partitions.
var errUnknownMemberState = errors.New("The consumer group member is in a unknown state. The member must abandon all its partitions and rejoin.")

// reconcile moves a member towards its target assignment, one step
// (CurrentAssignmentBuilder.build), and dates the partitions it gains
// with its new epoch (KIP-1251).
func reconcile(m consumerMember, r reconciliation) (consumerMember, error) {
	next, err := reconcileStep(m, r)
	if err != nil {
		return m, err
	}
	return next.withAssignmentEpochs(m.assignmentEpochs), nil
}

// reconcileStep is one step of the reconciliation. A partition the member must give up
// stays with it, pending revocation, until a heartbeat no longer reports
// it owned; only then does the member move to the target epoch. A
// partition it should get but another member still owns is held back
// (UNRELEASED_PARTITIONS) until that member releases it.
func reconcileStep(m consumerMember, r reconciliation) (consumerMember, error) {
	switch m.state {
	case memberStable:
		if m.memberEpoch != r.targetEpoch {
			return computeNextAssignment(m, r, m.memberEpoch, m.assigned), nil
		}
		if r.enforceSubscription {
			return updateCurrentAssignment(m, r), nil
		}
		return m, nil
	case memberUnrevokedPartitions:
		if r.owned.ownsAny(m.pendingRevocation) {
			if r.enforceSubscription {
				return updateCurrentAssignment(m, r), nil
			}
			return m, nil
		}
		return computeNextAssignment(m, r, m.memberEpoch, m.assigned), nil
	case memberUnreleasedPartitions:
		return computeNextAssignment(m, r, m.memberEpoch, m.assigned), nil
	default:
		if r.owned == nil || len(r.owned) > 0 {
			return m, errUnknownMemberState
		}
		return computeNextAssignment(m, r, r.targetEpoch, m.assigned), nil
	}
}

// updateCurrentAssignment moves the partitions of topics the member no
// longer subscribes to into revocation, without a full reconciliation
// (CurrentAssignmentBuilder.updateCurrentAssignment).
func updateCurrentAssignment(m consumerMember, r reconciliation) consumerMember {
	var assigned, pending assignment
	if len(r.subscribed) == 0 && len(m.pendingRevocation) == 0 {
		assigned, pending = assignment{}, m.assigned
	} else {
		assigned = filterAssignment(m.assigned, func(t topicID, _ int32) bool { return r.subscribed[t] })
		dropped := filterAssignment(m.assigned, func(t topicID, _ int32) bool { return !r.subscribed[t] })
		pending = unionAssignments(m.pendingRevocation, dropped)
	}
	if equalAssignments(assigned, m.assigned) {
		return m
	}
	if len(pending) > 0 && r.owned.ownsAny(pending) {
		next := m.withEpoch(m.memberEpoch)
		next.assigned = assigned
		next.state = memberUnrevokedPartitions
		next.pendingRevocation = pending
		return next
	}
	// The dropped partitions were revoked already: the member only
	// shrinks, keeping its state and epochs.
	next := m
	next.assigned = assigned
	return next
}

// computeNextAssignment is CurrentAssignmentBuilder.computeNextAssignment:
// keep what the member has of its target, revoke the rest, and add the
// target partitions that are free.
func computeNextAssignment(m consumerMember, r reconciliation, memberEpoch int32, current assignment) consumerMember {
	target := filterAssignment(r.target, func(t topicID, _ int32) bool { return r.subscribed == nil || r.subscribed[t] })
	kept := filterAssignment(current, target.contains)
	revoke := filterAssignment(current, func(t topicID, p int32) bool { return !target.contains(t, p) })
	unreleased := false
	add := filterAssignment(target, func(t topicID, p int32) bool {
		if kept.contains(t, p) {
			return false
		}
		// A partition this member itself still holds pending revocation is
		// not unreleased: only one member owns a partition at a time.
		if r.partitionEpoch(t, p) != -1 && !m.pendingRevocation.contains(t, p) {
			unreleased = true
			return false
		}
		return true
	})
	next := m
	switch {
	case len(revoke) > 0 && r.owned.ownsAny(revoke):
		next = m.withEpoch(memberEpoch)
		next.state = memberUnrevokedPartitions
		next.assigned = kept
		next.pendingRevocation = revoke
		return next
	case len(add) > 0:
		next = m.withEpoch(r.targetEpoch)
		next.assigned = unionAssignments(kept, add)
	default:
		next = m.withEpoch(r.targetEpoch)
		next.assigned = kept
	}
	next.pendingRevocation = assignment{}
	next.state = memberStable
	if unreleased {
		next.state = memberUnreleasedPartitions
	}
	return next
}
