package bench

import (
	"fmt"
	"io"
)

// writeReassignSummary prints the reassignment workload's figures.
func writeReassignSummary(w io.Writer, s *ReassignSummary) {
	if s == nil {
		return
	}
	for _, line := range s.lines() {
		fmt.Fprintln(w, line)
	}
}

// writeReassignMarkdown is the reassignment section of RESULTS.md: the
// three produce phases side by side. kfake cannot reassign partitions (it
// serves neither AlterPartitionReassignments nor replication), so its
// column is n/a.
func (res *Results) writeReassignMarkdown(w io.Writer) {
	s := res.Reassign
	if s == nil {
		return
	}
	fmt.Fprintf(w, "\n## Reassignment\n\n")
	fmt.Fprintf(w, "Produce (acks=all) to a topic with RF=3 on nodes 1-3 of a %d-node cluster; meanwhile a reassignment moves\n", s.Nodes)
	fmt.Fprintf(w, "one replica of each of the %d partitions of %s (RF=2 on nodes 1-3, %.1f MiB of values) to node %d, unthrottled,\n",
		s.MovePartitions, s.MoveTopic, float64(s.MoveBytes)/mib, s.Nodes)
	fmt.Fprintf(w, "then back with `--throttle` %.1f MiB/s (KIP-73). kfake cannot reassign partitions: n/a.\n\n", float64(s.Throttle)/mib)
	fmt.Fprintf(w, "| phase | produce MiB/s | of steady | move took | move MiB/s | kfake |\n")
	fmt.Fprintf(w, "|---|--:|--:|--:|--:|---|\n")
	fmt.Fprintf(w, "| steady state | %.1f | 1.00 | - | - | n/a |\n", s.SteadyMiBPerSec)
	for _, r := range []struct {
		name  string
		mibps float64
		took  float64
	}{
		{"during the move", s.MovingMiBPerSec, s.MoveTook.Seconds()},
		{"during the throttled move", s.ThrottledMiBPerSec, s.ThrottledMoveTook.Seconds()},
	} {
		fmt.Fprintf(w, "| %s | %.1f | %.2f | %.1fs | %.1f | n/a |\n", r.name, r.mibps, div(r.mibps, s.SteadyMiBPerSec),
			r.took, div(float64(s.MoveBytes)/mib, r.took))
	}
}

// lines are the summary's text lines.
func (s *ReassignSummary) lines() []string {
	moved := float64(s.MoveBytes) / mib
	return []string{
		fmt.Sprintf("produce steady %.1f MiB/s; during the move of %.1f MiB to node %d %.1f MiB/s (%.2f of steady, the move took %s)",
			s.SteadyMiBPerSec, moved, s.Nodes, s.MovingMiBPerSec, div(s.MovingMiBPerSec, s.SteadyMiBPerSec), fmtDur(s.MoveTook)),
		fmt.Sprintf("during the move back throttled at %.1f MiB/s %.1f MiB/s (%.2f of steady, the move took %s)",
			float64(s.Throttle)/mib, s.ThrottledMiBPerSec, div(s.ThrottledMiBPerSec, s.SteadyMiBPerSec), fmtDur(s.ThrottledMoveTook)),
	}
}
