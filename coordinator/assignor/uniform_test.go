package assignor

import (
	"fmt"
	"testing"
)

// The cases of Kafka's UniformHomogeneousAssignmentBuilderTest
// (OptimizedUniformAssignmentBuilderTest before 4.0). Kafka lists the
// unassigned partitions topic by topic in the hash order of the topic ids,
// so where several topics have partitions to hand out its expected
// assignments follow that order; ours follow topic id order (tid(1) <
// tid(2) < tid(3)), and the cases say where that gives another, equally
// balanced and sticky, answer.

func TestUniformHomogeneousOneMemberNoTopicSubscription(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{"A": member(nil, nil)}}
	got := mustAssign(t, Uniform(), spec, topicsOf(map[TopicID]int{tid(1): 3}))
	expectAssignment(t, got, map[string]Partitions{"A": {}})
}

// Kafka throws PartitionAssignorException; we skip the unknown topic.
func TestUniformHomogeneousOneMemberSubscribedToNonexistentTopic(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{"A": member(ids(tid(2)), nil)}}
	got := mustAssign(t, Uniform(), spec, topicsOf(map[TopicID]int{tid(1): 3}))
	expectAssignment(t, got, map[string]Partitions{"A": {}})
}

// Kafka's expectation is A: T1[0] T3[0 1], B: T1[1 2], its hash order
// putting T3's partitions first.
func TestUniformHomogeneousFirstAssignmentTwoMembersTwoTopicsNoMemberRacks(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"A": member(ids(tid(1), tid(3)), nil),
		"B": member(ids(tid(1), tid(3)), nil),
	}}
	topics := topicsOf(map[TopicID]int{tid(1): 3, tid(3): 2})
	got := mustAssign(t, Uniform(), spec, topics)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 1, 2)),
		"B": asg(tps(tid(3), 0, 1)),
	})
	checkBalanced(t, spec, topics, got)
}

func TestUniformHomogeneousFirstAssignmentNumMembersGreaterThanTotalNumPartitions(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"A": member(ids(tid(3)), nil),
		"B": member(ids(tid(3)), nil),
		"C": member(ids(tid(3)), nil),
	}}
	topics := topicsOf(map[TopicID]int{tid(3): 2})
	got := mustAssign(t, Uniform(), spec, topics)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(3), 0)),
		"B": asg(tps(tid(3), 1)),
		"C": {},
	})
	checkBalanced(t, spec, topics, got)
}

func TestUniformHomogeneousValidityAndBalanceForLargeSampleSet(t *testing.T) {
	counts := map[TopicID]int{}
	var all []TopicID
	for k := 1; k < 100; k++ {
		counts[tid(k)] = 3
		all = append(all, tid(k))
	}
	spec := GroupSpec{Members: map[string]Member{}}
	for k := 1; k < 50; k++ {
		spec.Members[fmt.Sprintf("member%d", k)] = member(all, nil)
	}
	topics := topicsOf(counts)
	checkBalanced(t, spec, topics, mustAssign(t, Uniform(), spec, topics))
}

func TestUniformHomogeneousReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"A": member(ids(tid(1), tid(2)), asg(tps(tid(1), 0, 1), tps(tid(2), 0, 1))),
		"B": member(ids(tid(1), tid(2)), asg(tps(tid(1), 2), tps(tid(2), 2))),
	}}
	topics := topicsOf(map[TopicID]int{tid(1): 3, tid(2): 3})
	got := mustAssign(t, Uniform(), spec, topics)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 1), tps(tid(2), 0)),
		"B": asg(tps(tid(1), 2), tps(tid(2), 1, 2)),
	})
	checkBalanced(t, spec, topics, got)
}

// Kafka's expectation is A: T1[0 2 3] T2[0 3 4], B: T1[1 4 5] T2[1 2]
// (T2's new partitions listed first).
func TestUniformHomogeneousReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"A": member(ids(tid(1), tid(2)), asg(tps(tid(1), 0, 2), tps(tid(2), 0))),
		"B": member(ids(tid(1), tid(2)), asg(tps(tid(1), 1), tps(tid(2), 1, 2))),
	}}
	topics := topicsOf(map[TopicID]int{tid(1): 6, tid(2): 5})
	got := mustAssign(t, Uniform(), spec, topics)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 2, 3, 4, 5), tps(tid(2), 0)),
		"B": asg(tps(tid(1), 1), tps(tid(2), 1, 2, 3, 4)),
	})
	checkBalanced(t, spec, topics, got)
}

func TestUniformHomogeneousReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"A": member(ids(tid(1), tid(2)), asg(tps(tid(1), 0, 2), tps(tid(2), 0))),
		"B": member(ids(tid(1), tid(2)), asg(tps(tid(1), 1), tps(tid(2), 1, 2))),
		"C": member(ids(tid(1), tid(2)), nil),
	}}
	topics := topicsOf(map[TopicID]int{tid(1): 3, tid(2): 3})
	got := mustAssign(t, Uniform(), spec, topics)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 2)),
		"B": asg(tps(tid(1), 1), tps(tid(2), 1)),
		"C": asg(tps(tid(2), 0, 2)),
	})
	checkBalanced(t, spec, topics, got)
}

// Kafka's expectation is A: T1[0] T2[0 2], B: T1[1 2] T2[1] (T2's
// partition listed first).
func TestUniformHomogeneousReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"A": member(ids(tid(1), tid(2)), asg(tps(tid(1), 0), tps(tid(2), 0))),
		"B": member(ids(tid(1), tid(2)), asg(tps(tid(1), 1), tps(tid(2), 1))),
	}}
	topics := topicsOf(map[TopicID]int{tid(1): 3, tid(2): 3})
	got := mustAssign(t, Uniform(), spec, topics)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 2), tps(tid(2), 0)),
		"B": asg(tps(tid(1), 1), tps(tid(2), 1, 2)),
	})
	checkBalanced(t, spec, topics, got)
}

func TestUniformHomogeneousReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics(t *testing.T) {
	spec := GroupSpec{Members: map[string]Member{
		"A": member(ids(tid(2)), asg(tps(tid(1), 0), tps(tid(2), 0))),
		"B": member(ids(tid(2)), asg(tps(tid(1), 1), tps(tid(2), 1))),
	}}
	topics := topicsOf(map[TopicID]int{tid(1): 2, tid(2): 2})
	got := mustAssign(t, Uniform(), spec, topics)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(2), 0)),
		"B": asg(tps(tid(2), 1)),
	})
	checkBalanced(t, spec, topics, got)
}

// Where Kafka's member order gives the extra partition to the first member
// whatever it holds, we give it to a member that holds more than the
// minimum, so that it keeps what it holds; else to a member below the
// minimum, which gets new partitions anyway, so that a member holding the
// minimum keeps its assignment as it is (see stickyQuotas).
func TestUniformHomogeneousExtraPartitionStaysWithItsHolder(t *testing.T) {
	topics := topicsOf(map[TopicID]int{tid(1): 5})
	for _, tc := range []struct {
		name    string
		current map[string]Partitions
		want    map[string]Partitions
	}{{
		// B holds three, one more than the minimum: it keeps them, and
		// A takes the two C left; Kafka's order would move one of B's
		// to A.
		name:    "holder above the minimum",
		current: map[string]Partitions{"A": {}, "B": asg(tps(tid(1), 1, 2, 3))},
		want:    map[string]Partitions{"A": asg(tps(tid(1), 0, 4)), "B": asg(tps(tid(1), 1, 2, 3))},
	}, {
		// B holds the minimum, two: A, below it, takes both that C
		// left, and B's assignment does not change.
		name:    "holder at the minimum",
		current: map[string]Partitions{"A": asg(tps(tid(1), 0)), "B": asg(tps(tid(1), 1, 2))},
		want:    map[string]Partitions{"A": asg(tps(tid(1), 0, 3, 4)), "B": asg(tps(tid(1), 1, 2))},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := GroupSpec{Members: map[string]Member{
				"A": member(ids(tid(1)), tc.current["A"]),
				"B": member(ids(tid(1)), tc.current["B"]),
			}}
			expectAssignment(t, mustAssign(t, Uniform(), spec, topics), tc.want)
		})
	}
}

// The cases of Kafka's UniformHeterogeneousAssignmentBuilderTest, whose
// expected assignments depend on no hash order (its GroupSpec lists members
// in id order, and topics are ordered by the comparator, ties by id).

func TestUniformHeterogeneousTwoMembersNoTopicSubscription(t *testing.T) {
	spec := GroupSpec{Type: Heterogeneous, Members: map[string]Member{
		"A": member(nil, nil),
		"B": member(nil, nil),
	}}
	got := mustAssign(t, Uniform(), spec, topicsOf(map[TopicID]int{tid(1): 3}))
	expectAssignment(t, got, map[string]Partitions{"A": {}, "B": {}})
}

// Kafka throws PartitionAssignorException; we skip the unknown topics.
func TestUniformHeterogeneousTwoMembersSubscribedToNonexistentTopics(t *testing.T) {
	spec := GroupSpec{Type: Heterogeneous, Members: map[string]Member{
		"A": member(ids(tid(3)), nil),
		"B": member(ids(tid(2)), nil),
	}}
	got := mustAssign(t, Uniform(), spec, topicsOf(map[TopicID]int{tid(1): 3}))
	expectAssignment(t, got, map[string]Partitions{"A": {}, "B": {}})
}

func TestUniformHeterogeneousKafkaCases(t *testing.T) {
	for _, tc := range []struct {
		name    string
		topics  map[TopicID]int
		members map[string]Member
		want    map[string]Partitions
	}{{
		name:   "FirstAssignmentTwoMembersTwoTopics",
		topics: map[TopicID]int{tid(1): 3, tid(3): 6},
		members: map[string]Member{
			"A": member(ids(tid(1), tid(3)), nil),
			"B": member(ids(tid(3)), nil),
		},
		want: map[string]Partitions{
			"A": asg(tps(tid(1), 0, 1, 2), tps(tid(3), 4)),
			"B": asg(tps(tid(3), 0, 1, 2, 3, 5)),
		},
	}, {
		name:   "FirstAssignmentNumMembersGreaterThanTotalNumPartitions",
		topics: map[TopicID]int{tid(3): 1, tid(1): 2},
		members: map[string]Member{
			"A": member(ids(tid(3)), nil),
			"B": member(ids(tid(3)), nil),
			"C": member(ids(tid(1)), nil),
		},
		want: map[string]Partitions{
			"A": asg(tps(tid(3), 0)),
			"B": {},
			"C": asg(tps(tid(1), 0, 1)),
		},
	}, {
		name:   "ReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment",
		topics: map[TopicID]int{tid(1): 6, tid(2): 4, tid(3): 4},
		members: map[string]Member{
			"A": member(ids(tid(1)), asg(tps(tid(1), 0, 1, 2))),
			"B": member(ids(tid(1), tid(2)), asg(tps(tid(1), 3), tps(tid(2), 0))),
			"C": member(ids(tid(1), tid(2), tid(3)), asg(tps(tid(1), 4, 5), tps(tid(2), 1, 2, 3), tps(tid(3), 0, 1, 2, 3))),
		},
		want: map[string]Partitions{
			"A": asg(tps(tid(1), 0, 1, 2, 5)),
			"B": asg(tps(tid(1), 3), tps(tid(2), 0, 1, 2, 3)),
			"C": asg(tps(tid(1), 4), tps(tid(3), 0, 1, 2, 3)),
		},
	}, {
		name:   "ReassignmentWhenPartitionsAreAddedForTwoMembers",
		topics: map[TopicID]int{tid(1): 6, tid(2): 5, tid(3): 3, tid(4): 3},
		members: map[string]Member{
			"A": member(ids(tid(1), tid(3)), asg(tps(tid(1), 0, 1, 2, 3), tps(tid(3), 0, 1))),
			"B": member(ids(tid(1), tid(2), tid(3), tid(4)), asg(tps(tid(2), 0, 1, 2), tps(tid(4), 0, 1, 2))),
		},
		want: map[string]Partitions{
			"A": asg(tps(tid(1), 0, 1, 2, 3, 4, 5), tps(tid(3), 0, 1, 2)),
			"B": asg(tps(tid(2), 0, 1, 2, 3, 4), tps(tid(4), 0, 1, 2)),
		},
	}, {
		name:   "ReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics",
		topics: map[TopicID]int{tid(1): 6, tid(2): 7},
		members: map[string]Member{
			"A": member(ids(tid(1)), asg(tps(tid(1), 0, 2), tps(tid(2), 0))),
			"B": member(ids(tid(1), tid(2)), asg(tps(tid(1), 1), tps(tid(2), 1, 2))),
			"C": member(ids(tid(1), tid(2)), nil),
		},
		want: map[string]Partitions{
			"A": asg(tps(tid(1), 0, 2, 3, 4, 5)),
			"B": asg(tps(tid(1), 1), tps(tid(2), 1, 2, 6)),
			"C": asg(tps(tid(2), 0, 3, 4, 5)),
		},
	}, {
		name:   "ReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics",
		topics: map[TopicID]int{tid(1): 3, tid(2): 8, tid(3): 3},
		members: map[string]Member{
			"A": member(ids(tid(1), tid(3)), asg(tps(tid(1), 0, 1, 2), tps(tid(3), 0, 1))),
			"B": member(ids(tid(2)), asg(tps(tid(2), 3, 4, 5, 6))),
		},
		want: map[string]Partitions{
			"A": asg(tps(tid(1), 0, 1, 2), tps(tid(3), 0, 1, 2)),
			"B": asg(tps(tid(2), 0, 1, 2, 3, 4, 5, 6, 7)),
		},
	}, {
		name:   "ReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics",
		topics: map[TopicID]int{tid(1): 3, tid(2): 5},
		members: map[string]Member{
			"A": member(ids(tid(1)), asg(tps(tid(1), 0, 2), tps(tid(2), 1, 3))),
			"B": member(ids(tid(1), tid(2)), asg(tps(tid(1), 1), tps(tid(2), 0, 2, 4))),
		},
		want: map[string]Partitions{
			"A": asg(tps(tid(1), 0, 1, 2)),
			"B": asg(tps(tid(2), 0, 1, 2, 3, 4)),
		},
	}, {
		// The topic's partitions run out before its subscribers are
		// balanced, and its least loaded subscribers hold none of it.
		name:   "ReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions",
		topics: map[TopicID]int{tid(1): 2, tid(2): 2, tid(3): 2},
		members: map[string]Member{
			"A": member(ids(tid(1), tid(2), tid(3)), asg(tps(tid(1), 0, 1), tps(tid(2), 0, 1), tps(tid(3), 0, 1))),
			"B": member(ids(tid(1), tid(2), tid(3)), nil),
		},
		want: map[string]Partitions{
			"A": asg(tps(tid(2), 0), tps(tid(3), 0, 1)),
			"B": asg(tps(tid(1), 0, 1), tps(tid(2), 1)),
		},
	}, {
		name:   "FirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions",
		topics: map[TopicID]int{tid(1): 3},
		members: map[string]Member{
			"A": member(ids(tid(1)), nil),
			"B": member(nil, nil),
		},
		want: map[string]Partitions{
			"A": asg(tps(tid(1), 0, 1, 2)),
			"B": {},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := GroupSpec{Type: Heterogeneous, Members: tc.members}
			topics := topicsOf(tc.topics)
			got := mustAssign(t, Uniform(), spec, topics)
			expectAssignment(t, got, tc.want)
			checkValid(t, spec, topics, got, exactlyOne)
		})
	}
}

// checkBalanced checks validity and that the members' counts differ by at
// most one (Kafka's checkValidityAndBalance for homogeneous groups).
func checkBalanced(t *testing.T, spec GroupSpec, d TopicDescriber, got map[string]Partitions) {
	t.Helper()
	counts := checkValid(t, spec, d, got, exactlyOne)
	var members []string
	for id := range spec.Members {
		members = append(members, id)
	}
	if s := spread(counts, members); s > 1 {
		t.Fatalf("partition counts differ by %d: %v", s, counts)
	}
}
