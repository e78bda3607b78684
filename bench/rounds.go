package bench

import "sort"

// Rounds (--rounds N): a produce, consume or e2e workload runs N times on
// each broker, the brokers alternating round by round, and each row of the
// report is its median round. On a shared two-core machine the same code's
// figures moved from one run to the next by more than the changes being
// measured (issue 29: cpu ratios by about ±0.1, throughput ratios from
// 1.18x to 1.55x on one row), and a target's verdict flipped with them;
// the cluster workload's ratio is a median of rounds for the same reason.
// Alternating puts each broker's rounds across the same drift.

// RoundFigure is what one round of a row measured.
type RoundFigure struct {
	MiBPerSec    float64 `json:"mib_per_sec"`
	CPUSecPerGiB float64 `json:"cpu_sec_per_gib,omitempty"` // 0: the broker's process was not measured
}

// medianRounds merges the rounds' results, row by row (a row is a broker's
// workload, the n-th of that name in its round), into the round of median
// MiB/s (the lower of the two middle ones for an even count) carrying the
// median CPU per GiB of all the rounds that measured it, and every round's
// figures in Rounds. Rows keep the first round's order; a row missing from
// a round (it failed there) is the median of the rounds that have it.
func medianRounds(rounds [][]Result) []Result {
	type key struct {
		broker, workload string
		nth              int
	}
	byKey := map[key][]Result{}
	var order []key
	for _, results := range rounds {
		seen := map[key]int{}
		for _, r := range results {
			k := key{broker: r.Broker, workload: r.Workload}
			k.nth = seen[k]
			seen[k]++
			if _, ok := byKey[k]; !ok {
				order = append(order, k)
			}
			byKey[k] = append(byKey[k], r)
		}
	}
	out := make([]Result, 0, len(order))
	for _, k := range order {
		out = append(out, medianRow(byKey[k]))
	}
	return out
}

// medianRow is one row's median round; see medianRounds.
func medianRow(rows []Result) Result {
	if len(rows) == 1 {
		return rows[0]
	}
	idx := make([]int, len(rows))
	figures := make([]RoundFigure, len(rows))
	var cpus []float64
	for i, r := range rows {
		idx[i] = i
		figures[i].MiBPerSec = r.MiBPerSec
		if r.Cost != nil {
			figures[i].CPUSecPerGiB = r.Cost.CPUSecPerGiB
			cpus = append(cpus, r.Cost.CPUSecPerGiB)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return rows[idx[a]].MiBPerSec < rows[idx[b]].MiBPerSec })
	med := rows[idx[(len(idx)-1)/2]]
	if med.Cost != nil && len(cpus) > 0 {
		sort.Float64s(cpus)
		cost := *med.Cost
		cost.CPUSecPerGiB = cpus[(len(cpus)-1)/2]
		med.Cost = &cost
	}
	med.Rounds = figures
	return med
}
