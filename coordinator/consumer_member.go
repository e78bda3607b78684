package coordinator

import "slices"

// memberState is a consumer group member's reconciliation state
// (MemberState; the byte is what ConsumerGroupCurrentMemberAssignmentValue
// stores).
type memberState int8

const (
	// memberStable: the member has its assignment for its epoch.
	memberStable memberState = 0
	// memberUnrevokedPartitions: the member must revoke partitions before
	// it moves to the next epoch.
	memberUnrevokedPartitions memberState = 1
	// memberUnreleasedPartitions: the member is at the target epoch but
	// waits for partitions other members still own.
	memberUnreleasedPartitions memberState = 2
	// memberUnknown is a state this coordinator does not know (a newer
	// one's record): the member is fenced on its next heartbeat.
	memberUnknown memberState = 127
)

func (s memberState) String() string {
	switch s {
	case memberStable:
		return "STABLE"
	case memberUnrevokedPartitions:
		return "UNREVOKED_PARTITIONS"
	case memberUnreleasedPartitions:
		return "UNRELEASED_PARTITIONS"
	}
	return "UNKNOWN"
}

func memberStateFromByte(b int8) memberState {
	switch s := memberState(b); s {
	case memberStable, memberUnrevokedPartitions, memberUnreleasedPartitions:
		return s
	}
	return memberUnknown
}

// Member epochs with a meaning of their own (ConsumerGroupHeartbeatRequest).
const (
	joinGroupMemberEpoch        int32 = 0
	leaveGroupMemberEpoch       int32 = -1
	leaveGroupStaticMemberEpoch int32 = -2
)

// consumerMember is a member of a consumer group (ConsumerGroupMember). It
// is a value: changes build a new member (its with* methods copy), so a
// heartbeat can compare the member before and after and write records for
// the difference, as Kafka's builder does. Slices and maps are never
// changed in place.
type consumerMember struct {
	id string
	// instanceID is group.instance.id ("" for a dynamic member; Kafka
	// refuses an empty one), rackID client.rack ("" for none).
	instanceID string
	rackID     string
	clientID   string
	clientHost string
	// subscribedTopicNames are sorted; subscribedTopicRegex is "" for none.
	subscribedTopicNames []string
	subscribedTopicRegex string
	rebalanceTimeoutMs   int32
	serverAssignor       string // "" for none

	state               memberState
	memberEpoch         int32
	previousMemberEpoch int32
	assigned            assignment
	pendingRevocation   assignment
	// assignmentEpochs holds, for each partition of assigned and
	// pendingRevocation, the member epoch at which the member was given
	// it (KIP-1251): an OffsetCommit at an older member epoch is taken
	// for a partition the member was given at that epoch or before.
	assignmentEpochs assignmentEpochs
}

// newConsumerMember is ConsumerGroupMember.Builder(memberId)'s defaults.
func newConsumerMember(id string) consumerMember {
	return consumerMember{
		id:                  id,
		state:               memberStable,
		previousMemberEpoch: -1,
		rebalanceTimeoutMs:  -1,
		assigned:            assignment{},
		pendingRevocation:   assignment{},
		assignmentEpochs:    assignmentEpochs{},
	}
}

func (m *consumerMember) isStatic() bool { return m.instanceID != "" }

// isReconciledTo reports whether the member is stable at epoch.
func (m *consumerMember) isReconciledTo(epoch int32) bool {
	return m.state == memberStable && m.memberEpoch == epoch
}

// withEpoch moves the member to epoch, remembering the one it leaves
// (Builder.updateMemberEpoch).
func (m consumerMember) withEpoch(epoch int32) consumerMember {
	m.previousMemberEpoch = m.memberEpoch
	m.memberEpoch = epoch
	return m
}

// sameMetadata compares what ConsumerGroupMemberMetadataValue holds.
func (m *consumerMember) sameMetadata(o *consumerMember) bool {
	return m.instanceID == o.instanceID && m.rackID == o.rackID && m.clientID == o.clientID &&
		m.clientHost == o.clientHost && slices.Equal(m.subscribedTopicNames, o.subscribedTopicNames) &&
		m.subscribedTopicRegex == o.subscribedTopicRegex && m.rebalanceTimeoutMs == o.rebalanceTimeoutMs &&
		m.serverAssignor == o.serverAssignor
}

// sameAssignmentState compares what ConsumerGroupCurrentMemberAssignmentValue holds.
func (m *consumerMember) sameAssignmentState(o *consumerMember) bool {
	return m.state == o.state && m.memberEpoch == o.memberEpoch && m.previousMemberEpoch == o.previousMemberEpoch &&
		equalAssignments(m.assigned, o.assigned) && equalAssignments(m.pendingRevocation, o.pendingRevocation) &&
		m.assignmentEpochs.equal(o.assignmentEpochs)
}

// withAssignmentEpochs sets the assignment epochs of m's partitions: each
// keeps the one it had in prev, a partition new to the member gets its
// current epoch (CurrentAssignmentBuilder with KIP-1251).
func (m consumerMember) withAssignmentEpochs(prev assignmentEpochs) consumerMember {
	epochs := assignmentEpochs{}
	for _, a := range []assignment{m.assigned, m.pendingRevocation} {
		for t, ps := range a {
			byP := epochs[t]
			if byP == nil {
				byP = make(map[int32]int32, len(ps))
				epochs[t] = byP
			}
			for _, p := range ps {
				if e, ok := prev[t][p]; ok {
					byP[p] = e
				} else {
					byP[p] = m.memberEpoch
				}
			}
		}
	}
	m.assignmentEpochs = epochs
	return m
}

// sortedNames returns names sorted without duplicates (Kafka keeps a set).
func sortedNames(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}
