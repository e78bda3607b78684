package assignor

import (
	"fmt"
	"testing"
)

// The cases of Kafka's CommonAssignorTests (4.2), run for each assignor
// and subscription type, with and without racks: three topics of 2, 5
// and 7 partitions, each partition with replicas in two of three racks,
// and members A, B and C subscribing to all three.

func commonTopics() StaticTopics {
	s := StaticTopics{}
	for k, n := range []int{2, 5, 7} {
		topic := StaticTopic{Partitions: n}
		for p := range n {
			topic.Racks = append(topic.Racks, []string{fmt.Sprintf("rack%d", 1+p%3), fmt.Sprintf("rack%d", 1+(p+1)%3)})
		}
		s[tid(k+1)] = topic
	}
	return s
}

// commonCase runs f for every assignor, subscription type and rack choice.
func commonCase(t *testing.T, assignors []Assignor, f func(t *testing.T, a Assignor, typ SubscriptionType, racks bool)) {
	for _, a := range assignors {
		for _, typ := range []SubscriptionType{Homogeneous, Heterogeneous} {
			for _, racks := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%v/racks=%v", a.Name(), typ, racks), func(t *testing.T) { f(t, a, typ, racks) })
			}
		}
	}
}

// commonGroup is A, B and C on the three topics; with racks, the members
// in rackOf's racks ("" for none).
func commonGroup(typ SubscriptionType, racks bool, rackOf map[string]string) GroupSpec {
	all := ids(tid(1), tid(2), tid(3))
	spec := GroupSpec{Type: typ, Members: map[string]Member{}}
	for _, id := range []string{"A", "B", "C"} {
		m := Member{Topics: all}
		if racks {
			m.RackID = rackOf[id]
		}
		spec.Members[id] = m
	}
	return spec
}

// testAssignmentReuse: assigning again from an assignment gives it back.
// (Kafka checks that the very maps come back; ours never returns the
// caller's, so it checks that equal ones do.)
func TestAssignorsAssignmentReuse(t *testing.T) {
	commonCase(t, []Assignor{Uniform(), Range(), Simple()}, func(t *testing.T, a Assignor, typ SubscriptionType, racks bool) {
		topics := commonTopics()
		spec := commonGroup(typ, racks, map[string]string{"A": "rack1", "B": "rack2", "C": "rack3"})
		first := mustAssign(t, a, spec, topics)
		expectAssignment(t, mustAssign(t, a, withCurrent(spec, first), topics), first)
	})
}

// testReassignmentStickiness: with only B in a rack, A and C are
// interchangeable, and assigning again still gives the same assignment.
// (Kafka also lists the members in every order; a GroupSpec's members
// are a map here, see TestAssignorsDeterministic.)
func TestAssignorsReassignmentStickiness(t *testing.T) {
	commonCase(t, []Assignor{Uniform(), Range(), Simple()}, func(t *testing.T, a Assignor, typ SubscriptionType, racks bool) {
		topics := commonTopics()
		spec := commonGroup(typ, racks, map[string]string{"B": "rack1"})
		first := mustAssign(t, a, spec, topics)
		rotated := withCurrent(spec, map[string]Partitions{"A": first["C"], "B": first["B"], "C": first["A"]})
		want := first
		if a.Name() != RangeName { // range recomputes from the member order alone
			want = map[string]Partitions{"A": first["C"], "B": first["B"], "C": first["A"]}
		}
		expectAssignment(t, mustAssign(t, a, rotated, topics), want)
	})
}

// testStaticMemberReplacementStickiness: static member A rejoins under a
// new member id with its instance id; the coordinator hands the new member
// A's target assignment, and it keeps it, and nobody else's changes.
func TestAssignorsStaticMemberReplacementStickiness(t *testing.T) {
	commonCase(t, []Assignor{Uniform(), Range(), Simple()}, func(t *testing.T, a Assignor, typ SubscriptionType, racks bool) {
		topics := commonTopics()
		spec := commonGroup(typ, racks, map[string]string{"A": "rack1", "B": "rack2", "C": "rack3"})
		for _, id := range []string{"A", "B", "C"} {
			m := spec.Members[id]
			m.InstanceID = "instance-" + id
			spec.Members[id] = m
		}
		first := mustAssign(t, a, spec, topics)
		next := withCurrent(spec, first)
		replaced := next.Members["A"]
		delete(next.Members, "A")
		next.Members["Z"] = replaced
		expectAssignment(t, mustAssign(t, a, next, topics), map[string]Partitions{"Z": first["A"], "B": first["B"], "C": first["C"]})
	})
}

// testMemberReplacementStickiness: A leaves and D joins in the same
// round; D gets what A had, and nobody else's changes. Not for range,
// whose ranges follow the member order, and D sorts after B and C.
func TestAssignorsMemberReplacementStickiness(t *testing.T) {
	commonCase(t, []Assignor{Uniform(), Simple()}, func(t *testing.T, a Assignor, typ SubscriptionType, racks bool) {
		topics := commonTopics()
		spec := commonGroup(typ, racks, map[string]string{"A": "rack1", "B": "rack2", "C": "rack3"})
		first := mustAssign(t, a, spec, topics)
		next := withCurrent(spec, first)
		joiner := next.Members["A"]
		joiner.Assignment = nil
		delete(next.Members, "A")
		next.Members["D"] = joiner
		expectAssignment(t, mustAssign(t, a, next, topics), map[string]Partitions{"D": first["A"], "B": first["B"], "C": first["C"]})
	})
}
