package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// WriteFiles writes the Markdown to out and, when chart is not empty, the
// PNG chart to chart, linked from the Markdown.
func (res *Results) WriteFiles(out, chart string) error {
	link := ""
	if chart != "" {
		var png bytes.Buffer
		if err := res.WriteChart(&png); err != nil {
			return err
		}
		if err := os.WriteFile(chart, png.Bytes(), 0o644); err != nil {
			return fmt.Errorf("bench report: %w", err)
		}
		link = chart
		if rel, err := filepath.Rel(filepath.Dir(out), chart); err == nil {
			link = rel
		}
	}
	var md bytes.Buffer
	res.WriteMarkdown(&md, link)
	if err := os.WriteFile(out, md.Bytes(), 0o644); err != nil {
		return fmt.Errorf("bench report: %w", err)
	}
	return nil
}

// WriteMarkdown writes RESULTS.md; chart is the chart's path relative to
// it, "" for none.
func (res *Results) WriteMarkdown(w io.Writer, chart string) {
	fmt.Fprintf(w, "# Benchmark results\n\n")
	fmt.Fprintf(w, "Written by `strait bench report` (`make bench`) at commit `%s` on %s.\n",
		res.Commit, res.Date.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "Throughput is MiB/s (2^20 bytes) of record values; p99 is produce latency (send to acknowledgement),\n")
	fmt.Fprintf(w, "or produce to consume for e2e. Ratios read against kfake and the machine, measured in the same run.\n")
	if l := res.Limits; l != nil {
		fmt.Fprintf(w, "\n## Machine limits\n\n%s on %s, %v per probe, %s writes:\n\n", l.Dir, l.FS, l.Time, formatSize(int64(l.WriteBytes)))
		for _, p := range l.Probes {
			if p.Err != "" {
				fmt.Fprintf(w, "- %s: error: %s\n", p.Name, p.Err)
				continue
			}
			fmt.Fprintf(w, "- %s: %.1f MiB/s\n", p.Name, p.MiBPerSec)
		}
		if l.SyscallNanos > 0 {
			fmt.Fprintf(w, "- system call (getppid): %.0f ns\n", l.SyscallNanos)
		}
		if l.PageReporting != "" {
			fmt.Fprintf(w, "- free page reporting: %s\n", l.PageReporting)
			fmt.Fprintf(w, "\nThis machine hands the memory it frees back to its hypervisor, which backs it again when it is next\n")
			fmt.Fprintf(w, "written: memory-first-touch against memory-rewrite is what that costs. A broker's new log data lands in\n")
			fmt.Fprintf(w, "such pages, as does a growing heap, and a row pays for it by what was freed when, so rounds of one row\n")
			fmt.Fprintf(w, "can differ here by more than any change of code.\n")
		}
	}
	fmt.Fprintf(w, "\n## Workloads\n\n")
	fmt.Fprintf(w, "| workload | broker | MiB/s | p99 | cpu s/GiB | max rss MiB | kfake MiB/s | kfake p99 | kfake cpu s/GiB | kfake max rss MiB | limit | limit MiB/s | ours/kfake | ours/limit |\n")
	fmt.Fprintf(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|\n")
	for _, r := range res.Rows {
		fmt.Fprintln(w, r.markdown())
	}
	fmt.Fprintf(w, "\ncpu s/GiB is the broker's CPU seconds per GiB of record values the workload moved, max rss MiB the largest\n")
	fmt.Fprintf(w, "resident set sampled during it, both read from /proc/<pid> (\"-\": the broker's process was not measured,\n")
	fmt.Fprintf(w, "as for kfake run inside the bench process). A cell marked \"(N nodes)\" is a cluster's: CPU summed over its\n")
	fmt.Fprintf(w, "N nodes (what a GiB costs the cluster), max RSS the largest of the nodes'.\n")
	if n, rows := res.roundsRun(); n > 1 {
		fmt.Fprintf(w, "%d of the rows ran %d rounds each (`--rounds`), Strait and kfake alternating round by round: such a row, and\n", rows, n)
		fmt.Fprintf(w, "its kfake figures, are the round of median MiB/s, with the median cpu s/GiB of the rounds (every round is in the JSON).\n")
	}
	res.writeTargetsMarkdown(w)
	res.writeTransactionsMarkdown(w)
	res.writeTLSMarkdown(w)
	res.writeClusterMarkdown(w)
	res.writeMirrorMarkdown(w)
	res.writeReassignMarkdown(w)
	res.writeScaleMarkdown(w)
	res.writeStorageMarkdown(w)
	if chart != "" {
		res.writeChartMarkdown(w, chart)
	}
	if len(res.Errors) > 0 {
		fmt.Fprintf(w, "\n## Errors\n\n")
		for _, e := range res.Errors {
			fmt.Fprintf(w, "- %s\n", strings.ReplaceAll(e, "\n", " "))
		}
	}
}

// roundsRun is the most rounds any row ran (--rounds), and how many rows
// ran more than one.
func (res *Results) roundsRun() (most, rows int) {
	for _, r := range res.Rows {
		if r.Result != nil && len(r.Result.Rounds) > 1 {
			most = max(most, len(r.Result.Rounds))
			rows++
		}
	}
	return most, rows
}

// markdown is the row's table line; "-" marks a missing figure.
func (r *Row) markdown() string {
	cpu, rss := costCells(r.Cost, r.CostNodes)
	cells := []string{r.Workload, r.Broker, fmt.Sprintf("%.1f", r.MiBPerSec), durCell(r.P99), cpu, rss,
		"-", "-", "-", "-", "-", "-", ratioCell(r.VsPeer), ratioCell(r.VsLimit)}
	if p := r.Peer; p != nil {
		cells[6] = fmt.Sprintf("%.1f", p.MiBPerSec)
		if p.Latency != nil && p.Latency.Count > 0 {
			cells[7] = durCell(p.Latency.P99)
		}
		cells[8], cells[9] = costCells(p.combinedCost())
	}
	if r.LimitName != "" {
		cells[10], cells[11] = r.LimitName, fmt.Sprintf("%.1f", r.LimitMiBPerSec)
	}
	return "| " + strings.Join(cells, " | ") + " |"
}

// costCells are the cpu s/GiB and max rss MiB cells of c, marked with the
// node count when c combines a cluster's nodes.
func costCells(c *BrokerCost, nodes int) (cpu, rss string) {
	if c == nil {
		return "-", "-"
	}
	cpu, rss = fmt.Sprintf("%.2f", c.CPUSecPerGiB), fmt.Sprintf("%.0f", float64(c.MaxRSSBytes)/mib)
	if nodes > 0 {
		mark := fmt.Sprintf(" (%d nodes)", nodes)
		cpu, rss = cpu+mark, rss+mark
	}
	return cpu, rss
}

func durCell(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmtDur(d)
}

func ratioCell(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// writeTransactionsMarkdown is the transactional rows again with the
// figures of a transaction: records and transactions committed a second,
// and the time from BeginTransaction to the commit's answer.
func (res *Results) writeTransactionsMarkdown(w io.Writer) {
	var rows []Row
	for _, r := range res.Rows {
		if r.Result != nil && r.Result.Transactions > 0 {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Transactions\n\n")
	fmt.Fprintf(w, "`produce --transactional`: each producer client begins a transaction, produces its records, flushes and\n")
	fmt.Fprintf(w, "commits, then begins the next; only committed records count. txn p50/p99: BeginTransaction to the commit's answer.\n\n")
	fmt.Fprintf(w, "| workload | broker | rec/txn | rec/s | txn/s | txn p50 | txn p99 | kfake rec/s | kfake txn/s | kfake txn p50 | kfake txn p99 | ours/kfake txn/s |\n")
	fmt.Fprintf(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		ours := r.Result
		cells := []string{r.Workload, r.Broker, fmt.Sprintf("%.0f", float64(ours.Records)/float64(ours.Transactions))}
		cells = append(cells, txnCells(ours)...)
		if p := r.Peer; p != nil && p.Transactions > 0 {
			cells = append(cells, txnCells(p)...)
			cells = append(cells, ratioCell(div(ours.TransactionsPerSec, p.TransactionsPerSec)))
		} else {
			cells = append(cells, "-", "-", "-", "-", "-")
		}
		fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
	}
}

// txnCells are a transactional result's rec/s, txn/s, txn p50 and p99.
func txnCells(r *Result) []string {
	p50, p99 := "-", "-"
	if l := r.TxnLatency; l != nil && l.Count > 0 {
		p50, p99 = durCell(l.P50), durCell(l.P99)
	}
	return []string{fmt.Sprintf("%.0f", r.RecordsPerSec), fmt.Sprintf("%.1f", r.TransactionsPerSec), p50, p99}
}

func (res *Results) writeClusterMarkdown(w io.Writer) {
	s := res.Cluster
	if s == nil {
		return
	}
	fmt.Fprintf(w, "\n## Cluster\n\n")
	fmt.Fprintf(w, "- single node acks=1 %.1f MiB/s; %d nodes RF=%d acks=all min.insync.replicas=%d %.1f MiB/s\n",
		s.SingleMiBPerSec, s.Nodes, s.Nodes, s.MinInsyncReplicas, s.ClusterMiBPerSec)
	fmt.Fprintf(w, "- ratio %.2f%s (target >= %.2f: %s)\n", s.Ratio, s.roundsText(), s.RatioTarget, verdict(s.RatioMet))
	fmt.Fprintf(w, "- at %.0f%% of the cluster's rate (%.0f rec/s): p50 %s, p99 %s (target < %s: %s)\n",
		100*s.LatencyFraction, s.LatencyRate, fmtDur(s.P50), fmtDur(s.P99), fmtDur(s.P99Target), verdict(s.P99Met))
}

func (res *Results) writeMirrorMarkdown(w io.Writer) {
	s := res.Mirror
	if s == nil {
		return
	}
	fmt.Fprintf(w, "\n## Mirror\n\n")
	fmt.Fprintf(w, "- destination produce %.1f MiB/s; source catch-up fetch %.1f MiB/s\n", s.DestProduceMiBPerSec, s.SourceFetchMiBPerSec)
	if !s.Advertised {
		fmt.Fprintf(w, "- mirror not run: the destination does not advertise the mirror RPCs\n")
		return
	}
	fmt.Fprintf(w, "- catch-up %.1f MiB/s, ratio to min(source fetch, destination produce) %.2f (target >= %.2f: %s)\n",
		s.MirrorMiBPerSec, s.Ratio, s.RatioTarget, verdict(s.RatioMet))
	if s.SteadyRate == 0 {
		return
	}
	fmt.Fprintf(w, "- steady state at %.0f%% of the slower rate (%.0f rec/s): lag p50 %s, p99 %s, max %s (target p99 < %s: %s)\n",
		100*s.SteadyFraction, s.SteadyRate, fmtDur(s.LagP50), fmtDur(s.LagP99), fmtDur(s.LagMax), fmtDur(s.LagTarget), verdict(s.LagMet))
}

// writeChartMarkdown links the chart and repeats its legend and scale in
// text, for readers of the Markdown source.
func (res *Results) writeChartMarkdown(w io.Writer, chart string) {
	maxMiB, maxP99 := res.chartScale()
	fmt.Fprintf(w, "\n## Chart\n\n![throughput and p99 per workload](%s)\n\n", chart)
	fmt.Fprintf(w, "One group per workload, left to right in the order of the table above; %s bars are ours, %s bars kfake's.\n",
		colorOurs.name, colorPeer.name)
	fmt.Fprintf(w, "Top: throughput, full height %.1f MiB/s. Bottom: p99 latency, full height %s (no bar: no latency).\n",
		maxMiB, durCell(maxP99))
}
