package bench

import (
	"fmt"
	"io"
	"strings"
)

// Issue 29's throughput targets for the produce rows, measured against
// kfake and the machine in the same run. The cluster's and the scale
// rows' targets are their own sections' (ClusterRatioTarget, ...).
const (
	// P1VsPeerTarget: produce at 1 partition, acks=1 and acks=all, at
	// least this many times kfake's throughput.
	P1VsPeerTarget = 1.5
	// P8VsPeerTarget: the same at 8 partitions.
	P8VsPeerTarget = 2.0
	// P8VsLimitTarget: produce at 8 partitions, at least this share of
	// the machine's append limit.
	P8VsLimitTarget = 0.40
	// CPUVsPeerTarget: on every produce row, the broker's CPU per GiB at
	// most this share of kfake's.
	CPUVsPeerTarget = 0.5
)

// target is one line of the targets table: what was asked, the figure
// measured, and whether it is met; a missing row leaves figure "-" and
// the verdict "not measured".
type target struct {
	name, figure, verdict string
}

// writeTargetsMarkdown lists each of issue 29's targets the reports can
// judge, with its figure and verdict, so a reader sees at once which hold.
func (res *Results) writeTargetsMarkdown(w io.Writer) {
	var ts []target
	byName := map[string]*Row{}
	for i := range res.Rows {
		byName[res.Rows[i].Workload] = &res.Rows[i]
	}
	for _, c := range []struct {
		workload string
		vsPeer   float64
	}{
		{"produce acks=1 p=1", P1VsPeerTarget},
		{"produce acks=all p=1", P1VsPeerTarget},
		{"produce acks=1 p=8", P8VsPeerTarget},
		{"produce acks=all p=8", P8VsPeerTarget},
	} {
		t := target{name: fmt.Sprintf("%s: throughput >= %.1fx kfake", c.workload, c.vsPeer), figure: "-", verdict: "not measured"}
		if r := byName[c.workload]; r != nil && r.VsPeer > 0 {
			t.figure = fmt.Sprintf("%.2fx (%.1f vs %.1f MiB/s)", r.VsPeer, r.MiBPerSec, r.Peer.MiBPerSec)
			t.verdict = verdict(r.VsPeer >= c.vsPeer)
		}
		ts = append(ts, t)
	}
	for _, name := range []string{"produce acks=1 p=8", "produce acks=all p=8"} {
		t := target{name: fmt.Sprintf("%s: >= %.0f%% of the append limit", name, 100*P8VsLimitTarget), figure: "-", verdict: "not measured"}
		if r := byName[name]; r != nil && r.VsLimit > 0 {
			t.figure = fmt.Sprintf("%.0f%% (%.1f of %.1f MiB/s)", 100*r.VsLimit, r.MiBPerSec, r.LimitMiBPerSec)
			t.verdict = verdict(r.VsLimit >= P8VsLimitTarget)
		}
		ts = append(ts, t)
	}
	for i := range res.Rows {
		r := &res.Rows[i]
		if !isProduceRow(r) || r.Cost == nil || r.Peer == nil {
			continue
		}
		pc, _ := r.Peer.combinedCost()
		if pc == nil || pc.CPUSecPerGiB == 0 {
			continue
		}
		ratio := r.Cost.CPUSecPerGiB / pc.CPUSecPerGiB
		ts = append(ts, target{
			name:    fmt.Sprintf("%s: cpu s/GiB <= %.1fx kfake's", r.Workload, CPUVsPeerTarget),
			figure:  fmt.Sprintf("%.2fx (%.2f vs %.2f)", ratio, r.Cost.CPUSecPerGiB, pc.CPUSecPerGiB),
			verdict: verdict(ratio <= CPUVsPeerTarget),
		})
	}
	if s := res.Cluster; s != nil {
		ts = append(ts,
			target{fmt.Sprintf("%d nodes RF=%d acks=all min.insync=%d: >= %.2fx single-node acks=1", s.Nodes, s.Nodes, s.MinInsyncReplicas, s.RatioTarget),
				fmt.Sprintf("%.2fx%s", s.Ratio, s.roundsText()), verdict(s.RatioMet)},
			target{fmt.Sprintf("the cluster at %.0f%% of its rate: p99 < %s", 100*s.LatencyFraction, fmtDur(s.P99Target)),
				"p99 " + fmtDur(s.P99), verdict(s.P99Met)})
	}
	if len(ts) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Targets\n\n")
	fmt.Fprintf(w, "Issue 29's targets the reports above can judge (the scale rows' are in their own section).\n\n")
	fmt.Fprintf(w, "| target | measured | verdict |\n|---|---|---|\n")
	for _, t := range ts {
		fmt.Fprintf(w, "| %s | %s | %s |\n", t.name, t.figure, t.verdict)
	}
}

// isProduceRow reports whether a row is a produce workload against one
// broker beside kfake (produce, prefill, transactional produce, over TLS
// or not), the rows the CPU target covers.
func isProduceRow(r *Row) bool {
	return strings.HasPrefix(r.Workload, "produce") || strings.HasPrefix(r.Workload, "prefill")
}
