package assignor

import (
	"cmp"
	"slices"
)

// Range returns Kafka's server-side RangeAssignor ("range", KIP-848): each
// topic's partitions are cut into contiguous ranges, one per subscriber,
// the first numPartitions%subscribers subscribers getting one more, and
// handed out in a fixed member order. Topics with the same partition count
// and the same subscribers are therefore co-partitioned: a member gets the
// same partition indexes of each, which joins need.
//
// The order puts static members first, by group.instance.id, then the
// others by member id (Kafka 4.x, KAFKA-16944). That is where the range
// assignor's stickiness comes from: the assignment depends only on the
// members, the subscriptions and the partition counts, so it does not
// change while they do not, and a static member that rejoins under a new
// member id finds its ranges again.
func Range() Assignor { return rangeAssignor{} }

type rangeAssignor struct{}

func (rangeAssignor) Name() string { return RangeName }

func (rangeAssignor) Assign(spec GroupSpec, d TopicDescriber) (map[string]Partitions, error) {
	g, err := newGroup(spec, d)
	if err != nil {
		return nil, err
	}
	// rank[i] is member i's place in the range order.
	order := make([]int32, len(g.ids))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		ia, ib := g.members[a].InstanceID, g.members[b].InstanceID
		switch {
		case ia != "" && ib != "":
			if c := cmp.Compare(ia, ib); c != 0 {
				return c
			}
		case ia != "":
			return -1
		case ib != "":
			return 1
		}
		return cmp.Compare(g.ids[a], g.ids[b])
	})
	rank := make([]int32, len(order))
	for r, i := range order {
		rank[i] = int32(r)
	}

	slots := make([][]int32, len(g.ids))
	var subscribers []int32
	for t := range g.topicIDs {
		subscribers = append(subscribers[:0], g.subscribers[t]...)
		slices.SortFunc(subscribers, func(a, b int32) int { return cmp.Compare(rank[a], rank[b]) })
		n := int(g.size(int32(t)))
		quota, extra := n/len(subscribers), n%len(subscribers)
		next := int(g.first[t])
		for k, i := range subscribers {
			count := quota
			if k < extra {
				count++
			}
			for range count {
				slots[i] = append(slots[i], int32(next))
				next++
			}
		}
	}
	return g.result(slots), nil
}
