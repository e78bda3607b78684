package assignor

import "errors"

// TopicID is a topic's 16-byte id (Kafka's Uuid).
type TopicID [16]byte

// Partitions maps a topic id to partition indexes, ascending, without
// duplicates.
type Partitions map[TopicID][]int32

// SubscriptionType says whether every member of a group subscribes to the
// same topics (Kafka's SubscriptionType). The uniform and simple assignors
// pick their algorithm by it.
type SubscriptionType int8

const (
	// Homogeneous: every member subscribes to the same topics.
	Homogeneous SubscriptionType = iota
	// Heterogeneous: at least two members subscribe to different topics.
	Heterogeneous
)

// Member is what an assignor knows of a group member (Kafka's
// MemberSubscription and its current MemberAssignment).
type Member struct {
	InstanceID string     // group.instance.id, "" when none
	RackID     string     // "" when none
	Topics     []TopicID  // subscribed topics that exist (the coordinator resolves names/regexes to ids)
	Assignment Partitions // the member's current target assignment, for stickiness (may be nil)
}

// GroupSpec is the group an assignor assigns (Kafka's GroupSpec).
type GroupSpec struct {
	Members map[string]Member // by member id
	Type    SubscriptionType
}

// TopicDescriber describes the subscribed topics (Kafka's
// SubscribedTopicDescriber).
type TopicDescriber interface {
	NumPartitions(t TopicID) int                 // -1 when the topic does not exist
	RacksOf(t TopicID, partition int32) []string // nil when unknown
}

// AssignableDescriber is a TopicDescriber that may also rule partitions
// out. The simple assignor assigns only the partitions it allows: Kafka
// 4.1's share groups assign a partition only once the share coordinator
// has initialized its state (GroupSpec.isPartitionAssignable, KIP-932).
// A describer without this method allows every partition.
type AssignableDescriber interface {
	TopicDescriber
	Assignable(t TopicID, partition int32) bool
}

// Assignor computes a group's target assignment (Kafka's PartitionAssignor).
type Assignor interface {
	Name() string
	// Assign returns the new target assignment of every member of spec,
	// possibly empty. It never returns slices of the caller's.
	Assign(spec GroupSpec, topics TopicDescriber) (map[string]Partitions, error)
}

// ErrPartitionAssignor is Kafka's PartitionAssignorException: the assignor
// could not compute an assignment. The coordinator fails the heartbeat
// that asked for it with UNKNOWN_SERVER_ERROR, as Kafka's does.
var ErrPartitionAssignor = errors.New("partition assignor")

// The assignor names, as clients name them in group.remote.assignor and
// brokers in group.consumer.assignors / group.share.assignors.
const (
	UniformName = "uniform"
	RangeName   = "range"
	SimpleName  = "simple"
)

// ByName returns the assignor named name ("uniform", "range", "simple").
func ByName(name string) (Assignor, bool) {
	switch name {
	case UniformName:
		return Uniform(), true
	case RangeName:
		return Range(), true
	case SimpleName:
		return Simple(), true
	}
	return nil, false
}
