package coordinator

import (
	"bytes"
	"fmt"
	"sort"
)

// The server-side assignors' API (package coordinator/assignor, being
// written beside this code). Until it lands these are local stand-ins with
// the same shape, and the two assignors below are trivial placeholders;
// this file becomes aliases of the assignor package's types then.

// topicID is a topic's Kafka Uuid.
type topicID [16]byte

// subscriptionType is SubscriptionType: every member subscribes to the
// same topics (homogeneous) or not.
type subscriptionType int8

const (
	subscriptionHomogeneous subscriptionType = iota
	subscriptionHeterogeneous
)

// assignorMember is one member as the assignor sees it: its subscribed
// topic ids and its current target assignment (for stickiness).
type assignorMember struct {
	InstanceID, RackID string
	Topics             []topicID
	Assignment         map[topicID][]int32
}

type groupSpec struct {
	Members map[string]assignorMember
	Type    subscriptionType
}

// topicDescriber answers partition counts and replica racks from the
// metadata image (SubscribedTopicDescriber).
type topicDescriber interface {
	NumPartitions(t topicID) int
	RacksOf(t topicID, partition int32) []string
}

type partitionAssignor interface {
	Name() string
	Assign(spec groupSpec, topics topicDescriber) (map[string]map[topicID][]int32, error)
}

// assignorByName returns the named server-side assignor.
func assignorByName(name string) (partitionAssignor, bool) {
	switch name {
	case "uniform", "range":
		return placeholderAssignor{name}, true
	}
	return nil, false
}

// placeholderAssignor spreads each topic's partitions round-robin over its
// subscribers in member id order: a valid assignment (every partition of
// a subscribed topic to exactly one subscriber), without stickiness.
type placeholderAssignor struct{ name string }

func (a placeholderAssignor) Name() string { return a.name }

func (a placeholderAssignor) Assign(spec groupSpec, topics topicDescriber) (map[string]map[topicID][]int32, error) {
	out := make(map[string]map[topicID][]int32, len(spec.Members))
	subscribers := map[topicID][]string{}
	for id, m := range spec.Members {
		out[id] = map[topicID][]int32{}
		for _, t := range m.Topics {
			subscribers[t] = append(subscribers[t], id)
		}
	}
	ids := make([]topicID, 0, len(subscribers))
	for t := range subscribers {
		ids = append(ids, t)
	}
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	next := 0
	for _, t := range ids {
		n := topics.NumPartitions(t)
		if n < 0 {
			return nil, fmt.Errorf("topic %x is not in the metadata", t)
		}
		members := subscribers[t]
		sort.Strings(members)
		for p := range n {
			m := members[next%len(members)]
			next++
			out[m][t] = append(out[m][t], int32(p))
		}
	}
	return out, nil
}
