package assignor

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
)

// group is a GroupSpec numbered for the assignors: members in member id
// order, the subscribed topics that exist in topic id order, and every
// partition of those topics given a slot, 0 to total-1, topic after topic
// (slot = first[topic] + partition). Walking members, topics and slots in
// these orders is what makes the assignors deterministic.
type group struct {
	ids         []string  // member ids, ascending
	members     []Member  // by member index
	topicIDs    []TopicID // subscribed topics that exist, ascending
	first       []int32   // first slot of each topic; first[len(topicIDs)] is the total
	subs        [][]int32 // per member: its topics (indexes), ascending, no duplicates
	subscribers [][]int32 // per topic: its members (indexes), ascending
}

// newGroup numbers spec. Topics the describer does not know are dropped
// from every subscription (see the package comment).
func newGroup(spec GroupSpec, d TopicDescriber) (*group, error) {
	if d == nil {
		return nil, fmt.Errorf("%w: no topic describer", ErrPartitionAssignor)
	}
	g := &group{ids: make([]string, 0, len(spec.Members))}
	for id := range spec.Members {
		g.ids = append(g.ids, id)
	}
	slices.Sort(g.ids)
	g.members = make([]Member, len(g.ids))
	sizes := make(map[TopicID]int)
	for i, id := range g.ids {
		m := spec.Members[id]
		g.members[i] = m
		for _, t := range m.Topics {
			if _, ok := sizes[t]; ok {
				continue
			}
			n := d.NumPartitions(t)
			if n > math.MaxInt32 {
				return nil, fmt.Errorf("%w: topic %x has %d partitions", ErrPartitionAssignor, t, n)
			}
			sizes[t] = n
		}
	}
	for t, n := range sizes {
		if n >= 0 {
			g.topicIDs = append(g.topicIDs, t)
		}
	}
	slices.SortFunc(g.topicIDs, func(a, b TopicID) int { return bytes.Compare(a[:], b[:]) })
	index := make(map[TopicID]int32, len(g.topicIDs))
	g.first = make([]int32, len(g.topicIDs)+1)
	total := 0
	for t, id := range g.topicIDs {
		index[id] = int32(t)
		g.first[t] = int32(total)
		total += sizes[id]
		if total > math.MaxInt32 {
			return nil, fmt.Errorf("%w: the subscribed topics have more than %d partitions", ErrPartitionAssignor, math.MaxInt32)
		}
	}
	g.first[len(g.topicIDs)] = int32(total)

	g.subs = make([][]int32, len(g.ids))
	g.subscribers = make([][]int32, len(g.topicIDs))
	for i := range g.members {
		var subs []int32
		for _, id := range g.members[i].Topics {
			if t, ok := index[id]; ok {
				subs = append(subs, t)
			}
		}
		slices.Sort(subs)
		subs = slices.Compact(subs)
		g.subs[i] = subs
		for _, t := range subs {
			g.subscribers[t] = append(g.subscribers[t], int32(i))
		}
	}
	return g, nil
}

// total is the number of partitions of the subscribed topics.
func (g *group) total() int { return int(g.first[len(g.topicIDs)]) }

// size is the number of partitions of topic t.
func (g *group) size(t int32) int32 { return g.first[t+1] - g.first[t] }

// topicOf is the topic of a slot.
func (g *group) topicOf(slot int32) int32 {
	return int32(sort.Search(len(g.topicIDs), func(t int) bool { return g.first[t+1] > slot }))
}

// homogeneous reports whether every member subscribes to the same topics
// of those that exist: the coordinator's SubscriptionType may say so while
// a subscribed topic is missing for some members only, or be wrong.
func (g *group) homogeneous() bool {
	for i := 1; i < len(g.subs); i++ {
		if !slices.Equal(g.subs[i], g.subs[0]) {
			return false
		}
	}
	return true
}

// current returns the slots member i holds in its current assignment that
// it may keep: partitions that exist, of topics it still subscribes to.
// They come out ascending, without duplicates.
func (g *group) current(i int) []int32 {
	held := g.members[i].Assignment
	if len(held) == 0 {
		return nil
	}
	var slots []int32
	for _, t := range g.subs[i] {
		n := g.size(t)
		for _, p := range held[g.topicIDs[t]] {
			if p >= 0 && p < n {
				slots = append(slots, g.first[t]+p)
			}
		}
	}
	slices.Sort(slots) // the caller's lists should be ascending, but need not be
	return slices.Compact(slots)
}

// partitions turns ascending slots into a member's Partitions.
func (g *group) partitions(slots []int32) Partitions {
	topics := 0
	for i, slot := range slots {
		if i == 0 || g.topicOf(slot) != g.topicOf(slots[i-1]) {
			topics++
		}
	}
	out := make(Partitions, topics)
	for i := 0; i < len(slots); {
		t := g.topicOf(slots[i])
		j := i
		for j < len(slots) && slots[j] < g.first[t+1] {
			j++
		}
		ps := make([]int32, j-i)
		for k := range ps {
			ps[k] = slots[i+k] - g.first[t]
		}
		out[g.topicIDs[t]] = ps
		i = j
	}
	return out
}

// result builds an assignor's answer from the slots of each member, in any
// order.
func (g *group) result(slots [][]int32) map[string]Partitions {
	out := make(map[string]Partitions, len(g.ids))
	for i, id := range g.ids {
		slices.Sort(slots[i])
		out[id] = g.partitions(slots[i])
	}
	return out
}
