package assignor

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestUniformHomogeneousProperties checks, on random homogeneous groups
// (with and without racks) whose current assignments come from a previous
// round with other members, partition counts and subscriptions: validity,
// balance (counts at most one apart), stickiness (every member keeps
// min(what it held, what it gets) of its partitions, and the members keep
// as many partitions in all as balance allows), and that assigning again
// from the result changes nothing.
func TestUniformHomogeneousProperties(t *testing.T) {
	forSeeds(t, func(t *testing.T, rng *rand.Rand) {
		o := scenarioOptions{homogeneous: true, racks: rng.IntN(2) == 0}
		s := randomScenario(rng, o)
		spec := previousRound(t, rng, Uniform(), s, o)
		got := mustAssign(t, Uniform(), spec, s.topics)
		checkBalanced(t, spec, s.topics, got)
		checkMaximallySticky(t, spec, s.topics, got)
		again := mustAssign(t, Uniform(), withCurrent(spec, got), s.topics)
		expectAssignment(t, again, got)
	})
}

// checkMaximallySticky checks a homogeneous uniform assignment against the
// current one: a member either keeps all it held (and may get more) or
// gets only partitions it held, and the extra partitions of the quota go
// to members that held more than the minimum, so that the members keep
// sum(min(held, P/M)) + min(P%M, members holding more than P/M) in all,
// the most any balanced assignment keeps.
func checkMaximallySticky(t *testing.T, spec GroupSpec, topics StaticTopics, got map[string]Partitions) {
	t.Helper()
	total := 0
	var shared []TopicID
	for _, m := range spec.Members {
		shared = m.Topics
	}
	for _, topic := range shared {
		total += max(0, topics.NumPartitions(topic))
	}
	if len(spec.Members) == 0 || total == 0 {
		return
	}
	quota, extra := total/len(spec.Members), total%len(spec.Members)
	before := owned(heldNow(spec, topics))
	after := owned(got)
	keptInAll, best, over := 0, 0, 0
	for id := range spec.Members {
		kept := 0
		for p := range before[id] {
			if after[id][p] {
				kept++
			}
		}
		if want := min(len(before[id]), len(after[id])); kept != want {
			t.Fatalf("member %s held %d, got %d, kept %d of them, want %d", id, len(before[id]), len(after[id]), kept, want)
		}
		keptInAll += kept
		best += min(len(before[id]), quota)
		if len(before[id]) > quota {
			over++
		}
	}
	if best += min(extra, over); keptInAll != best {
		t.Fatalf("members kept %d partitions, balance allows %d", keptInAll, best)
	}
}

// heldNow returns the current assignments of spec's members, restricted to
// partitions that exist of topics they subscribe to (what they may keep).
func heldNow(spec GroupSpec, topics StaticTopics) map[string]Partitions {
	out := map[string]Partitions{}
	for id, m := range spec.Members {
		out[id] = Partitions{}
		for topic, ps := range m.Assignment {
			if !slices.Contains(m.Topics, topic) {
				continue
			}
			for _, p := range ps {
				if int(p) < topics.NumPartitions(topic) {
					out[id][topic] = append(out[id][topic], p)
				}
			}
		}
	}
	return out
}

// TestUniformHomogeneousMemberLeaves: when a member leaves a balanced
// group, every other member keeps every partition it had.
func TestUniformHomogeneousMemberLeaves(t *testing.T) {
	forSeeds(t, func(t *testing.T, rng *rand.Rand) {
		o := scenarioOptions{homogeneous: true, racks: rng.IntN(2) == 0}
		s := randomScenario(rng, o)
		if len(s.spec.Members) < 2 {
			return
		}
		spec := withCurrent(s.spec, mustAssign(t, Uniform(), s.spec, s.topics))
		members := slices.Sorted(maps.Keys(spec.Members))
		gone := members[rng.IntN(len(members))]
		delete(spec.Members, gone)
		got := mustAssign(t, Uniform(), spec, s.topics)
		checkBalanced(t, spec, s.topics, got)
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

// TestUniformHomogeneousMemberJoins: when a member joins a balanced group,
// the others only give up partitions, each no more than balance requires,
// and all they give up goes to the new member.
func TestUniformHomogeneousMemberJoins(t *testing.T) {
	forSeeds(t, func(t *testing.T, rng *rand.Rand) {
		o := scenarioOptions{homogeneous: true, racks: rng.IntN(2) == 0}
		s := randomScenario(rng, o)
		if len(s.spec.Members) == 0 {
			return
		}
		spec := withCurrent(s.spec, mustAssign(t, Uniform(), s.spec, s.topics))
		var shared []TopicID
		for _, m := range spec.Members {
			shared = m.Topics
		}
		spec.Members["member-new"] = Member{Topics: shared, RackID: "r1"}
		got := mustAssign(t, Uniform(), spec, s.topics)
		counts := checkValid(t, spec, s.topics, got, exactlyOne)
		total := 0
		for _, n := range counts {
			total += n
		}
		quota := total / len(spec.Members)
		before, after := owned(heldNow(spec, s.topics)), owned(got)
		lost := 0
		for id := range spec.Members {
			if id == "member-new" {
				continue
			}
			for p := range after[id] {
				if !before[id][p] {
					t.Fatalf("member %s gained partition %v when member-new joined", id, p)
				}
			}
			if len(after[id]) < min(len(before[id]), quota) {
				t.Fatalf("member %s went from %d to %d partitions, balance needs %d", id, len(before[id]), len(after[id]), quota)
			}
			lost += len(before[id]) - len(after[id])
		}
		if lost != counts["member-new"] {
			t.Fatalf("the others gave up %d partitions, the new member got %d", lost, counts["member-new"])
		}
	})
}

// TestUniformHeterogeneousProperties checks, on random heterogeneous
// groups with current assignments from a previous round: validity; the
// balance Kafka's heterogeneous builder reaches (no partition of a topic
// could move from a subscriber holding it to another subscriber with two
// or more fewer partitions); and stickiness as far as it goes with
// overlapping subscriptions, where balancing one topic can undo another's:
// assigning again from the result changes nothing, nor does it from the
// result with its assignments traded among members of like subscriptions.
func TestUniformHeterogeneousProperties(t *testing.T) {
	forSeeds(t, func(t *testing.T, rng *rand.Rand) {
		o := scenarioOptions{racks: rng.IntN(2) == 0}
		s := randomScenario(rng, o)
		spec := previousRound(t, rng, Uniform(), s, o)
		got := mustAssign(t, Uniform(), spec, s.topics)
		counts := checkValid(t, spec, s.topics, got, exactlyOne)
		subscribers := map[TopicID][]string{}
		for id, m := range spec.Members {
			for _, topic := range m.Topics {
				subscribers[topic] = append(subscribers[topic], id)
			}
		}
		for topic, members := range subscribers {
			least := slices.MinFunc(members, func(a, b string) int { return counts[a] - counts[b] })
			for _, id := range members {
				if len(got[id][topic]) > 0 && counts[id]-counts[least] > 1 {
					t.Fatalf("topic %x: %s holds %d partitions, one of them of the topic, and subscriber %s only %d",
						topic, id, counts[id], least, counts[least])
				}
			}
		}
		again := mustAssign(t, Uniform(), withCurrent(spec, got), s.topics)
		expectAssignment(t, again, got)
		rotated := rotateAmongLikes(spec, got)
		expectAssignment(t, mustAssign(t, Uniform(), withCurrent(spec, rotated), s.topics), rotated)
	})
}

// rotateAmongLikes hands each member the assignment of the next member (in
// id order) with the same subscriptions. The result is as balanced as a,
// and a sticky assignor keeps it as it is, where one that recomputes from
// the members alone gives a back.
func rotateAmongLikes(spec GroupSpec, a map[string]Partitions) map[string]Partitions {
	likes := map[string][]string{}
	for _, id := range slices.Sorted(maps.Keys(spec.Members)) {
		topics := slices.SortedFunc(slices.Values(spec.Members[id].Topics), func(x, y TopicID) int { return slices.Compare(x[:], y[:]) })
		key := fmt.Sprint(topics)
		likes[key] = append(likes[key], id)
	}
	out := map[string]Partitions{}
	for _, members := range likes {
		for k, id := range members {
			out[id] = a[members[(k+1)%len(members)]]
		}
	}
	return out
}

// TestAssignorsDeterministic: the same group, with its maps built in
// another order and its subscriptions listed in another order, gets the
// same assignment, from every assignor.
func TestAssignorsDeterministic(t *testing.T) {
	for _, a := range []Assignor{Uniform(), Range(), Simple()} {
		t.Run(a.Name(), func(t *testing.T) {
			forSeeds(t, func(t *testing.T, rng *rand.Rand) {
				o := scenarioOptions{homogeneous: rng.IntN(2) == 0, racks: true, static: true}
				s := randomScenario(rng, o)
				spec := previousRound(t, rng, a, s, o)
				got := mustAssign(t, a, spec, s.topics)
				shuffled := GroupSpec{Members: map[string]Member{}, Type: spec.Type}
				for _, id := range rng.Perm(len(spec.Members)) {
					name := fmt.Sprintf("member-%02d", id)
					m := spec.Members[name]
					m.Topics = slices.Clone(m.Topics)
					rng.Shuffle(len(m.Topics), func(i, j int) { m.Topics[i], m.Topics[j] = m.Topics[j], m.Topics[i] })
					shuffled.Members[name] = m
				}
				expectAssignment(t, mustAssign(t, a, shuffled, s.topics), got)
			})
		})
	}
}

// TestAssignorsDoNotAlias: the result shares no slice with the caller's
// current assignments.
func TestAssignorsDoNotAlias(t *testing.T) {
	for _, a := range []Assignor{Uniform(), Range(), Simple()} {
		t.Run(a.Name(), func(t *testing.T) {
			for _, typ := range []SubscriptionType{Homogeneous, Heterogeneous} {
				current := asg(tps(tid(1), 0, 1, 2, 3))
				spec := GroupSpec{Type: typ, Members: map[string]Member{"A": member(ids(tid(1)), current)}}
				got := mustAssign(t, a, spec, topicsOf(map[TopicID]int{tid(1): 4}))
				expectAssignment(t, got, map[string]Partitions{"A": current})
				got["A"][tid(1)][0] = 99
				if current[tid(1)][0] != 0 {
					t.Fatalf("%v: writing the result changed the current assignment", typ)
				}
			}
		})
	}
}

// TestAssignorsBadInput: current assignments naming partitions out of
// range, negative, twice, unsorted, or claimed by two members,
// subscriptions naming a topic twice, and a group said to be homogeneous
// that is not, get a valid assignment, not a panic.
func TestAssignorsBadInput(t *testing.T) {
	for _, a := range []Assignor{Uniform(), Range(), Simple()} {
		for _, typ := range []SubscriptionType{Homogeneous, Heterogeneous} {
			spec := GroupSpec{Type: typ, Members: map[string]Member{
				"A": member(ids(tid(1), tid(1), tid(9)), asg(tps(tid(1), 7, -1, 2, 2, 0), tps(tid(9), 0))),
				"B": member(ids(tid(1)), asg(tps(tid(1), 2, 1), tps(tid(2), 0))),
				"C": member(ids(tid(1)), asg(tps(tid(1), 3, 1<<30))),
				"D": member(ids(tid(2)), nil), // not homogeneous, whatever the type says
			}}
			topics := topicsOf(map[TopicID]int{tid(1): 4, tid(2): 1})
			cov := exactlyOne
			if a.Name() == SimpleName {
				cov = atLeastOne
			}
			checkValid(t, spec, topics, mustAssign(t, a, spec, topics), cov)
		}
	}
}

// hugeTopics describes topics with more partitions than an int32 counts.
type hugeTopics map[TopicID]int

func (h hugeTopics) NumPartitions(t TopicID) int         { return h[t] }
func (h hugeTopics) RacksOf(t TopicID, p int32) []string { return nil }

// TestAssignorsRejectHugeTopics: a describer claiming more partitions than
// Kafka can number gets ErrPartitionAssignor, not an allocation of that
// size.
func TestAssignorsRejectHugeTopics(t *testing.T) {
	for _, a := range []Assignor{Uniform(), Range(), Simple()} {
		for _, topics := range []hugeTopics{
			{tid(1): 1 << 31},
			{tid(1): 1<<31 - 1, tid(2): 1},
		} {
			spec := GroupSpec{Members: map[string]Member{"A": member(ids(tid(1), tid(2)), nil)}}
			if _, err := a.Assign(spec, topics); !errors.Is(err, ErrPartitionAssignor) {
				t.Fatalf("%s: %v", a.Name(), err)
			}
		}
	}
}

func TestByName(t *testing.T) {
	for _, name := range []string{"uniform", "range", "simple"} {
		a, ok := ByName(name)
		if !ok || a.Name() != name {
			t.Fatalf("ByName(%q) = %v, %v", name, a, ok)
		}
	}
	if a, ok := ByName("sticky"); ok {
		t.Fatalf("ByName(sticky) = %v", a.Name())
	}
}

// TestAssignorsDegenerateGroups: an empty group, members subscribing to
// nothing or only to unknown topics, topics with no partitions, racks on
// some partitions only or on none of the members', and no describer at
// all get an assignment (or, without a describer, an error), not a panic.
func TestAssignorsDegenerateGroups(t *testing.T) {
	topics := StaticTopics{
		tid(1): {Partitions: 0},
		tid(2): {Partitions: 3, Racks: [][]string{{"r0", "r0"}, nil}},
		tid(3): {Partitions: 2, Racks: [][]string{{""}, {"r9"}}},
	}
	groups := map[string]map[string]Member{
		"nil":                 nil,
		"empty":               {},
		"no topics":           {"A": {}, "B": {RackID: "r0"}},
		"unknown topics":      {"A": member(ids(tid(7)), asg(tps(tid(7), 0))), "B": member(ids(tid(8)), nil)},
		"no partitions":       {"A": member(ids(tid(1)), asg(tps(tid(1), 0))), "B": member(ids(tid(1)), nil)},
		"some of each":        {"A": {Topics: ids(tid(1), tid(2), tid(7)), RackID: "r0"}, "B": {Topics: ids(tid(3)), RackID: "r1"}, "C": {}},
		"all the same racks":  {"A": {Topics: ids(tid(2), tid(3)), RackID: "r0"}, "B": {Topics: ids(tid(2), tid(3)), RackID: "r0"}},
		"one member, no rack": {"A": {Topics: ids(tid(1), tid(2), tid(3)), Assignment: asg(tps(tid(2), 2, 1, 0))}},
	}
	for _, a := range []Assignor{Uniform(), Range(), Simple()} {
		cov := exactlyOne
		if a.Name() == SimpleName {
			cov = atLeastOne
		}
		for name, members := range groups {
			for _, typ := range []SubscriptionType{Homogeneous, Heterogeneous} {
				spec := GroupSpec{Type: typ, Members: members}
				got := mustAssign(t, a, spec, topics)
				checkValid(t, spec, topics, got, cov)
				for id := range members {
					if len(members[id].Topics) == 0 && len(got[id]) != 0 {
						t.Fatalf("%s %s: member %s subscribes to nothing and got %s", a.Name(), name, id, format(got))
					}
				}
			}
		}
		spec := GroupSpec{Members: map[string]Member{"A": member(ids(tid(2)), nil)}}
		if _, err := a.Assign(spec, nil); !errors.Is(err, ErrPartitionAssignor) {
			t.Fatalf("%s without a describer: %v", a.Name(), err)
		}
	}
}
