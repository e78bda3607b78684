package assignor

import (
	"cmp"
	"slices"
)

// maxBalancePasses bounds the rounds of the final balancing, as Kafka's
// MAX_ITERATION_COUNT does: subscribers with the same subscriptions balance
// in one round (and a second finds nothing left to do); overlapping
// subscriptions can take more, each roughly halving the imbalance.
const maxBalancePasses = 16

// uniformHeterogeneous assigns a group whose members subscribe to
// different topics, as Kafka's UniformHeterogeneousAssignmentBuilder does:
//
//  1. every member keeps the partitions it holds of the topics it still
//     subscribes to;
//  2. the partitions nobody holds go, topic by topic, to the least loaded
//     subscribers in turn, the topics with the most partitions per
//     subscriber first (they are the hardest to spread evenly);
//  3. topic by topic, partitions move from the most loaded subscribers
//     holding one to the least loaded, until no topic's subscribers are
//     more than one partition apart, or maxBalancePasses rounds.
//
// Where partitions cannot move, or subscriptions overlap in part, the
// result may be less than perfectly balanced, as in Kafka. With racks
// known, step 2 matches each topic's partitions to the subscribers it
// picked by rack (racks.place), step 3 moves a partition in the taker's
// rack where the giver has one, and the partitions that moved are then
// swapped between their new owners where that puts both in a rack they
// have a replica in (racks.swap); none of it changes a count.
type uniformHeterogeneous struct {
	g      *group
	r      *racks
	owner  []int32 // per slot: the member it is assigned to, -1 while none
	counts []int32 // per member: its partitions in the new assignment
	bal    balancer

	// Scratch for balanceTopic.
	parts      []int32 // the topic's slots, grouped by owner
	start, end []int32 // per member: its run in parts
	stamp      []int32 // per member: the balanceTopic call start and end are for
	calls      int32
}

func newUniformHeterogeneous(g *group, r *racks) *uniformHeterogeneous {
	u := &uniformHeterogeneous{
		g:      g,
		r:      r,
		owner:  make([]int32, g.total()),
		counts: make([]int32, len(g.ids)),
		start:  make([]int32, len(g.ids)),
		end:    make([]int32, len(g.ids)),
		stamp:  make([]int32, len(g.ids)),
	}
	u.bal.counts = u.counts
	for i := range u.owner {
		u.owner[i] = -1
	}
	return u
}

// build runs the three steps and returns the slots of each member.
func (u *uniformHeterogeneous) build() [][]int32 {
	for i := range u.g.ids {
		for _, slot := range u.g.current(i) {
			if u.owner[slot] < 0 { // the first member in id order wins a partition two claim
				u.assign(slot, int32(i))
			}
		}
	}
	kept := slices.Clone(u.owner)
	u.bal.prefer = make([]bool, len(u.g.ids))
	u.handOut()
	u.bal.prefer = nil
	u.balance()
	if u.r != nil {
		var moved []int32
		for slot, i := range u.owner {
			if i != kept[slot] {
				moved = append(moved, int32(slot))
			}
		}
		u.r.swap(u.g, moved, u.owner)
	}
	slots := make([][]int32, len(u.g.ids))
	for slot, i := range u.owner {
		if i >= 0 { // every topic has a subscriber, so every partition has an owner
			slots[i] = append(slots[i], int32(slot))
		}
	}
	return slots
}

// topicOrder orders topics by partitions per subscriber, descending, then
// by subscriber count, ascending, then by id (Kafka's topicComparator).
func (u *uniformHeterogeneous) topicOrder(a, b int32) int {
	na, nb := int64(u.g.size(a)), int64(u.g.size(b))
	sa, sb := int64(len(u.g.subscribers[a])), int64(len(u.g.subscribers[b]))
	return cmp.Or(cmp.Compare(nb*sa, na*sb), cmp.Compare(sa, sb), cmp.Compare(a, b))
}

// handOut gives every unassigned partition to a least loaded subscriber of
// its topic; of those, to the ones that already got a partition here, for
// their assignment changes anyway: so a member that leaves while another
// joins is replaced by it, the others keeping their assignment as it is
// (Kafka's testMemberReplacementStickiness). With racks known, which of those subscribers takes which
// partition is chosen for racks (racks.place): the balancer names the
// takers, one partition each per level, whatever it gives them, so any
// matching of the topic's free partitions to those takers leaves every
// member's count as it would be.
func (u *uniformHeterogeneous) handOut() {
	var topics []int32
	for t := range u.g.topicIDs {
		for slot := u.g.first[t]; slot < u.g.first[t+1]; slot++ {
			if u.owner[slot] < 0 {
				topics = append(topics, int32(t))
				break
			}
		}
	}
	slices.SortFunc(topics, u.topicOrder)
	var free, takers []int32
	var room []int
	if u.r != nil {
		room = make([]int, len(u.g.ids))
	}
	for _, t := range topics {
		u.bal.init(u.g.subscribers[t])
		free = free[:0]
		for slot := u.g.first[t]; slot < u.g.first[t+1]; slot++ {
			if u.owner[slot] < 0 {
				free = append(free, slot)
			}
		}
		if u.r == nil {
			for _, slot := range free {
				u.assign(slot, u.bal.nextLeast())
			}
			continue
		}
		// nextLeast grows its range by looking only at members outside
		// it, whose counts do not change, so it names the same takers
		// before the partitions are given as while they are.
		takers = takers[:0]
		for range free {
			i := u.bal.nextLeast()
			takers = append(takers, i)
			room[i]++
		}
		left := u.r.place(free, room, u.assign)
		for _, i := range takers {
			if room[i] > 0 {
				room[i]--
				u.assign(left[0], i)
				left = left[1:]
			}
		}
	}
}

// balance moves partitions topic by topic until a whole round moves none.
func (u *uniformHeterogeneous) balance() {
	var topics []int32
	for t := range u.g.topicIDs {
		if len(u.g.subscribers[t]) >= 2 {
			topics = append(topics, int32(t))
		}
	}
	slices.SortFunc(topics, u.topicOrder)
	last := -1 // the last topic that moved partitions; the first topic until one does
	for range maxBalancePasses {
		for k, t := range topics {
			if k == last {
				return // a whole round since it went by without a move
			}
			if u.balanceTopic(t) > 0 || last == -1 {
				last = k
			}
		}
	}
}

// balanceTopic moves partitions of topic t from its most loaded subscribers
// to its least loaded ones until they are at most one apart or the most
// loaded have none of t left, and returns how many it moved. A member gives
// up its highest partition of t first.
func (u *uniformHeterogeneous) balanceTopic(t int32) int {
	if u.bal.init(u.g.subscribers[t]) <= 1 {
		return 0
	}
	u.calls++
	first := u.g.first[t]
	u.parts = u.parts[:0]
	for slot := first; slot < u.g.first[t+1]; slot++ {
		u.parts = append(u.parts, slot)
	}
	slices.SortFunc(u.parts, func(a, b int32) int {
		return cmp.Or(cmp.Compare(u.owner[a], u.owner[b]), cmp.Compare(a, b))
	})
	for k, slot := range u.parts {
		i := u.owner[slot]
		if u.stamp[i] != u.calls {
			u.stamp[i] = u.calls
			u.start[i] = int32(k)
		}
		u.end[i] = int32(k + 1)
	}
	moved := 0
	for {
		giver := u.bal.nextMost()
		for giver >= 0 && (u.stamp[giver] != u.calls || u.end[giver] <= u.start[giver]) {
			u.bal.excludeMost()
			giver = u.bal.nextMost()
		}
		if giver < 0 {
			return moved
		}
		taker := u.bal.nextLeast()
		if u.bal.balanced() {
			return moved
		}
		u.end[giver]--
		if u.r != nil {
			u.pickForRacks(giver, taker)
		}
		u.assign(u.parts[u.end[giver]], taker)
		moved++
	}
}

// pickForRacks puts the partition giver is to give taker last in giver's
// run: one in taker's rack and not in giver's if it has one, else one in
// taker's rack, else one not in giver's, else its highest. Which one
// moves changes no count, and giver loses one partition either way.
func (u *uniformHeterogeneous) pickForRacks(giver, taker int32) {
	score := func(slot int32) int {
		n := 0
		if u.r.matches(taker, slot) {
			n += 2
		}
		if !u.r.matches(giver, slot) {
			n++
		}
		return n
	}
	start, last := u.start[giver], u.end[giver]
	best, bestScore := last, score(u.parts[last])
	for k := last - 1; k >= start && bestScore < 3; k-- {
		if sc := score(u.parts[k]); sc > bestScore {
			best, bestScore = k, sc
		}
	}
	u.parts[best], u.parts[last] = u.parts[last], u.parts[best]
}

// assign gives slot to member i, taking it from its owner if it has one.
func (u *uniformHeterogeneous) assign(slot, i int32) {
	if old := u.owner[slot]; old >= 0 {
		u.counts[old]--
	}
	u.owner[slot] = i
	u.counts[i]++
	if u.bal.prefer != nil {
		u.bal.prefer[i] = true
	}
}
