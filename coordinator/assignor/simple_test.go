package assignor

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// allowed is an AssignableDescriber allowing only the listed partitions
// (Kafka's tests pass the same through GroupSpecImpl's assignable map).
type allowed struct {
	StaticTopics
	partitions map[TopicID][]int32
}

func (a allowed) Assignable(t TopicID, p int32) bool { return slices.Contains(a.partitions[t], p) }

// The cases of Kafka's SimpleAssignorTest (4.1). Kafka pins few exact
// assignments there (its member order is a HashMap's); where it does not,
// these check coverage and pin ours.

func TestSimpleName(t *testing.T) {
	if Simple().Name() != "simple" {
		t.Fatal(Simple().Name())
	}
}

func TestSimpleAssignWithEmptyMembers(t *testing.T) {
	for _, typ := range []SubscriptionType{Homogeneous, Heterogeneous} {
		got := mustAssign(t, Simple(), GroupSpec{Type: typ}, StaticTopics{})
		expectAssignment(t, got, map[string]Partitions{})
	}
}

func TestSimpleAssignWithNoSubscribedTopic(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{"A": member(nil, nil)}}
	got := mustAssign(t, Simple(), spec, topicsOf(map[TopicID]int{tid(1): 3}))
	expectAssignment(t, got, map[string]Partitions{"A": {}})
}

// Kafka throws PartitionAssignorException; we skip the unknown topic.
func TestSimpleAssignWithSubscribedToNonExistentTopic(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{"A": member(ids(tid(2)), nil)}}
	got := mustAssign(t, Simple(), spec, topicsOf(map[TopicID]int{tid(1): 3}))
	expectAssignment(t, got, map[string]Partitions{"A": {}})
}

func TestSimpleAssignWithTwoMembersAndTwoTopicsHomogeneous(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"A": member(ids(tid(1), tid(3)), nil),
		"B": member(ids(tid(1), tid(3)), nil),
	}}
	topics := topicsOf(map[TopicID]int{tid(1): 3, tid(3): 2})
	got := mustAssign(t, Simple(), spec, topics)
	checkShared(t, spec, topics, got)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 2), tps(tid(3), 1)),
		"B": asg(tps(tid(1), 1), tps(tid(3), 0)),
	})
}

func TestSimpleAssignWithAllowedPartitions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		typ     SubscriptionType
		topics  map[TopicID]int
		members map[string]Member
		allowed map[TopicID][]int32
		want    map[string]Partitions
	}{{
		name:   "TwoMembersAndTwoTopicsHomogeneousWithAllowedMap",
		topics: map[TopicID]int{tid(1): 3, tid(3): 3},
		members: map[string]Member{
			"A": member(ids(tid(1), tid(3)), nil),
			"B": member(ids(tid(1), tid(3)), nil),
		},
		allowed: map[TopicID][]int32{tid(1): {0, 1, 2}, tid(3): {0, 1}},
		want: map[string]Partitions{
			"A": asg(tps(tid(1), 0, 2), tps(tid(3), 1)),
			"B": asg(tps(tid(1), 1), tps(tid(3), 0)),
		},
	}, {
		name:   "TwoMembersAndTwoTopicsHomogeneousWithNonAssignableTopic",
		topics: map[TopicID]int{tid(1): 3, tid(3): 2},
		members: map[string]Member{
			"A": member(ids(tid(1), tid(3)), nil),
			"B": member(ids(tid(1), tid(3)), nil),
		},
		allowed: map[TopicID][]int32{tid(1): {0, 1, 2}},
		want: map[string]Partitions{
			"A": asg(tps(tid(1), 0, 2)),
			"B": asg(tps(tid(1), 1)),
		},
	}, {
		name:   "ThreeMembersThreeTopicsHeterogeneousWithAllowedMap",
		typ:    Heterogeneous,
		topics: map[TopicID]int{tid(1): 3, tid(2): 3, tid(3): 2},
		members: map[string]Member{
			"A": member(ids(tid(1), tid(2)), nil),
			"B": member(ids(tid(3)), nil),
			"C": member(ids(tid(2), tid(3)), nil),
		},
		allowed: map[TopicID][]int32{tid(1): {0, 1}, tid(2): {0, 2}, tid(3): {1}},
		want: map[string]Partitions{
			"A": asg(tps(tid(1), 0, 1), tps(tid(2), 0)),
			"B": asg(tps(tid(3), 1)), // T3's one partition, shared by its two subscribers
			"C": asg(tps(tid(2), 2), tps(tid(3), 1)),
		},
	}, {
		// Kafka pins this one: A: T1[0 1 2] T2[0 2], B: none, C: T2[1].
		name:   "ThreeMembersThreeTopicsHeterogeneousWithNonAssignableTopic",
		typ:    Heterogeneous,
		topics: map[TopicID]int{tid(1): 3, tid(2): 3, tid(3): 2},
		members: map[string]Member{
			"A": member(ids(tid(1), tid(2)), nil),
			"B": member(ids(tid(3)), nil),
			"C": member(ids(tid(2), tid(3)), nil),
		},
		allowed: map[TopicID][]int32{tid(1): {0, 1, 2}, tid(2): {0, 1, 2}},
		want: map[string]Partitions{
			"A": asg(tps(tid(1), 0, 1, 2), tps(tid(2), 0, 2)),
			"B": {},
			"C": asg(tps(tid(2), 1)),
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := GroupSpec{Type: tc.typ, Members: tc.members}
			got := mustAssign(t, Simple(), spec, allowed{topicsOf(tc.topics), tc.allowed})
			expectAssignment(t, got, tc.want)
		})
	}
}

func TestSimpleAssignWithThreeMembersThreeTopicsHeterogeneous(t *testing.T) {
	spec := GroupSpec{Type: Heterogeneous, Members: map[string]Member{
		"A": member(ids(tid(1), tid(2)), nil),
		"B": member(ids(tid(3)), nil),
		"C": member(ids(tid(2), tid(3)), nil),
	}}
	topics := topicsOf(map[TopicID]int{tid(1): 3, tid(2): 3, tid(3): 2})
	got := mustAssign(t, Simple(), spec, topics)
	checkShared(t, spec, topics, got)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 1, 2), tps(tid(2), 0, 2)),
		"B": asg(tps(tid(3), 0)),
		"C": asg(tps(tid(2), 1), tps(tid(3), 1)),
	})
}

func TestSimpleAssignWithOneMemberNoAssignedTopicHeterogeneous(t *testing.T) {
	spec := GroupSpec{Type: Heterogeneous, Members: map[string]Member{
		"A": member(ids(tid(1), tid(2)), nil),
		"B": member(nil, nil),
	}}
	got := mustAssign(t, Simple(), spec, topicsOf(map[TopicID]int{tid(1): 3, tid(2): 2}))
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 1, 2), tps(tid(2), 0, 1)),
		"B": {},
	})
}

// More members than partitions: each partition is shared by ceil(5/2) = 3
// members, and the six places go two to one member and one to each other.
func TestSimpleMoreMembersThanPartitions(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{}}
	for k := range 5 {
		spec.Members[fmt.Sprintf("m%d", k)] = member(ids(tid(1)), nil)
	}
	topics := topicsOf(map[TopicID]int{tid(1): 2})
	got := mustAssign(t, Simple(), spec, topics)
	checkShared(t, spec, topics, got)
	expectAssignment(t, got, map[string]Partitions{
		"m0": asg(tps(tid(1), 0, 1)),
		"m1": asg(tps(tid(1), 1)),
		"m2": asg(tps(tid(1), 0)),
		"m3": asg(tps(tid(1), 0)),
		"m4": asg(tps(tid(1), 1)),
	})
}

// A partition short of its sharing whose only taker holds it already:
// Kafka's SimpleAssignor leaves it short (one holder, where the other has
// two); here B, which does not hold it, takes it with the extra place A's
// quota had, and nobody gives anything up.
func TestSimpleFillsSharingWithoutMoves(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"A": member(ids(tid(1)), asg(tps(tid(1), 0))),
		"B": member(ids(tid(1)), asg(tps(tid(1), 1))),
		"C": member(ids(tid(1)), asg(tps(tid(1), 1))),
	}}
	topics := topicsOf(map[TopicID]int{tid(1): 2})
	got := mustAssign(t, Simple(), spec, topics)
	checkShared(t, spec, topics, got)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0)),
		"B": asg(tps(tid(1), 0, 1)),
		"C": asg(tps(tid(1), 1)),
	})
}

// Kafka's testIncrementalAssignmentIncreasingMembers* and
// testIncrementalAssignmentDecreasingMembers*: members join one by one up
// to 101 on 24 partitions, then leave one by one, each round starting from
// the last; every round covers every partition (and, here, is balanced).
func TestSimpleIncrementalAssignment(t *testing.T) {
	subscriptions := [][]TopicID{ids(tid(1), tid(2), tid(3)), ids(tid(2)), ids(tid(3)), ids(tid(1), tid(2))}
	for _, tc := range []struct {
		name   string
		typ    SubscriptionType
		topics map[TopicID]int
		subs   func(k int) []TopicID
	}{
		{"homogeneous", Homogeneous, map[TopicID]int{tid(1): 24}, func(int) []TopicID { return ids(tid(1)) }},
		{"heterogeneous", Heterogeneous, map[TopicID]int{tid(1): 12, tid(2): 8, tid(3): 4}, func(k int) []TopicID { return subscriptions[k%4] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topics := topicsOf(tc.topics)
			spec := GroupSpec{Type: tc.typ, Members: map[string]Member{}}
			round := func() {
				got := mustAssign(t, Simple(), spec, topics)
				checkShared(t, spec, topics, got)
				spec = withCurrent(spec, got)
			}
			for k := range 101 {
				spec.Members[fmt.Sprintf("M%d", k)] = member(tc.subs(k), nil)
				round()
			}
			for k := 100; k > 0; k-- {
				delete(spec.Members, fmt.Sprintf("M%d", k))
				round()
			}
		})
	}
}

// Kafka's testAssignWithCurrentAssignmentHeterogeneous: the subscriptions
// and topics change under a current assignment.
func TestSimpleAssignWithCurrentAssignmentHeterogeneous(t *testing.T) {
	spec := GroupSpec{Type: Heterogeneous, Members: map[string]Member{
		"A": member(ids(tid(1), tid(2)), nil),
		"B": member(ids(tid(3)), nil),
		"C": member(ids(tid(2), tid(3)), nil),
	}}
	topics := topicsOf(map[TopicID]int{tid(1): 3, tid(2): 3, tid(3): 2})
	checkShared(t, spec, topics, mustAssign(t, Simple(), spec, topics))

	spec = GroupSpec{Type: Heterogeneous, Members: map[string]Member{
		"A": member(ids(tid(1), tid(2), tid(3)), asg(tps(tid(1), 0, 1, 2), tps(tid(2), 0, 2))),
		"B": member(ids(tid(3), tid(4)), asg(tps(tid(3), 0, 1))),
	}}
	topics = topicsOf(map[TopicID]int{tid(1): 3, tid(2): 3, tid(3): 2, tid(4): 1})
	got := mustAssign(t, Simple(), spec, topics)
	checkShared(t, spec, topics, got)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 1, 2), tps(tid(2), 0, 1, 2), tps(tid(3), 1)),
		"B": asg(tps(tid(3), 0), tps(tid(4), 0)), // B keeps what it can of T3
	})
}

// checkShared checks a share-group assignment: validity, every partition
// of a topic held by exactly ceil(subscribers/partitions) members (all
// members and all partitions together when homogeneous), and the counts
// balanced (per topic among its subscribers when heterogeneous).
func checkShared(t *testing.T, spec GroupSpec, topics StaticTopics, got map[string]Partitions) {
	t.Helper()
	counts := checkValid(t, spec, topics, got, atLeastOne)
	holders := map[[2]int]int{}
	for _, parts := range owned(got) {
		for p := range parts {
			holders[p]++
		}
	}
	homogeneous := spec.Type == Homogeneous
	pools := map[string][]TopicID{} // pool name -> topics
	subscribers := map[string][]string{}
	for id, m := range spec.Members {
		for _, topic := range m.Topics {
			if topics.NumPartitions(topic) < 0 {
				continue
			}
			pool := fmt.Sprint(topic)
			if homogeneous {
				pool = "all"
			}
			if !slices.Contains(pools[pool], topic) {
				pools[pool] = append(pools[pool], topic)
			}
			if !slices.Contains(subscribers[pool], id) {
				subscribers[pool] = append(subscribers[pool], id)
			}
		}
	}
	for pool, ts := range pools {
		total := 0
		for _, topic := range ts {
			total += topics.NumPartitions(topic)
		}
		if total == 0 {
			continue
		}
		sharing := (len(subscribers[pool]) + total - 1) / total
		poolCounts := map[string]int{}
		for _, topic := range ts {
			for p := range topics.NumPartitions(topic) {
				if n := holders[[2]int{int(topic[0])<<8 | int(topic[1]), p}]; n != sharing {
					t.Fatalf("partition %d of %x held by %d members, want %d\n%s", p, topic, n, sharing, format(got))
				}
			}
			for _, id := range subscribers[pool] {
				poolCounts[id] += len(got[id][topic])
			}
		}
		if homogeneous {
			poolCounts = counts
		}
		if s := spread(poolCounts, subscribers[pool]); s > 1 {
			t.Fatalf("pool %s: counts differ by %d: %v\n%s", pool, s, poolCounts, format(got))
		}
	}
}

// TestSimpleProperties checks, on random groups with current assignments
// from a previous round: validity, sharing and balance (checkShared);
// stickiness where it is clear-cut: with no more members than partitions
// and no partition shared now, a homogeneous group keeps as much as the
// uniform assignor does; assigning
// again from the result changes nothing, nor does it from the result with
// assignments traded among members of like subscriptions.
func TestSimpleProperties(t *testing.T) {
	for _, homogeneous := range []bool{true, false} {
		o := scenarioOptions{homogeneous: homogeneous}
		t.Run(map[bool]string{true: "homogeneous", false: "heterogeneous"}[homogeneous], func(t *testing.T) {
			forSeeds(t, func(t *testing.T, rng *rand.Rand) {
				s := randomScenario(rng, o)
				if rng.IntN(2) == 0 { // many members on few partitions: sharing
					for _, id := range sortedTopics(s.topics) {
						topic := s.topics[id]
						topic.Partitions = 1 + rng.IntN(4)
						s.topics[id] = topic
					}
				}
				spec := previousRound(t, rng, Simple(), s, o)
				got := mustAssign(t, Simple(), spec, s.topics)
				checkShared(t, spec, s.topics, got)
				if homogeneous && !sharedNow(spec) {
					total := 0
					for _, m := range spec.Members {
						for _, topic := range m.Topics {
							total += s.topics.NumPartitions(topic)
						}
						break
					}
					if len(spec.Members) <= total {
						checkMaximallySticky(t, spec, s.topics, got)
					}
				}
				expectAssignment(t, mustAssign(t, Simple(), withCurrent(spec, got), s.topics), got)
				rotated := rotateAmongLikes(spec, got)
				expectAssignment(t, mustAssign(t, Simple(), withCurrent(spec, rotated), s.topics), rotated)
			})
		})
	}
}

// TestSimpleMemberLeaves: when a member leaves and the sharing stays the
// same, every other member keeps every partition it had.
func TestSimpleMemberLeaves(t *testing.T) {
	forSeeds(t, func(t *testing.T, rng *rand.Rand) {
		o := scenarioOptions{homogeneous: true}
		s := randomScenario(rng, o)
		for _, id := range sortedTopics(s.topics) {
			topic := s.topics[id]
			topic.Partitions = 1 + rng.IntN(6)
			s.topics[id] = topic
		}
		if len(s.spec.Members) < 2 {
			return
		}
		spec := withCurrent(s.spec, mustAssign(t, Simple(), s.spec, s.topics))
		members := slices.Sorted(maps.Keys(spec.Members))
		total := 0
		for _, topic := range spec.Members[members[0]].Topics {
			total += s.topics.NumPartitions(topic)
		}
		if (len(members)+total-1)/total != (len(members)-1+total-1)/total {
			return // the sharing drops: members must give partitions up
		}
		gone := members[rng.IntN(len(members))]
		delete(spec.Members, gone)
		got := mustAssign(t, Simple(), spec, s.topics)
		checkShared(t, spec, s.topics, got)
		before, after := owned(heldNow(spec, s.topics)), owned(got)
		for id := range spec.Members {
			for p := range before[id] {
				if !after[id][p] {
					t.Fatalf("%s left and %s lost partition %v", gone, id, p)
				}
			}
		}
	})
}

// sharedNow reports whether two members hold the same partition now.
func sharedNow(spec GroupSpec) bool {
	seen := map[[2]int]bool{}
	for _, parts := range owned(currentOf(spec)) {
		for p := range parts {
			if seen[p] {
				return true
			}
			seen[p] = true
		}
	}
	return false
}

// currentOf returns the current assignments of spec's members.
func currentOf(spec GroupSpec) map[string]Partitions {
	out := map[string]Partitions{}
	for id, m := range spec.Members {
		out[id] = m.Assignment
	}
	return out
}
