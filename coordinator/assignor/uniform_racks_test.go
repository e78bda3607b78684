package assignor

import (
	"fmt"
	"slices"
	"testing"
)

// rackTopics gives each topic n partitions whose replicas are in the racks
// rackOf(partition) returns.
func rackTopics(topics []TopicID, n int, rackOf func(p int) []string) StaticTopics {
	s := StaticTopics{}
	for _, t := range topics {
		topic := StaticTopic{Partitions: n}
		for p := range n {
			topic.Racks = append(topic.Racks, rackOf(p))
		}
		s[t] = topic
	}
	return s
}

// checkAllInRack checks that every member got only partitions with a
// replica in its rack.
func checkAllInRack(t *testing.T, spec GroupSpec, topics StaticTopics, got map[string]Partitions) {
	t.Helper()
	for id, parts := range got {
		for topic, ps := range parts {
			for _, p := range ps {
				if rs := topics.RacksOf(topic, p); !slices.Contains(rs, spec.Members[id].RackID) {
					t.Fatalf("member %s in rack %s got partition %d of %x, on racks %v\n%s",
						id, spec.Members[id].RackID, p, topic, rs, format(got))
				}
			}
		}
	}
}

// Six members, two in each of three racks, and three topics whose
// partitions each have their one replica in rack p%3: every member can get
// its three partitions in its own rack, and does.
func TestUniformRackAwareHomogeneousFirstAssignment(t *testing.T) {
	all := ids(tid(1), tid(2), tid(3))
	topics := rackTopics(all, 6, func(p int) []string { return []string{fmt.Sprintf("r%d", p%3)} })
	spec := GroupSpec{Members: map[string]Member{}}
	for k := range 6 {
		spec.Members[fmt.Sprintf("m%d", k)] = Member{Topics: all, RackID: fmt.Sprintf("r%d", k/2)}
	}
	got := mustAssign(t, Uniform(), spec, topics)
	checkBalanced(t, spec, topics, got)
	checkAllInRack(t, spec, topics, got)
}

// In a heterogeneous group the partitions handed out in turn land in the
// wrong racks (A gets 0 and 2, B 1 and 3); swapping the moved partitions
// puts each in its rack.
func TestUniformRackAwareHeterogeneous(t *testing.T) {
	topics := rackTopics(ids(tid(1)), 4, func(p int) []string { return []string{[]string{"r0", "r0", "r1", "r1"}[p]} })
	topics[tid(2)] = StaticTopic{Partitions: 2, Racks: [][]string{{"r0"}, {"r0"}}}
	spec := GroupSpec{Type: Heterogeneous, Members: map[string]Member{
		"A": {Topics: ids(tid(1)), RackID: "r0"},
		"B": {Topics: ids(tid(1)), RackID: "r1"},
		"C": {Topics: ids(tid(2)), RackID: "r0"},
	}}
	got := mustAssign(t, Uniform(), spec, topics)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 0, 1)),
		"B": asg(tps(tid(1), 2, 3)),
		"C": asg(tps(tid(2), 0, 1)),
	})
}

// Handed out in turn, the partitions of T1 would land one rack off each
// (A in r0 getting the partition in r1, B the one in r2, C the one in r0),
// a cycle no trade of two fixes; handed out for racks, each lands in its
// member's rack.
func TestUniformRackAwareHeterogeneousHandOut(t *testing.T) {
	topics := rackTopics(ids(tid(1)), 3, func(p int) []string { return []string{fmt.Sprintf("r%d", (p+1)%3)} })
	topics[tid(2)] = StaticTopic{Partitions: 1}
	spec := GroupSpec{Type: Heterogeneous, Members: map[string]Member{
		"A": {Topics: ids(tid(1)), RackID: "r0"},
		"B": {Topics: ids(tid(1)), RackID: "r1"},
		"C": {Topics: ids(tid(1)), RackID: "r2"},
		"D": {Topics: ids(tid(2)), RackID: "r0"},
	}}
	got := mustAssign(t, Uniform(), spec, topics)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 2)),
		"B": asg(tps(tid(1), 0)),
		"C": asg(tps(tid(1), 1)),
		"D": asg(tps(tid(2), 0)),
	})
}

// When balancing a heterogeneous group moves partitions from A to the new
// B, A gives up the ones in B's rack, not its highest.
func TestUniformRackAwareHeterogeneousBalance(t *testing.T) {
	topics := rackTopics(ids(tid(1)), 4, func(p int) []string { return []string{[]string{"r1", "r0", "r1", "r0"}[p]} })
	topics[tid(2)] = StaticTopic{Partitions: 1}
	spec := GroupSpec{Type: Heterogeneous, Members: map[string]Member{
		"A": {Topics: ids(tid(1)), RackID: "r0", Assignment: asg(tps(tid(1), 0, 1, 2, 3))},
		"B": {Topics: ids(tid(1)), RackID: "r1"},
		"C": {Topics: ids(tid(2)), RackID: "r0"},
	}}
	got := mustAssign(t, Uniform(), spec, topics)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 1, 3)),
		"B": asg(tps(tid(1), 0, 2)),
		"C": asg(tps(tid(2), 0)),
	})
}

// Stickiness comes before racks: members holding partitions in the other
// rack keep them while balance allows.
func TestUniformRackStickinessFirst(t *testing.T) {
	topics := rackTopics(ids(tid(1)), 2, func(p int) []string { return []string{[]string{"r0", "r1"}[p]} })
	for _, typ := range []SubscriptionType{Homogeneous, Heterogeneous} {
		spec := GroupSpec{Type: typ, Members: map[string]Member{
			"A": {Topics: ids(tid(1)), RackID: "r0", Assignment: asg(tps(tid(1), 1))},
			"B": {Topics: ids(tid(1)), RackID: "r1", Assignment: asg(tps(tid(1), 0))},
		}}
		got := mustAssign(t, Uniform(), spec, topics)
		expectAssignment(t, got, map[string]Partitions{
			"A": asg(tps(tid(1), 1)),
			"B": asg(tps(tid(1), 0)),
		})
	}
}

// A member over its quota gives up the partitions outside its rack first.
func TestUniformRackGivesUpOtherRacksFirst(t *testing.T) {
	topics := rackTopics(ids(tid(1)), 4, func(p int) []string { return []string{[]string{"r1", "r1", "r0", "r0"}[p]} })
	spec := GroupSpec{Members: map[string]Member{
		"A": {Topics: ids(tid(1)), RackID: "r0", Assignment: asg(tps(tid(1), 0, 1, 2, 3))},
		"B": {Topics: ids(tid(1)), RackID: "r1"},
	}}
	got := mustAssign(t, Uniform(), spec, topics)
	expectAssignment(t, got, map[string]Partitions{
		"A": asg(tps(tid(1), 2, 3)),
		"B": asg(tps(tid(1), 0, 1)),
	})
}

// Racks change nothing when every partition has replicas in the same racks
// (no member is closer to one than to another), or when no member is in a
// rack any partition has a replica in.
func TestUniformRackAwareOnlyWhenRacksDiffer(t *testing.T) {
	all := ids(tid(1), tid(2))
	for _, tc := range []struct {
		name   string
		racks  func(p int) []string
		member []string
	}{
		{"same racks everywhere", func(int) []string { return []string{"r1", "r0"} }, []string{"r0", "r1", "r0", "r1"}},
		{"no member in a partition's rack", func(p int) []string { return []string{fmt.Sprintf("r%d", p%2)} }, []string{"r7", "r8", "", "r9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topics := rackTopics(all, 5, tc.racks)
			withRacks := GroupSpec{Members: map[string]Member{}}
			without := GroupSpec{Members: map[string]Member{}}
			for k, rack := range tc.member {
				id := fmt.Sprintf("m%d", k)
				withRacks.Members[id] = Member{Topics: all, RackID: rack}
				without.Members[id] = Member{Topics: all}
			}
			expectAssignment(t, mustAssign(t, Uniform(), withRacks, topics), mustAssign(t, Uniform(), without, topics))
		})
	}
}
