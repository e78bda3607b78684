package cluster

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// apply is parts with the plan's assignments.
func apply(parts, plan []assignment) []assignment {
	out := slices.Clone(parts)
	for _, p := range plan {
		for i := range out {
			if out[i].Topic == p.Topic && out[i].Partition == p.Partition {
				out[i].Replicas = p.Replicas
			}
		}
	}
	return out
}

// counts are the replicas and preferred leaders per broker.
func counts(parts []assignment) (replicas, leaders map[int32]int) {
	replicas, leaders = map[int32]int{}, map[int32]int{}
	for _, p := range parts {
		leaders[p.Replicas[0]]++
		for _, r := range p.Replicas {
			replicas[r]++
		}
	}
	return replicas, leaders
}

func spread(m map[int32]int, brokers []int32) int {
	lo, hi := 1<<30, 0
	for _, b := range brokers {
		lo, hi = min(lo, m[b]), max(hi, m[b])
	}
	return hi - lo
}

func TestBalancePlanSpreadsReplicasAndLeaders(t *testing.T) {
	// Eight partitions of RF 2, all on brokers 1 and 2 and led by 1; 3 and
	// 4 are new.
	var parts []assignment
	for i := range int32(8) {
		parts = append(parts, assignment{Topic: "t", Partition: i, Replicas: []int32{1, 2}})
	}
	brokers := []int32{1, 2, 3, 4}
	plan := balancePlan(parts, brokers)
	after := apply(parts, plan)
	replicas, leaders := counts(after)
	if spread(replicas, brokers) > 1 || spread(leaders, brokers) > 1 {
		t.Fatalf("replicas %v leaders %v after %v", replicas, leaders, plan)
	}
	for _, p := range after {
		if len(p.Replicas) != 2 || p.Replicas[0] == p.Replicas[1] {
			t.Fatalf("partition %d: %v", p.Partition, p.Replicas)
		}
	}
	// Balanced: nothing more to do, and the same input, the same plan.
	if again := balancePlan(after, brokers); len(again) != 0 {
		t.Fatalf("a balanced cluster still moves %v", again)
	}
	if fmt.Sprint(balancePlan(parts, brokers)) != fmt.Sprint(plan) {
		t.Fatal("the plan is not deterministic")
	}
}

func TestBalancePlanMovesOffUnknownBrokers(t *testing.T) {
	parts := []assignment{{Topic: "t", Partition: 0, Replicas: []int32{9, 1}}, {Topic: "t", Partition: 1, Replicas: []int32{1, 2}}}
	after := apply(parts, balancePlan(parts, []int32{1, 2}))
	for _, p := range after {
		if slices.Contains(p.Replicas, 9) {
			t.Fatalf("left on broker 9: %v", after)
		}
	}
}

func TestDecommissionPlanTouchesOnlyTheBroker(t *testing.T) {
	parts := []assignment{
		{Topic: "a", Partition: 0, Replicas: []int32{4, 1, 2}},
		{Topic: "a", Partition: 1, Replicas: []int32{1, 2, 3}},
		{Topic: "b", Partition: 0, Replicas: []int32{2, 4}},
		{Topic: "b", Partition: 1, Replicas: []int32{3, 4}},
	}
	plan := decommissionPlan(parts, []int32{1, 2, 3, 4}, 4)
	if got := fmt.Sprint(plan); got != "[{a 0 [3 1 2]} {b 0 [2 1]} {b 1 [3 1]}]" {
		t.Fatalf("plan %s", got)
	}
	// Nowhere to go: the broker stays, and the caller reports it.
	stuck := decommissionPlan([]assignment{{Topic: "c", Partition: 0, Replicas: []int32{1, 2}}}, []int32{1, 2}, 2)
	if len(stuck) != 0 {
		t.Fatalf("stuck plan %v", stuck)
	}
}

func TestReadPlan(t *testing.T) {
	p, err := readPlan(strings.NewReader(`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,3],"log_dirs":["any","any"]}]}`))
	if err != nil || len(p.Partitions) != 1 || fmt.Sprint(p.Partitions[0].Replicas) != "[2 3]" {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []string{
		`{"version":2,"partitions":[{"topic":"t","partition":0,"replicas":[1]}]}`,
		`{"version":1,"partitions":[]}`,
		`{"version":1,"partitions":[{"partition":0,"replicas":[1]}]}`,
		`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[2]}]}`,
		`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1],"log_dirs":["/data"]}]}`,
		`{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1],"extra":1}]}`,
		`not json`,
	} {
		if _, err := readPlan(strings.NewReader(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestThrottlesFor(t *testing.T) {
	current := []assignment{{Topic: "a", Partition: 0, Replicas: []int32{1, 2}}, {Topic: "a", Partition: 1, Replicas: []int32{2, 3}},
		{Topic: "b", Partition: 0, Replicas: []int32{4}}}
	moves := []assignment{{Topic: "a", Partition: 0, Replicas: []int32{2, 3}}, {Topic: "a", Partition: 1, Replicas: []int32{2, 4}},
		{Topic: "b", Partition: 0, Replicas: []int32{4}}}
	th := throttlesFor(current, moves)
	// Leader throttles on every current replica of a moving partition,
	// follower throttles on the added ones, rates on every broker involved.
	if got := fmt.Sprint(th.Brokers, th.Leader, th.Follower); got != "[1 2 3 4] map[a:0:1,0:2,1:2,1:3 b:0:4] map[a:0:3,1:4]" {
		t.Fatalf("%s", got)
	}
}
