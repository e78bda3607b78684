package assignor

import "slices"

// Simple returns Kafka's share-group SimpleAssignor ("simple", KIP-932, as
// Kafka 4.1 rewrote it): every assignable partition of a subscribed topic
// goes to at least one subscriber, and, since share-group members may
// share partitions, when the members outnumber the partitions each
// partition goes to ceil(members/partitions) of them. The members' counts
// differ by at most one, and members keep what they hold where balance
// allows (Balance > Stickiness). It is not rack aware.
//
// When every member subscribes to the same topics, their partitions are
// shared out together (SimpleHomogeneousAssignmentBuilder); otherwise each
// topic's are shared out among its subscribers on their own, so a member
// subscribing to more topics gets more partitions
// (SimpleHeterogeneousAssignmentBuilder).
//
// A describer that is an AssignableDescriber can hold partitions back;
// Kafka's share coordinator does so until it has initialized a partition's
// share-group state.
func Simple() Assignor { return simple{} }

type simple struct{}

func (simple) Name() string { return SimpleName }

func (simple) Assign(spec GroupSpec, d TopicDescriber) (map[string]Partitions, error) {
	g, err := newGroup(spec, d)
	if err != nil {
		return nil, err
	}
	assignable, _ := d.(AssignableDescriber)
	// index[slot] is the slot's place in its pool, -1 if it is held back.
	index := make([]int32, g.total())
	poolOf := func(topics []int32) []int32 {
		var pool []int32
		for _, t := range topics {
			for p := range g.size(t) {
				slot := g.first[t] + p
				index[slot] = -1
				if assignable == nil || assignable.Assignable(g.topicIDs[t], p) {
					index[slot] = int32(len(pool))
					pool = append(pool, slot)
				}
			}
		}
		return pool
	}
	current := make([][]int32, len(g.ids))
	for i := range g.ids {
		current[i] = g.current(i)
	}
	slots := make([][]int32, len(g.ids))
	if spec.Type == Homogeneous && g.homogeneous() {
		if len(g.ids) > 0 {
			members := make([]int32, len(g.ids))
			for i := range members {
				members[i] = int32(i)
			}
			share(poolOf(g.subs[0]), members, current, index, slots)
		}
	} else {
		for t := range g.topicIDs {
			share(poolOf([]int32{int32(t)}), g.subscribers[t], current, index, slots)
		}
	}
	return g.result(slots), nil
}

// share shares the partitions of pool (slots) out among members (indexes,
// ascending), appending each member's to out. current holds the slots each
// member holds now, and index the place of a slot in the pool (-1 where it
// is held back; slots of other pools have places in theirs).
//
// With P partitions and M members, each partition goes to sharing =
// ceil(M/P) members, so sharing*P partitions are handed out in all and each
// member's quota is that divided by M, some getting one more (see
// stickyQuotas). A member keeps what it holds while below its quota and the
// partition below its sharing; then the partitions held by nobody, and
// then those held by fewer than sharing members, go in turn to the members
// below their quota that do not hold them yet (Kafka's
// SimpleHomogeneousAssignmentBuilder, which does the same in one pass).
func share(pool, members []int32, current [][]int32, index []int32, out [][]int32) {
	if len(pool) == 0 || len(members) == 0 {
		return
	}
	sharing := (len(members) + len(pool) - 1) / len(pool)
	holders := make([]int, len(pool)) // per place: members holding it
	holds := make([][]int32, len(members))
	candidates := make([][]int32, len(members))
	held := make([]int, len(members))
	for k, i := range members {
		for _, slot := range current[i] {
			if x := index[slot]; x >= 0 && int(x) < len(pool) && pool[x] == slot {
				candidates[k] = append(candidates[k], x)
				if holders[x] < sharing { // what it can keep, sharing aside
					holders[x]++
					held[k]++
				}
			}
		}
	}
	clear(holders)
	total := sharing * len(pool)
	quotas := stickyQuotas(total, held)
	for k, xs := range candidates {
		for _, x := range xs {
			if len(holds[k]) < quotas[k] && holders[x] < sharing {
				holds[k] = append(holds[k], x)
				holders[x]++
			}
		}
	}

	holding := func(k int, x int32) bool { return slices.Contains(holds[k], x) }
	give := func(k int, x int32) {
		holds[k] = append(holds[k], x)
		holders[x]++
	}
	// turns lists the members below their quota; at is whose turn it is.
	var turns []int
	for k := range members {
		if len(holds[k]) < quotas[k] {
			turns = append(turns, k)
		}
	}
	at := 0
	// handTo gives x to the next member in turn that does not hold it,
	// reporting whether there was one.
	handTo := func(x int32) bool {
		for tries := range turns {
			j := (at + tries) % len(turns)
			k := turns[j]
			if holding(k, x) {
				continue
			}
			give(k, x)
			if len(holds[k]) < quotas[k] {
				j++
			} else {
				turns = slices.Delete(turns, j, j+1)
			}
			at = 0
			if len(turns) > 0 {
				at = j % len(turns)
			}
			return true
		}
		return false
	}
	// Nobody holds these yet, so any member below its quota can take them;
	// and there is room for all of them, since the partitions that are
	// held fill at most sharing places each.
	for x := range pool {
		if holders[x] == 0 {
			handTo(int32(x))
		}
	}
	for x := range pool {
		for holders[x] < sharing && len(turns) > 0 && handTo(int32(x)) {
		}
	}
	// What is left: partitions short of sharing whose only takers already
	// hold them. Kafka leaves those short; we fill each, keeping the counts
	// balanced: a full member that does not hold the partition takes it
	// with the extra place of a taker's quota.
	//
	// There always is such a member. Sharing 1 leaves only unheld
	// partitions short, which any taker takes. Sharing 2 or more means
	// M < sharing*P < M+P <= 2M, so quotas are 1 or 2: a taker holding the
	// partition has quota 2, and if every full member at quota 1 held it
	// too, it would have M-(sharing*P-M)+1 holders, more than sharing.
	base := total / len(members)
	for x := range pool {
		for holders[x] < sharing && len(turns) > 0 {
			if handTo(int32(x)) {
				continue
			}
			if j, v := extraFor(int32(x), base, turns, quotas, holding); v >= 0 {
				quotas[turns[j]]--
				quotas[v]++
				give(v, int32(x))
				if k := turns[j]; len(holds[k]) >= quotas[k] {
					turns = slices.Delete(turns, j, j+1)
					at = 0
				}
				continue
			}
			break // not reached (see above)
		}
	}
	for k, xs := range holds {
		for _, x := range xs {
			out[members[k]] = append(out[members[k]], pool[x])
		}
	}
}

// extraFor finds a taker (turns[j]) whose quota holds an extra place
// (base+1) and a full member v at base that does not hold x, so that v can
// take x with that place and nobody gives anything up. v is -1 if there is
// none.
func extraFor(x int32, base int, turns []int, quotas []int, holding func(int, int32) bool) (j, v int) {
	for j, u := range turns {
		if quotas[u] != base+1 {
			continue
		}
		for v, quota := range quotas {
			if quota == base && v != u && !holding(v, x) && !slices.Contains(turns, v) {
				return j, v
			}
		}
		return -1, -1
	}
	return -1, -1
}
