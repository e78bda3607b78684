package assignor

import (
	"fmt"
	"slices"
)

// Uniform returns Kafka's UniformAssignor ("uniform", KIP-848's default):
// every partition of a subscribed topic goes to exactly one of its
// subscribers, the members' partition counts as even as the subscriptions
// allow, and members keep what they own where balance allows (Balance >
// Stickiness). When every member subscribes to the same topics it computes
// quotas directly (UniformHomogeneousAssignmentBuilder); otherwise it hands
// out and then rebalances topic by topic
// (UniformHeterogeneousAssignmentBuilder).
//
// Unlike Kafka 4.x's it is rack aware where the racks are known (see
// newRacks): partitions that move go preferably to members in a rack the
// partition has a replica in (racks.place, racks.swap), and a member over
// its quota gives up partitions in other racks first, without giving up
// balance or stickiness for it.
func Uniform() Assignor { return uniform{} }

type uniform struct{}

func (uniform) Name() string { return UniformName }

func (uniform) Assign(spec GroupSpec, d TopicDescriber) (map[string]Partitions, error) {
	g, err := newGroup(spec, d)
	if err != nil {
		return nil, err
	}
	r := newRacks(g, d)
	if spec.Type == Homogeneous && g.homogeneous() {
		slots, err := uniformHomogeneous(g, r)
		if err != nil {
			return nil, err
		}
		return g.result(slots), nil
	}
	return g.result(newUniformHeterogeneous(g, r).build()), nil
}

// uniformHomogeneous assigns a group whose members all subscribe to the
// same topics, as Kafka's UniformHomogeneousAssignmentBuilder does: with P
// partitions and M members, every member's quota is P/M and P%M of them get
// one more; a member keeps what it holds up to its quota, and the
// partitions left over fill the members below theirs, each taking a run of
// them in member order. It returns the slots of each member.
func uniformHomogeneous(g *group, r *racks) ([][]int32, error) {
	slots := make([][]int32, len(g.ids))
	total := g.total()
	if len(g.ids) == 0 || total == 0 {
		return slots, nil
	}
	owned := make([]bool, total)
	held := make([]int, len(g.ids))
	for i := range g.ids {
		for _, slot := range g.current(i) {
			if !owned[slot] { // the first member in id order wins a partition two claim
				owned[slot] = true
				slots[i] = append(slots[i], slot)
			}
		}
		held[i] = len(slots[i])
	}
	quotas := stickyQuotas(total, held)
	room := make([]int, len(g.ids))
	for i, quota := range quotas {
		keep := slots[i]
		if len(keep) > quota {
			if r != nil { // give up the partitions in other racks first
				slices.SortStableFunc(keep, func(a, b int32) int {
					return boolOrder(r.matches(int32(i), b), r.matches(int32(i), a))
				})
			}
			for _, slot := range keep[quota:] {
				owned[slot] = false
			}
			slots[i] = keep[:quota]
		}
		room[i] = quota - len(slots[i])
	}
	var unassigned []int32
	for slot, o := range owned {
		if !o {
			unassigned = append(unassigned, int32(slot))
		}
	}
	moved := unassigned
	if r != nil {
		unassigned = r.place(unassigned, room, func(slot, i int32) { slots[i] = append(slots[i], slot) })
	}
	next := 0
	for i := range room {
		for ; room[i] > 0 && next < len(unassigned); room[i]-- {
			slots[i] = append(slots[i], unassigned[next])
			next++
		}
	}
	if next < len(unassigned) {
		return nil, fmt.Errorf("%w: %d partitions were left unassigned", ErrPartitionAssignor, len(unassigned)-next)
	}
	if r != nil {
		owner := make([]int32, total)
		for i, ss := range slots {
			for _, slot := range ss {
				owner[slot] = int32(i)
			}
		}
		r.swap(g, moved, owner)
		for i := range slots {
			slots[i] = slots[i][:0]
		}
		for slot, i := range owner {
			slots[i] = append(slots[i], int32(slot))
		}
	}
	return slots, nil
}

// boolOrder orders false before true.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}
