package coordinator

import (
	"slices"
	"sort"

	"github.com/strait-io/strait/coordinator/assignor"
	"github.com/strait-io/strait/raftmeta"
)

// shareProtocolType is ShareGroup.PROTOCOL_TYPE, the protocol type
// ListGroups reports for a share group; groupTypeShare its GroupType.
const (
	shareProtocolType = "share"
	groupTypeShare    = "share"
)

// shareGroupState is a share group's state (ShareGroup.ShareGroupState):
// a share group revokes nothing, so it is Empty or Stable, never
// Assigning or Reconciling.
type shareGroupState int8

const (
	shareEmpty shareGroupState = iota
	shareStable
)

func (s shareGroupState) String() string {
	if s == shareStable {
		return "Stable"
	}
	return "Empty"
}

// shareGroup is a KIP-932 share group (ShareGroup.java). Like
// consumerGroup it is changed only by replaying records
// (shard.replayShare), decided or loaded, so a reload rebuilds what was
// served. Every method runs under the shard mutex.
type shareGroup struct {
	id string
	// groupEpoch is bumped by every change of membership, subscriptions,
	// subscribed topics' metadata or initialized partitions; metadataHash
	// summarizes the subscribed topics' metadata (KIP-1101).
	groupEpoch   int32
	metadataHash int64
	// assignmentEpoch is the group epoch the target assignment was
	// computed for, -1 once deleted.
	assignmentEpoch int32
	members         map[string]*shareMember
	// target is the target assignment of each member.
	target map[string]assignment
	// partitions is ShareGroupStatePartitionMetadata: which partitions
	// have share-group state in the share coordinator.
	partitions sharePartitionsState
	// refresh notes when the metadata hash was last checked (as
	// consumerGroup's metadataRefresh* fields).
	refresh shareMetadataRefresh
}

func newShareGroup(id string) *shareGroup {
	return &shareGroup{
		id:         id,
		members:    map[string]*shareMember{},
		target:     map[string]assignment{},
		partitions: newSharePartitionsState(),
	}
}

// state is ShareGroup.maybeUpdateGroupState: Stable with members.
func (g *shareGroup) state() shareGroupState {
	if len(g.members) == 0 {
		return shareEmpty
	}
	return shareStable
}

func (g *shareGroup) isEmpty() bool { return len(g.members) == 0 }

func (g *shareGroup) sortedMemberIDs() []string { return sortedKeysOf(g.members) }

// memberOrNew is a copy of the member, or a new one.
func (g *shareGroup) memberOrNew(id string) shareMember {
	if m := g.members[id]; m != nil {
		return *m
	}
	return newShareMember(id)
}

// subscribedTopicNames is every topic a member subscribes to, with old
// replaced by updated (either may be nil), counted by subscriber
// (ModernGroup.computeSubscribedTopicNames).
func (g *shareGroup) subscribedTopicNames(old, updated *shareMember) map[string]int {
	out := map[string]int{}
	for id, m := range g.members {
		if old != nil && id == old.id {
			continue
		}
		for _, t := range m.subscribedTopicNames {
			out[t]++
		}
	}
	if updated != nil {
		for _, t := range updated.subscribedTopicNames {
			out[t]++
		}
	}
	return out
}

// shareSubscriptionType is ModernGroup.subscriptionType: homogeneous when
// every topic has every member as subscriber.
func shareSubscriptionType(subscribed map[string]int, members int) assignor.SubscriptionType {
	for _, n := range subscribed {
		if n != members {
			return assignor.Heterogeneous
		}
	}
	return assignor.Homogeneous
}

// topicSet turns subscriber counts into a set of names.
func topicSet(subscribed map[string]int) map[string]bool {
	out := make(map[string]bool, len(subscribed))
	for t := range subscribed {
		out[t] = true
	}
	return out
}

// shareMetadataRefresh notes the image offset and group epoch the metadata
// hash was last checked at: a newer image (topics created, deleted or
// grown) or another epoch makes the next heartbeat check again (Kafka
// checks on a deadline, ModernGroup.hasMetadataExpired; the consumer
// groups here check on the image too).
type shareMetadataRefresh struct {
	checked bool
	image   uint64
	epoch   int32
}

func (r *shareMetadataRefresh) expired(img *raftmeta.Image, epoch int32) bool {
	return !r.checked || r.image != img.Offset || r.epoch != epoch
}

func (r *shareMetadataRefresh) note(img *raftmeta.Image, epoch int32) {
	*r = shareMetadataRefresh{checked: true, image: img.Offset, epoch: epoch}
}

// shareMember is a member of a share group (ShareGroupMember). A value,
// like consumerMember: a heartbeat builds the next member and writes
// records for the difference.
type shareMember struct {
	id         string
	rackID     string // "" for none
	clientID   string
	clientHost string
	// subscribedTopicNames are sorted, without duplicates.
	subscribedTopicNames []string

	state               memberState
	memberEpoch         int32
	previousMemberEpoch int32
	assigned            assignment
}

// newShareMember is ShareGroupMember.Builder(memberId)'s defaults.
func newShareMember(id string) shareMember {
	return shareMember{id: id, state: memberStable, previousMemberEpoch: -1, assigned: assignment{}}
}

// isReconciledTo reports whether the member is stable at epoch.
func (m *shareMember) isReconciledTo(epoch int32) bool {
	return m.state == memberStable && m.memberEpoch == epoch
}

// sameSubscription compares what ShareGroupMemberMetadataValue holds.
func (m *shareMember) sameSubscription(o *shareMember) bool {
	return m.rackID == o.rackID && m.clientID == o.clientID && m.clientHost == o.clientHost &&
		slices.Equal(m.subscribedTopicNames, o.subscribedTopicNames)
}

// sameAssignmentState compares what ShareGroupCurrentMemberAssignmentValue holds.
func (m *shareMember) sameAssignmentState(o *shareMember) bool {
	return m.state == o.state && m.memberEpoch == o.memberEpoch && m.previousMemberEpoch == o.previousMemberEpoch &&
		equalAssignments(m.assigned, o.assigned)
}

// sharePartitionsState is ShareGroupStatePartitionMetadataInfo: the
// partitions whose share-group state the share coordinator is being
// asked to initialize, has initialized, or is deleting. A partition is
// assigned to members only once initialized (KIP-932, Kafka 4.1).
type sharePartitionsState struct {
	initializing map[topicID]shareInitTopic
	initialized  map[topicID]shareInitTopic
	deleting     map[topicID]bool
	// exists is set once a record was replayed: there is a record to
	// tombstone when the group is deleted.
	exists bool
}

// shareInitTopic is InitMapValue: a topic's name, partitions (sorted) and
// when they were last asked for (the replay time for loaded ones, as
// Kafka's replay stamps them).
type shareInitTopic struct {
	name        string
	partitions  []int32
	timestampMs int64
}

func newSharePartitionsState() sharePartitionsState {
	return sharePartitionsState{
		initializing: map[topicID]shareInitTopic{},
		initialized:  map[topicID]shareInitTopic{},
		deleting:     map[topicID]bool{},
	}
}

// clone deep-copies the maps (the partition slices are never changed in place).
func (p sharePartitionsState) clone() sharePartitionsState {
	out := sharePartitionsState{
		initializing: make(map[topicID]shareInitTopic, len(p.initializing)),
		initialized:  make(map[topicID]shareInitTopic, len(p.initialized)),
		deleting:     make(map[topicID]bool, len(p.deleting)),
		exists:       p.exists,
	}
	for t, v := range p.initializing {
		out.initializing[t] = v
	}
	for t, v := range p.initialized {
		out.initialized[t] = v
	}
	for t := range p.deleting {
		out.deleting[t] = true
	}
	return out
}

// initializedAssignment is the initialized partitions as an assignment.
func (p sharePartitionsState) initializedAssignment() assignment {
	out := assignment{}
	for t, v := range p.initialized {
		out[t] = v.partitions
	}
	return normalizeAssignment(out)
}

// combineInitTopics is GroupMetadataManager.combineInitMaps: every topic
// of either, the partitions united, the name and timestamp of add's.
func combineInitTopics(base, add map[topicID]shareInitTopic) map[topicID]shareInitTopic {
	out := make(map[topicID]shareInitTopic, len(base)+len(add))
	for t, v := range base {
		out[t] = v
	}
	for t, v := range add {
		old, ok := out[t]
		if ok {
			v.partitions = unionPartitions(old.partitions, v.partitions)
		}
		out[t] = v
	}
	return out
}

// removeInitPartitions removes the given partitions, dropping topics left
// without any.
func removeInitPartitions(from map[topicID]shareInitTopic, remove assignment) map[topicID]shareInitTopic {
	out := make(map[topicID]shareInitTopic, len(from))
	for t, v := range from {
		rm := remove[t]
		if len(rm) > 0 {
			v.partitions = slices.DeleteFunc(slices.Clone(v.partitions), func(p int32) bool { return slices.Contains(rm, p) })
		}
		if len(v.partitions) > 0 {
			out[t] = v
		}
	}
	return out
}

func unionPartitions(a, b []int32) []int32 {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// sortedTopicIDs returns a map's topic ids in byte order.
func sortedTopicIDs[V any](m map[topicID]V) []topicID {
	out := make([]topicID, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return compareTopicIDs(out[i], out[j]) < 0 })
	return out
}
