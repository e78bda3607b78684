package cluster

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// reassignPlan is kafka-reassign-partitions.sh's JSON, read by --plan and
// written by --balance and as the rollback plan:
//
//	{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}
type reassignPlan struct {
	Version    int             `json:"version"`
	Partitions []planPartition `json:"partitions"`
}

type planPartition struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Replicas  []int32 `json:"replicas"`
	// LogDirs is Kafka's optional replica-to-directory list; only "any"
	// (no preference) is accepted: moving replicas between log.dirs is
	// AlterReplicaLogDirs, not a reassignment.
	LogDirs []string `json:"log_dirs,omitempty"`
}

// readPlan parses and checks a plan: version 1, at least one partition,
// each named once with a non-empty replica list of distinct ids.
func readPlan(r io.Reader) (*reassignPlan, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var p reassignPlan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("the plan is not a reassignment JSON: %v", err)
	}
	if p.Version != 1 {
		return nil, fmt.Errorf("plan version %d is not supported (1 is)", p.Version)
	}
	if len(p.Partitions) == 0 {
		return nil, fmt.Errorf("the plan names no partition")
	}
	seen := map[string]bool{}
	for _, pp := range p.Partitions {
		key := fmt.Sprintf("%s/%d", pp.Topic, pp.Partition)
		switch {
		case pp.Topic == "" || pp.Partition < 0:
			return nil, fmt.Errorf("plan entry %q: a topic and a partition number are required", key)
		case seen[key]:
			return nil, fmt.Errorf("plan entry %s: named twice", key)
		}
		seen[key] = true
		for _, d := range pp.LogDirs {
			if d != "any" {
				return nil, fmt.Errorf("plan entry %s: log_dirs %q: moving replicas between log directories is not a reassignment (only \"any\" is accepted)", key, d)
			}
		}
		if pp.LogDirs != nil && len(pp.LogDirs) != len(pp.Replicas) {
			return nil, fmt.Errorf("plan entry %s: %d log_dirs for %d replicas", key, len(pp.LogDirs), len(pp.Replicas))
		}
	}
	return &p, nil
}

// assignment is one partition's current replicas, the planners' input.
type assignment struct {
	Topic     string
	Partition int32
	Replicas  []int32
}

// balancePlan spreads replicas and preferred leaders (first replicas)
// evenly over brokers, moving as few replicas as it can: a replica on a
// broker not in brokers is always moved; a replica on a broker holding
// more than its share moves to the broker holding fewest (not already a
// replica of the partition) while that narrows the gap; then the preferred
// leader of a partition whose first replica leads more than its share
// swaps with the partition's replica leading fewest. Partitions keep their
// replication factor. The result holds the partitions that change, in
// topic and partition order; the same input gives the same plan.
func balancePlan(parts []assignment, brokers []int32) []assignment {
	return planMoves(parts, brokers, func(b int32) bool { return !slices.Contains(brokers, b) }, true)
}

// decommissionPlan moves every replica off broker id to the other brokers,
// each to the broker holding fewest replicas among those not already a
// replica of the partition, keeping the replica's place in the list (the
// preferred leader's replacement becomes the preferred leader). Other
// partitions are left alone.
func decommissionPlan(parts []assignment, brokers []int32, id int32) []assignment {
	others := slices.DeleteFunc(slices.Clone(brokers), func(b int32) bool { return b == id })
	return planMoves(parts, others, func(b int32) bool { return b == id }, false)
}

// planMoves is both planners: the replicas mustMove names go to the least
// loaded of brokers; with rebalance, replica counts and preferred leaders
// are evened out too.
func planMoves(parts []assignment, brokers []int32, mustMove func(int32) bool, rebalance bool) []assignment {
	if len(brokers) == 0 {
		return nil
	}
	brokers = slices.Sorted(slices.Values(brokers))
	parts = slices.Clone(parts)
	slices.SortFunc(parts, func(a, b assignment) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	target := make([][]int32, len(parts))
	load := map[int32]int{}
	for _, b := range brokers {
		load[b] = 0
	}
	known := func(b int32) bool { _, ok := load[b]; return ok }
	for i, p := range parts {
		target[i] = slices.Clone(p.Replicas)
		for _, r := range p.Replicas {
			if known(r) {
				load[r]++
			}
		}
	}
	// leastLoaded is the broker with the fewest replicas (lowest id on a
	// tie) that is not a replica of the partition, -1 if none.
	leastLoaded := func(replicas []int32) int32 {
		best := int32(-1)
		for _, b := range brokers {
			if !slices.Contains(replicas, b) && (best < 0 || load[b] < load[best]) {
				best = b
			}
		}
		return best
	}
	// Replicas on brokers that must be left.
	for i := range parts {
		for j, r := range target[i] {
			if !mustMove(r) {
				continue
			}
			if c := leastLoaded(target[i]); c >= 0 {
				target[i][j] = c
				load[c]++
				if known(r) {
					load[r]--
				}
			}
		}
	}
	if rebalance {
		// Even out replica counts: move from the fullest broker while a
		// move narrows the gap by two.
		for moved := true; moved; {
			moved = false
			for i := range parts {
				for j, r := range target[i] {
					c := leastLoaded(target[i])
					if c >= 0 && known(r) && load[c]+1 < load[r] {
						target[i][j] = c
						load[r]--
						load[c]++
						moved = true
					}
				}
			}
		}
		// Spread preferred leaders the same way, by reordering only.
		leaders := map[int32]int{}
		for i := range parts {
			if len(target[i]) > 0 {
				leaders[target[i][0]]++
			}
		}
		for moved := true; moved; {
			moved = false
			for i := range parts {
				t := target[i]
				if len(t) < 2 {
					continue
				}
				best := 0
				for j := 1; j < len(t); j++ {
					if leaders[t[j]] < leaders[t[best]] {
						best = j
					}
				}
				if best != 0 && leaders[t[best]]+1 < leaders[t[0]] {
					leaders[t[0]]--
					leaders[t[best]]++
					t[0], t[best] = t[best], t[0]
					moved = true
				}
			}
		}
	}
	var out []assignment
	for i, p := range parts {
		if !slices.Equal(p.Replicas, target[i]) {
			out = append(out, assignment{Topic: p.Topic, Partition: p.Partition, Replicas: target[i]})
		}
	}
	return out
}

// toPlan is the plan of assignments.
func toPlan(as []assignment) *reassignPlan {
	p := &reassignPlan{Version: 1, Partitions: []planPartition{}}
	for _, a := range as {
		p.Partitions = append(p.Partitions, planPartition{Topic: a.Topic, Partition: a.Partition, Replicas: a.Replicas})
	}
	return p
}
