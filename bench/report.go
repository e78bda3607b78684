package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/strait-io/strait/bench/limits"
)

// Report is everything one `strait bench` command measured; --json prints
// it as is.
type Report struct {
	Command string         `json:"command"`
	Config  map[string]any `json:"config"`
	Limits  *limits.Result `json:"limits,omitempty"`
	Results []Result       `json:"results"`
	Ratios  []Ratio        `json:"ratios,omitempty"`
	// Cluster is the verdict of `strait bench cluster`.
	Cluster *ClusterSummary `json:"cluster,omitempty"`
	// Reassign is the figures of `strait bench reassign`.
	Reassign *ReassignSummary `json:"reassign,omitempty"`
	// Scale is the figures of `strait bench scale`.
	Scale  *ScaleSummary `json:"scale,omitempty"`
	Errors []string      `json:"errors,omitempty"`
}

// Ratio compares one workload between two brokers: Of / To. A field is 0
// when either side lacks the figure. Above 1 is better for Throughput,
// below 1 is better for the others.
type Ratio struct {
	Workload   string  `json:"workload"`
	Of         string  `json:"of"`
	To         string  `json:"to"`
	Throughput float64 `json:"throughput"`
	P99        float64 `json:"p99,omitempty"`
	CPUPerGiB  float64 `json:"cpu_per_gib,omitempty"`
	MaxRSS     float64 `json:"max_rss,omitempty"`
}

// Ratios pairs each workload of broker of with the same workload of broker
// to, in the order of the results.
func Ratios(results []Result, of, to string) []Ratio {
	var out []Ratio
	for _, a := range results {
		if a.Broker != of {
			continue
		}
		for _, b := range results {
			if b.Broker != to || b.Workload != a.Workload {
				continue
			}
			r := Ratio{Workload: a.Workload, Of: of, To: to, Throughput: div(a.MiBPerSec, b.MiBPerSec)}
			if a.Latency != nil && b.Latency != nil {
				r.P99 = div(float64(a.Latency.P99), float64(b.Latency.P99))
			}
			if a.Cost != nil && b.Cost != nil {
				r.CPUPerGiB = div(a.Cost.CPUSecPerGiB, b.Cost.CPUSecPerGiB)
				r.MaxRSS = div(float64(a.Cost.MaxRSSBytes), float64(b.Cost.MaxRSSBytes))
			}
			out = append(out, r)
		}
	}
	return out
}

func div(a, b float64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return a / b
}

// WriteJSON prints the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteLimits prints the machine's ceilings on one line.
func WriteLimits(w io.Writer, l *limits.Result) {
	if l == nil {
		return
	}
	fmt.Fprintf(w, "machine limits (%s on %s, %v per probe, %s writes):\n", l.Dir, l.FS, l.Time, formatSize(int64(l.WriteBytes)))
	for _, p := range l.Probes {
		if p.Err != "" {
			fmt.Fprintf(w, "  %-18s error: %s\n", p.Name, p.Err)
			continue
		}
		extra := ""
		if p.Syncs > 0 {
			extra = fmt.Sprintf("  (%.0f fsync/s)", float64(p.Syncs)/p.Elapsed.Seconds())
		}
		fmt.Fprintf(w, "  %-18s %9.1f MiB/s%s\n", p.Name, p.MiBPerSec, extra)
	}
	if l.SyscallNanos > 0 {
		fmt.Fprintf(w, "  %-18s %9.0f ns\n", "system call", l.SyscallNanos)
	}
	if l.PageReporting != "" {
		fmt.Fprintf(w, "  free page reporting: %s\n", l.PageReporting)
	}
}

// WriteText prints the results as a table, then the ratios.
func (r *Report) WriteText(w io.Writer) {
	WriteLimits(w, r.Limits)
	if r.Limits != nil {
		fmt.Fprintln(w)
	}
	rows := [][]string{{"workload", "broker", "records", "MiB/s", "rec/s", "p50", "p99", "p99.9", "max", "cpu s/GiB", "rss MiB", "max rss", "errors"}}
	for _, res := range r.Results {
		lat := [4]string{"-", "-", "-", "-"}
		if l := res.Latency; l != nil && l.Count > 0 {
			lat = [4]string{fmtDur(l.P50), fmtDur(l.P99), fmtDur(l.P999), fmtDur(l.Max)}
		}
		cost := [3]string{"-", "-", "-"}
		if c := res.Cost; c != nil {
			cost = [3]string{fmt.Sprintf("%.2f", c.CPUSecPerGiB), fmt.Sprintf("%.0f", float64(c.RSSBytes)/mib), fmt.Sprintf("%.0f", float64(c.MaxRSSBytes)/mib)}
		}
		recs := fmt.Sprint(res.Records)
		if res.Produced != 0 || res.Workload == "tail" || res.Workload == "e2e" {
			// Read/acknowledged: the two must match.
			recs = fmt.Sprintf("%d/%d", res.Records, res.Produced)
		}
		rows = append(rows, []string{res.Workload, res.Broker, recs,
			fmt.Sprintf("%.1f", res.MiBPerSec), fmt.Sprintf("%.0f", res.RecordsPerSec),
			lat[0], lat[1], lat[2], lat[3], cost[0], cost[1], cost[2], fmt.Sprint(res.Errors)})
	}
	writeTable(w, rows, 2)
	for _, q := range r.Ratios {
		parts := []string{fmt.Sprintf("throughput %.2fx", q.Throughput)}
		if q.P99 != 0 {
			parts = append(parts, fmt.Sprintf("p99 %.2fx", q.P99))
		}
		if q.CPUPerGiB != 0 {
			parts = append(parts, fmt.Sprintf("cpu/GiB %.2fx", q.CPUPerGiB))
		}
		if q.MaxRSS != 0 {
			parts = append(parts, fmt.Sprintf("max rss %.2fx", q.MaxRSS))
		}
		fmt.Fprintf(w, "ratio %s/%s %s: %s\n", q.Of, q.To, q.Workload, strings.Join(parts, ", "))
	}
	writeTransactions(w, r.Results)
	writeNodeCosts(w, r.Results)
	writeClusterSummary(w, r.Cluster)
	writeReassignSummary(w, r.Reassign)
	writeProfiles(w, r.Results)
	writeScaleSummary(w, r.Scale)
	for _, res := range r.Results {
		if res.FirstError != "" {
			fmt.Fprintf(w, "%s %s: first error: %s\n", res.Workload, res.Broker, res.FirstError)
		}
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "error: %s\n", e)
	}
}

// writeTable prints rows in columns, the first left columns left-aligned
// and the rest (numbers) right-aligned.
func writeTable(w io.Writer, rows [][]string, left int) {
	var width []int
	for _, row := range rows {
		for i, c := range row {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < left {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// fmtDur prints a latency with 3 significant digits.
func fmtDur(d time.Duration) string {
	v, unit := float64(d), "ns"
	switch {
	case d >= time.Second:
		v, unit = d.Seconds(), "s"
	case d >= time.Millisecond:
		v, unit = v/float64(time.Millisecond), "ms"
	case d >= time.Microsecond:
		v, unit = v/float64(time.Microsecond), "µs"
	default:
		return fmt.Sprintf("%dns", int64(d))
	}
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f%s", v, unit)
	case v >= 10:
		return fmt.Sprintf("%.1f%s", v, unit)
	}
	return fmt.Sprintf("%.2f%s", v, unit)
}

// writeTransactions prints the transactions of each transactional
// result, one line each.
func writeTransactions(w io.Writer, results []Result) {
	for _, res := range results {
		if res.Transactions == 0 {
			continue
		}
		line := fmt.Sprintf("%s %s: %d transactions committed, %.1f txn/s", res.Workload, res.Broker, res.Transactions, res.TransactionsPerSec)
		if l := res.TxnLatency; l != nil && l.Count > 0 {
			line += fmt.Sprintf(", begin to commit p50 %s p99 %s max %s", fmtDur(l.P50), fmtDur(l.P99), fmtDur(l.Max))
		}
		fmt.Fprintln(w, line)
	}
}

// writeProfiles names the profile files of each result (--profile).
func writeProfiles(w io.Writer, results []Result) {
	for _, res := range results {
		if p := res.Profiles; p != nil {
			fmt.Fprintf(w, "%s %s profiles: %s %s %s\n", res.Workload, res.Broker, p.CPU, p.Allocs, p.Heap)
		}
	}
}

// writeNodeCosts prints the cost of each node of a cluster, one line each.
func writeNodeCosts(w io.Writer, results []Result) {
	for _, res := range results {
		for i, c := range res.NodeCosts {
			fmt.Fprintf(w, "%s %s node %d (pid %d): cpu %.1fs (%.2f s/GiB), rss %.0f MiB, max rss %.0f MiB\n",
				res.Workload, res.Broker, i+1, c.PID, c.CPUSeconds, c.CPUSecPerGiB, float64(c.RSSBytes)/mib, float64(c.MaxRSSBytes)/mib)
		}
	}
}

// writeClusterSummary prints the cluster figures against their targets.
func writeClusterSummary(w io.Writer, s *ClusterSummary) {
	if s == nil {
		return
	}
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	fmt.Fprintf(w, "single node acks=1: %.1f MiB/s; %d nodes RF=%d acks=all min.insync.replicas=%d: %.1f MiB/s\n",
		s.SingleMiBPerSec, s.Nodes, s.Nodes, s.MinInsyncReplicas, s.ClusterMiBPerSec)
	if s.SingleCPUSecPerGiB > 0 && s.ClusterCPUSecPerGiB > 0 {
		fmt.Fprintf(w, "broker CPU per GiB acknowledged: single node %.2f s, cluster %.2f s (all nodes, %.1fx)\n",
			s.SingleCPUSecPerGiB, s.ClusterCPUSecPerGiB, s.ClusterCPUSecPerGiB/s.SingleCPUSecPerGiB)
	}
	fmt.Fprintf(w, "ratio %.2f%s (target >= %.2f: %s)\n", s.Ratio, s.roundsText(), s.RatioTarget, verdict(s.RatioMet))
	fmt.Fprintf(w, "at %.0f%% of that rate (%.0f rec/s): p50 %s, p99 %s (target < %s: %s)\n",
		100*s.LatencyFraction, s.LatencyRate, fmtDur(s.P50), fmtDur(s.P99), fmtDur(s.P99Target), verdict(s.P99Met))
}
