package assignor

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// The cases of Kafka's RangeAssignorTest (4.x), with the same expected
// assignments: the range assignor's output depends on no hash order.

func TestRangeOneMemberNoTopic(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{"A": member(nil, nil)}}
	got := mustAssign(t, Range(), spec, topicsOf(map[TopicID]int{tid(1): 3}))
	expectAssignment(t, got, map[string]Partitions{"A": {}})
}

// Kafka throws PartitionAssignorException here; the coordinator never
// passes an unknown topic, and we skip it (see the package comment).
func TestRangeOneMemberSubscribedToNonExistentTopic(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{"A": member(ids(tid(2)), nil)}}
	got := mustAssign(t, Range(), spec, topicsOf(map[TopicID]int{tid(1): 3}))
	expectAssignment(t, got, map[string]Partitions{"A": {}})
}

func TestRangeFirstAssignmentTwoMembersTwoTopicsSameSubscriptions(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"A": member(ids(tid(1), tid(3)), nil),
		"B": member(ids(tid(1), tid(3)), nil),
	}}
	got := mustAssign(t, Range(), spec, topicsOf(map[TopicID]int{tid(1): 3, tid(3): 2}))
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 1), tps(tid(3), 0)),
		"B": asg(tps(tid(1), 2), tps(tid(3), 1)),
	})
}

func TestRangeFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions(t *testing.T) {
	spec := GroupSpec{Type: Heterogeneous, Members: map[string]Member{
		"A": member(ids(tid(1), tid(2)), nil),
		"B": member(ids(tid(3)), nil),
		"C": member(ids(tid(2), tid(3)), nil),
	}}
	got := mustAssign(t, Range(), spec, topicsOf(map[TopicID]int{tid(1): 3, tid(2): 3, tid(3): 2}))
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 1, 2), tps(tid(2), 0, 1)),
		"B": asg(tps(tid(3), 0)),
		"C": asg(tps(tid(2), 2), tps(tid(3), 1)),
	})
}

func TestRangeFirstAssignmentNumMembersGreaterThanNumPartitions(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"A": member(ids(tid(1), tid(3)), nil),
		"B": member(ids(tid(1), tid(3)), nil),
		"C": member(ids(tid(1), tid(3)), nil),
	}}
	got := mustAssign(t, Range(), spec, topicsOf(map[TopicID]int{tid(1): 3, tid(3): 2}))
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0), tps(tid(3), 0)),
		"B": asg(tps(tid(1), 1), tps(tid(3), 1)),
		"C": asg(tps(tid(1), 2)),
	})
}

// A static member that rejoins under another member id gets its ranges
// back (Kafka's testStaticMembership and testMixedStaticMembership).
func TestRangeStaticMembership(t *testing.T) {
	for _, tc := range []struct {
		name       string
		partitions int
		members    map[string]string // member id -> instance id
	}{
		{"static", 3, map[string]string{"A": "instanceA", "B": "instanceB"}},
		{"mixed", 5, map[string]string{"A": "instanceA", "B": "", "C": "instanceC"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topics := topicsOf(map[TopicID]int{tid(1): tc.partitions})
			spec := GroupSpec{Members: map[string]Member{}}
			for id, instance := range tc.members {
				spec.Members[id] = Member{InstanceID: instance, Topics: ids(tid(1))}
			}
			before := mustAssign(t, Range(), spec, topics)
			a := spec.Members["A"]
			delete(spec.Members, "A")
			spec.Members["memberA1"] = a
			after := mustAssign(t, Range(), spec, topics)
			before["memberA1"] = before["A"]
			delete(before, "A")
			expectAssignment(t, after, before)
		})
	}
}

func TestRangeReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"A": member(ids(tid(1), tid(2)), asg(tps(tid(1), 0), tps(tid(2), 0))),
		"B": member(ids(tid(1), tid(2)), asg(tps(tid(1), 1), tps(tid(2), 1))),
		"C": member(ids(tid(1), tid(2)), nil),
	}}
	got := mustAssign(t, Range(), spec, topicsOf(map[TopicID]int{tid(1): 2, tid(2): 2}))
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0), tps(tid(2), 0)),
		"B": asg(tps(tid(1), 1), tps(tid(2), 1)),
		"C": {},
	})
}

func TestRangeReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"A": member(ids(tid(1), tid(2)), asg(tps(tid(1), 0, 1), tps(tid(2), 0, 1))),
		"B": member(ids(tid(1), tid(2)), asg(tps(tid(1), 2), tps(tid(2), 2))),
	}}
	got := mustAssign(t, Range(), spec, topicsOf(map[TopicID]int{tid(1): 4, tid(2): 4}))
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 1), tps(tid(2), 0, 1)),
		"B": asg(tps(tid(1), 2, 3), tps(tid(2), 2, 3)),
	})
}

func TestRangeReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"A": member(ids(tid(1), tid(2)), asg(tps(tid(1), 0, 1), tps(tid(2), 0, 1))),
		"B": member(ids(tid(1), tid(2)), asg(tps(tid(1), 2), tps(tid(2), 2))),
		"C": member(ids(tid(1), tid(2)), nil),
	}}
	got := mustAssign(t, Range(), spec, topicsOf(map[TopicID]int{tid(1): 3, tid(2): 3}))
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0), tps(tid(2), 0)),
		"B": asg(tps(tid(1), 1), tps(tid(2), 1)),
		"C": asg(tps(tid(1), 2), tps(tid(2), 2)),
	})
}

func TestRangeReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics(t *testing.T) {
	spec := GroupSpec{Type: Heterogeneous, Members: map[string]Member{
		"A": member(ids(tid(1), tid(2)), asg(tps(tid(1), 0, 1), tps(tid(2), 0, 1))),
		"B": member(ids(tid(1), tid(2)), asg(tps(tid(1), 2), tps(tid(2), 2))),
		"C": member(ids(tid(1)), nil),
	}}
	got := mustAssign(t, Range(), spec, topicsOf(map[TopicID]int{tid(1): 4, tid(2): 3}))
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 1), tps(tid(2), 0, 1)),
		"B": asg(tps(tid(1), 2), tps(tid(2), 2)),
		"C": asg(tps(tid(1), 3)),
	})
}

func TestRangeReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"B": member(ids(tid(1), tid(2)), asg(tps(tid(1), 2), tps(tid(2), 2))),
	}}
	got := mustAssign(t, Range(), spec, topicsOf(map[TopicID]int{tid(1): 3, tid(2): 3}))
	expectAssignment(t, got, map[string]Partitions{
		"B": asg(tps(tid(1), 0, 1, 2), tps(tid(2), 0, 1, 2)),
	})
}

func TestRangeReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics(t *testing.T) {
	spec := GroupSpec{Type: Heterogeneous, Members: map[string]Member{
		"A": member(ids(tid(1)), asg(tps(tid(1), 0, 1, 2), tps(tid(2), 0))),
		"B": member(ids(tid(1), tid(2), tid(3)), asg(tps(tid(2), 1))),
		"C": member(ids(tid(2)), asg(tps(tid(2), 2), tps(tid(3), 0, 1))),
	}}
	got := mustAssign(t, Range(), spec, topicsOf(map[TopicID]int{tid(1): 3, tid(2): 3, tid(3): 2}))
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 1)),
		"B": asg(tps(tid(1), 2), tps(tid(2), 0, 1), tps(tid(3), 0, 1)),
		"C": asg(tps(tid(2), 2)),
	})
}

// TestRangeProperties checks, on random groups with current assignments
// from a previous round: validity (every partition to exactly one
// subscriber); per topic, contiguous ranges whose sizes differ by at most
// one, in the order static members by instance id, then the others by
// member id; co-partitioning (topics with the same partition count and
// subscribers give a member the same partition indexes); and stickiness
// (assigning again from the result changes nothing).
func TestRangeProperties(t *testing.T) {
	for _, homogeneous := range []bool{true, false} {
		o := scenarioOptions{homogeneous: homogeneous, static: true}
		t.Run(map[bool]string{true: "homogeneous", false: "heterogeneous"}[homogeneous], func(t *testing.T) {
			forSeeds(t, func(t *testing.T, rng *rand.Rand) {
				s := randomScenario(rng, o)
				spec := previousRound(t, rng, Range(), s, o)
				got := mustAssign(t, Range(), spec, s.topics)
				checkValid(t, spec, s.topics, got, exactlyOne)
				checkRanges(t, spec, s.topics, got)
				again := mustAssign(t, Range(), withCurrent(spec, got), s.topics)
				expectAssignment(t, again, got)
			})
		})
	}
}

// checkRanges checks the range properties of got (see TestRangeProperties).
func checkRanges(t *testing.T, spec GroupSpec, topics StaticTopics, got map[string]Partitions) {
	t.Helper()
	subscribers := map[TopicID][]string{}
	for id, m := range spec.Members {
		for _, topic := range m.Topics {
			subscribers[topic] = append(subscribers[topic], id)
		}
	}
	before := func(a, b string) int {
		ia, ib := spec.Members[a].InstanceID, spec.Members[b].InstanceID
		switch {
		case ia != "" && ib != "" && ia != ib:
			return cmp.Compare(ia, ib)
		case ia != "" && ib == "":
			return -1
		case ia == "" && ib != "":
			return 1
		}
		return cmp.Compare(a, b)
	}
	for topic, members := range subscribers {
		slices.SortFunc(members, before)
		n := topics[topic].Partitions
		next := int32(0)
		for k, id := range members {
			want := n / len(members)
			if k < n%len(members) {
				want++
			}
			ps := got[id][topic]
			if len(ps) != want {
				t.Fatalf("topic %x: member %s (place %d of %d) got %d partitions, want %d", topic, id, k, len(members), len(ps), want)
			}
			for _, p := range ps {
				if p != next {
					t.Fatalf("topic %x: member %s got %v, want a range from %d", topic, id, ps, next-int32(len(ps)))
				}
				next++
			}
		}
	}
	for t1, m1 := range subscribers {
		for t2, m2 := range subscribers {
			if t1 == t2 || topics[t1].Partitions != topics[t2].Partitions || !slices.Equal(m1, m2) {
				continue
			}
			for _, id := range m1 {
				if !slices.Equal(got[id][t1], got[id][t2]) {
					t.Fatalf("co-partitioned topics %x and %x: member %s got %v and %v", t1, t2, id, got[id][t1], got[id][t2])
				}
			}
		}
	}
}
