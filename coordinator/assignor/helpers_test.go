package assignor

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// tid is a test topic id; tid(1) < tid(2) < ... as topic ids order.
func tid(n int) TopicID {
	var id TopicID
	id[0], id[1] = byte(n>>8), byte(n)
	return id
}

// tp is one topic's partitions of an expected assignment.
type tp struct {
	topic TopicID
	parts []int32
}

func tps(topic TopicID, parts ...int32) tp { return tp{topic, parts} }

// asg builds a member's Partitions.
func asg(entries ...tp) Partitions {
	out := Partitions{}
	for _, e := range entries {
		out[e.topic] = slices.Clone(e.parts)
	}
	return out
}

// topicsOf builds a StaticTopics of partition counts by topic.
func topicsOf(counts map[TopicID]int) StaticTopics {
	s := StaticTopics{}
	for t, n := range counts {
		s[t] = StaticTopic{Partitions: n}
	}
	return s
}

func member(topics []TopicID, current Partitions) Member {
	return Member{Topics: topics, Assignment: current}
}

func ids(ts ...TopicID) []TopicID { return ts }

// format prints an assignment in member and topic order, for messages.
func format(a map[string]Partitions) string {
	var b strings.Builder
	for _, id := range slices.Sorted(maps.Keys(a)) {
		fmt.Fprintf(&b, "%s:", id)
		topics := slices.SortedFunc(maps.Keys(a[id]), func(x, y TopicID) int { return slices.Compare(x[:], y[:]) })
		for _, t := range topics {
			fmt.Fprintf(&b, " %d%v", int(t[0])<<8|int(t[1]), a[id][t])
		}
		b.WriteString("; ")
	}
	return b.String()
}

// equalAssignments compares two assignments, an absent topic and an empty
// partition list being the same.
func equalAssignments(a, b map[string]Partitions) bool {
	if len(a) != len(b) {
		return false
	}
	for id, pa := range a {
		pb, ok := b[id]
		if !ok {
			return false
		}
		for t, ps := range pa {
			if !slices.Equal(ps, pb[t]) {
				return false
			}
		}
		for t, ps := range pb {
			if !slices.Equal(ps, pa[t]) {
				return false
			}
		}
	}
	return true
}

func expectAssignment(t *testing.T, got, want map[string]Partitions) {
	t.Helper()
	if !equalAssignments(got, want) {
		t.Fatalf("assignment\n got: %s\nwant: %s", format(got), format(want))
	}
}

func mustAssign(t testing.TB, a Assignor, spec GroupSpec, d TopicDescriber) map[string]Partitions {
	t.Helper()
	out, err := a.Assign(spec, d)
	if err != nil {
		t.Fatalf("%s: %v", a.Name(), err)
	}
	return out
}

// coverage says how many members a partition may go to.
type coverage int

const (
	exactlyOne coverage = iota // consumer groups
	atLeastOne                 // share groups
)

// checkValid checks what every assignor promises: every member of the
// group is in the result, members get only existing partitions of topics
// they subscribe to, listed ascending without duplicates, and every
// partition of a subscribed topic goes to exactly one (or at least one)
// member. It returns each member's partition count.
func checkValid(t *testing.T, spec GroupSpec, d TopicDescriber, got map[string]Partitions, cov coverage) map[string]int {
	t.Helper()
	if len(got) != len(spec.Members) {
		t.Fatalf("%d members in the result, %d in the group", len(got), len(spec.Members))
	}
	type key struct {
		topic TopicID
		p     int32
	}
	owners := map[key]int{}
	counts := map[string]int{}
	subscribed := map[TopicID]bool{}
	for id, m := range spec.Members {
		parts, ok := got[id]
		if !ok {
			t.Fatalf("member %s missing from the result", id)
		}
		for _, topic := range m.Topics {
			if d.NumPartitions(topic) >= 0 {
				subscribed[topic] = true
			}
		}
		for topic, ps := range parts {
			if !slices.Contains(m.Topics, topic) {
				t.Fatalf("member %s got topic %x it does not subscribe to", id, topic)
			}
			n := d.NumPartitions(topic)
			for k, p := range ps {
				if p < 0 || int(p) >= n {
					t.Fatalf("member %s got partition %d of topic %x, which has %d", id, p, topic, n)
				}
				if k > 0 && ps[k-1] >= p {
					t.Fatalf("member %s: partitions of %x not ascending: %v", id, topic, ps)
				}
				owners[key{topic, p}]++
			}
			counts[id] += len(ps)
		}
	}
	for topic := range subscribed {
		for p := range int32(d.NumPartitions(topic)) {
			n := owners[key{topic, p}]
			if n == 0 || (cov == exactlyOne && n != 1) {
				t.Fatalf("partition %d of topic %x assigned to %d members", p, topic, n)
			}
		}
	}
	return counts
}

// spread is the largest minus the smallest count.
func spread(counts map[string]int, members []string) int {
	if len(members) == 0 {
		return 0
	}
	lo, hi := counts[members[0]], counts[members[0]]
	for _, id := range members {
		lo, hi = min(lo, counts[id]), max(hi, counts[id])
	}
	return hi - lo
}

// owned returns each member's partitions as a set.
func owned(a map[string]Partitions) map[string]map[[2]int]bool {
	out := map[string]map[[2]int]bool{}
	for id, parts := range a {
		set := map[[2]int]bool{}
		for t, ps := range parts {
			for _, p := range ps {
				set[[2]int{int(t[0])<<8 | int(t[1]), int(p)}] = true
			}
		}
		out[id] = set
	}
	return out
}

// scenario is a random group for the property tests.
type scenario struct {
	spec   GroupSpec
	topics StaticTopics
}

// scenarioOptions shape randomScenario's groups.
type scenarioOptions struct {
	homogeneous bool
	racks       bool // give members and partitions racks
	static      bool // give some members instance ids
}

// randomScenario makes a group of 0 to 50 members on 1 to 10 topics of 1 to
// 64 partitions each, with random subscriptions (the same for all members
// when homogeneous) and no current assignments.
func randomScenario(rng *rand.Rand, o scenarioOptions) scenario {
	s := scenario{topics: StaticTopics{}}
	nTopics := 1 + rng.IntN(10)
	var all []TopicID
	rackNames := []string{"r0", "r1", "r2", "r3"}
	for k := range nTopics {
		id := tid(k + 1)
		all = append(all, id)
		topic := StaticTopic{Partitions: 1 + rng.IntN(64)}
		if o.racks {
			for range topic.Partitions {
				r := rng.Perm(len(rackNames))[:1+rng.IntN(2)]
				var rs []string
				for _, x := range r {
					rs = append(rs, rackNames[x])
				}
				topic.Racks = append(topic.Racks, rs)
			}
		}
		s.topics[id] = topic
	}
	nMembers := rng.IntN(51)
	s.spec = GroupSpec{Members: map[string]Member{}, Type: Heterogeneous}
	if o.homogeneous {
		s.spec.Type = Homogeneous
	}
	shared := randomSubset(rng, all)
	for k := range nMembers {
		m := Member{Topics: shared}
		if !o.homogeneous {
			m.Topics = randomSubset(rng, all)
		}
		m.Topics = slices.Clone(m.Topics)
		if o.racks && rng.IntN(4) > 0 {
			m.RackID = rackNames[rng.IntN(len(rackNames))]
		}
		if o.static && rng.IntN(2) == 0 {
			m.InstanceID = fmt.Sprintf("instance-%03d", rng.IntN(1000))
		}
		s.spec.Members[fmt.Sprintf("member-%02d", k)] = m
	}
	return s
}

// randomSubset returns a non-empty random subset of all, in random order.
func randomSubset(rng *rand.Rand, all []TopicID) []TopicID {
	var out []TopicID
	for _, t := range all {
		if rng.IntN(2) == 0 {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		out = append(out, all[rng.IntN(len(all))])
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// withCurrent returns a copy of spec in which every member's current
// assignment is prev's (deep-copied), so nothing the assignor does to it
// can show through.
func withCurrent(spec GroupSpec, prev map[string]Partitions) GroupSpec {
	out := GroupSpec{Members: map[string]Member{}, Type: spec.Type}
	for id, m := range spec.Members {
		m.Assignment = nil
		if p, ok := prev[id]; ok {
			m.Assignment = Partitions{}
			for t, ps := range p {
				m.Assignment[t] = slices.Clone(ps)
			}
		}
		out.Members[id] = m
	}
	return out
}

// previousRound makes current assignments for s the way a group gets them:
// it runs a on a variant of s (some members gone, some new, fewer
// partitions, other subscriptions) and hands every member of s that was in
// the variant what it got there.
func previousRound(t *testing.T, rng *rand.Rand, a Assignor, s scenario, o scenarioOptions) GroupSpec {
	t.Helper()
	prevTopics := StaticTopics{}
	for _, id := range sortedTopics(s.topics) {
		topic := s.topics[id]
		if rng.IntN(3) == 0 { // the topic had fewer partitions
			topic.Partitions = 1 + rng.IntN(topic.Partitions)
			topic.Racks = topic.Racks[:min(len(topic.Racks), topic.Partitions)]
		}
		prevTopics[id] = topic
	}
	prev := GroupSpec{Members: map[string]Member{}, Type: s.spec.Type}
	all := sortedTopics(s.topics)
	var shared []TopicID
	for _, id := range slices.Sorted(maps.Keys(s.spec.Members)) {
		m := s.spec.Members[id]
		if rng.IntN(5) == 0 {
			continue // a member that joined since
		}
		if !o.homogeneous && rng.IntN(4) == 0 {
			m.Topics = randomSubset(rng, all) // a subscription that changed since
		}
		if o.homogeneous {
			if shared == nil {
				shared = m.Topics
				if rng.IntN(4) == 0 {
					shared = randomSubset(rng, all)
				}
			}
			m.Topics = shared
		}
		prev.Members[id] = m
	}
	for k := range rng.IntN(4) { // members that left since
		m := Member{Topics: randomSubset(rng, all)}
		if o.homogeneous && shared != nil {
			m.Topics = shared
		}
		prev.Members[fmt.Sprintf("gone-%d", k)] = m
	}
	if o.homogeneous && shared == nil { // only the gone members: give them one subscription
		for id, m := range prev.Members {
			m.Topics = prev.Members["gone-0"].Topics
			prev.Members[id] = m
		}
	}
	got := mustAssign(t, a, prev, prevTopics)
	return withCurrent(s.spec, got)
}

// sortedTopics returns the topics of s in id order, for walking them
// while drawing random numbers.
func sortedTopics(s StaticTopics) []TopicID {
	return slices.SortedFunc(maps.Keys(s), func(x, y TopicID) int { return slices.Compare(x[:], y[:]) })
}

// seeds is how many random groups each property test tries.
const seeds = 300

// forSeeds runs f on seeds seeded generators, naming the seed on failure.
func forSeeds(t *testing.T, f func(t *testing.T, rng *rand.Rand)) {
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		ok := t.Run(fmt.Sprint(seed), func(t *testing.T) { f(t, rng) })
		if !ok {
			return // one failing seed says enough
		}
	}
}
