package assignor

import (
	"fmt"
	"testing"
)

// The size of Kafka's ServerSideAssignorBenchmark runs here: 1000 members
// on 10 topics of 1000 partitions each.
const (
	benchMembers    = 1000
	benchTopics     = 10
	benchPartitions = 1000
)

// benchGroup builds the benchmark group. Heterogeneous: the even members
// subscribe to topics 0-5, the odd ones to 4-9. Racks: members and
// partitions spread over three racks, each partition on two.
func benchGroup(heterogeneous, racks bool) (GroupSpec, StaticTopics) {
	topics := StaticTopics{}
	var all []TopicID
	for k := range benchTopics {
		id := tid(k + 1)
		all = append(all, id)
		topic := StaticTopic{Partitions: benchPartitions}
		if racks {
			for p := range benchPartitions {
				topic.Racks = append(topic.Racks, []string{fmt.Sprintf("r%d", p%3), fmt.Sprintf("r%d", (p+1)%3)})
			}
		}
		topics[id] = topic
	}
	spec := GroupSpec{Members: map[string]Member{}}
	if heterogeneous {
		spec.Type = Heterogeneous
	}
	for k := range benchMembers {
		m := Member{Topics: all}
		if heterogeneous {
			m.Topics = all[:6]
			if k%2 == 1 {
				m.Topics = all[4:]
			}
		}
		if racks {
			m.RackID = fmt.Sprintf("r%d", k%3)
		}
		spec.Members[fmt.Sprintf("member-%04d", k)] = m
	}
	return spec, topics
}

// BenchmarkAssign times each assignor on the benchmark group: "first" with
// no current assignment, "join" with every member holding what the first
// assignment gave it and one new member joining (Kafka's benchmark's
// incremental case).
func BenchmarkAssign(b *testing.B) {
	for _, tc := range []struct {
		name                 string
		assignor             Assignor
		heterogeneous, racks bool
	}{
		{"uniform/homogeneous", Uniform(), false, false},
		{"uniform/homogeneous-racks", Uniform(), false, true},
		{"uniform/heterogeneous", Uniform(), true, false},
		{"uniform/heterogeneous-racks", Uniform(), true, true},
		{"range/homogeneous", Range(), false, false},
		{"range/heterogeneous", Range(), true, false},
		{"simple/homogeneous", Simple(), false, false},
		{"simple/heterogeneous", Simple(), true, false},
	} {
		spec, topics := benchGroup(tc.heterogeneous, tc.racks)
		b.Run(tc.name+"/first", func(b *testing.B) {
			for b.Loop() {
				if _, err := tc.assignor.Assign(spec, topics); err != nil {
					b.Fatal(err)
				}
			}
		})
		first, err := tc.assignor.Assign(spec, topics)
		if err != nil {
			b.Fatal(err)
		}
		joined := withCurrent(spec, first)
		newcomer := spec.Members["member-0001"]
		newcomer.Assignment = nil
		joined.Members["member-new"] = newcomer
		b.Run(tc.name+"/join", func(b *testing.B) {
			for b.Loop() {
				if _, err := tc.assignor.Assign(joined, topics); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
