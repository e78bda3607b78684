package assignor

import (
	"cmp"
	"slices"
)

// racks is what the uniform assignor knows of racks when it assigns rack
// aware: each member's rack, and which of those racks each partition has a
// replica in. A member fetching from a replica in its own rack (KIP-392)
// keeps its traffic in the rack.
type racks struct {
	member []int32 // per member: its rack's number, -1 when it has none
	start  []int32 // per slot: where its racks begin in of; start[total] = len(of)
	of     []int32 // rack numbers, only of racks some member is in
	count  int     // rack numbers in use
}

// newRacks returns the racks of g's members and partitions, or nil when the
// assignment is not to be rack aware. As Kafka's rack-aware uniform
// assignor had it (3.5 to 3.7, AbstractUniformAssignmentBuilder.RackInfo;
// Kafka 4.x's uniform assignor ignores racks), that is unless some member
// is in a rack some partition has a replica in, and the partitions are not
// all on the same racks, where no member would be closer to one partition
// than to another.
func newRacks(g *group, d TopicDescriber) *racks {
	numbers := make(map[string]int32)
	r := &racks{member: make([]int32, len(g.members))}
	for i, m := range g.members {
		r.member[i] = -1
		if m.RackID == "" {
			continue
		}
		n, ok := numbers[m.RackID]
		if !ok {
			n = int32(len(numbers))
			numbers[m.RackID] = n
		}
		r.member[i] = n
	}
	if len(numbers) == 0 {
		return nil
	}
	r.count = len(numbers)
	r.start = make([]int32, g.total()+1)
	shared, same := false, true
	var firstRacks, these []string
	for t, id := range g.topicIDs {
		for p := range g.size(int32(t)) {
			slot := g.first[t] + p
			replicas := d.RacksOf(id, p)
			if same {
				these = append(these[:0], replicas...)
				slices.Sort(these)
				these = slices.Compact(these)
				if slot == 0 {
					firstRacks = slices.Clone(these)
				} else {
					same = slices.Equal(these, firstRacks)
				}
			}
			begin := len(r.of)
			for _, rack := range replicas {
				if n, ok := numbers[rack]; ok && !slices.Contains(r.of[begin:], n) {
					r.of = append(r.of, n)
					shared = true
				}
			}
			r.start[slot+1] = int32(len(r.of))
		}
	}
	if !shared || same {
		return nil
	}
	return r
}

// racksOf returns the member racks slot has a replica in.
func (r *racks) racksOf(slot int32) []int32 { return r.of[r.start[slot]:r.start[slot+1]] }

// matches reports whether member i is in a rack slot has a replica in.
func (r *racks) matches(i, slot int32) bool {
	return r.member[i] >= 0 && slices.Contains(r.racksOf(slot), r.member[i])
}

// place hands out slots to the members with room left, each to a member in
// a rack the partition has a replica in where there is one: the partitions
// with the fewest such members first, and the members of a rack in turn.
// room[i] is how many more partitions member i takes; place lowers it and
// calls give for every partition it places. It returns the slots it could
// not place in a matching rack, ascending.
func (r *racks) place(slots []int32, room []int, give func(slot, member int32)) []int32 {
	byRack := make([][]int32, r.count)
	for i, rack := range r.member {
		if rack >= 0 && room[i] > 0 {
			byRack[rack] = append(byRack[rack], int32(i))
		}
	}
	type candidate struct {
		slot    int32
		members int
	}
	var candidates []candidate
	var left []int32
	for _, slot := range slots {
		n := 0
		for _, rack := range r.racksOf(slot) {
			n += len(byRack[rack])
		}
		if n == 0 {
			left = append(left, slot)
		} else {
			candidates = append(candidates, candidate{slot, n})
		}
	}
	slices.SortFunc(candidates, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.members, b.members), cmp.Compare(a.slot, b.slot))
	})
	next := make([]int, r.count) // per rack: whose turn it is
	take := func(rack int32) int32 {
		for len(byRack[rack]) > 0 {
			list := byRack[rack]
			k := next[rack] % len(list)
			if i := list[k]; room[i] > 0 {
				next[rack] = k + 1
				return i
			}
			list[k] = list[len(list)-1] // full: drop it from the rack's turns
			byRack[rack] = list[:len(list)-1]
		}
		return -1
	}
	for _, c := range candidates {
		i := int32(-1)
		for _, rack := range r.racksOf(c.slot) {
			if i = take(rack); i >= 0 {
				break
			}
		}
		if i < 0 {
			left = append(left, c.slot)
			continue
		}
		room[i]--
		give(c.slot, i)
	}
	slices.Sort(left)
	return left
}

// swap improves the racks of partitions that move anyway: where two of the
// moved partitions (slots) of a topic each went to a member outside their
// replicas' racks, but each member is in a rack of the other partition's
// replicas, the members trade them. Every member keeps as many partitions
// of every topic, and no member loses a partition it held before this
// assignment, so neither balance nor stickiness changes. owner holds each
// slot's member and is updated.
func (r *racks) swap(g *group, moved []int32, owner []int32) {
	// waiting lists the mismatched moved partitions by topic, their owner's
	// rack and a rack of their replicas: the ones a member of that rack
	// could take in exchange for one in the owner's rack.
	type key struct{ topic, ownerRack, replicaRack int32 }
	waiting := make(map[key][]int32)
	var mismatched []int32
	for _, slot := range moved {
		i := owner[slot]
		if r.member[i] < 0 || r.matches(i, slot) {
			continue
		}
		t := g.topicOf(slot)
		for _, rack := range r.racksOf(slot) {
			k := key{t, r.member[i], rack}
			waiting[k] = append(waiting[k], slot)
		}
		mismatched = append(mismatched, slot)
	}
	for _, x := range mismatched {
		a := owner[x]
		if r.matches(a, x) {
			continue // it was traded already
		}
		t := g.topicOf(x)
	racks:
		for _, rack := range r.racksOf(x) {
			k := key{t, rack, r.member[a]}
			for list := waiting[k]; len(list) > 0; list = list[:len(list)-1] {
				y := list[len(list)-1]
				if b := owner[y]; y != x && r.member[b] == rack && !r.matches(b, y) {
					owner[x], owner[y] = b, a
					waiting[k] = list[:len(list)-1]
					break racks
				}
				waiting[k] = list[:len(list)-1]
			}
		}
	}
}
