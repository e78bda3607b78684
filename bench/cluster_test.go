package bench

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCLICluster runs `strait bench cluster` end to end at a tiny size:
// one node and three nodes of this test binary standing in for
// `strait serve` (TestMain), three rounds of the two throughput phases,
// and checks every figure the report carries.
func TestCLICluster(t *testing.T) {
	data := t.TempDir()
	const latency = 300 * time.Millisecond
	code, stdout, stderr := runMain(t, "cluster", "--serve-cmd", os.Args[0]+" serve",
		"--records", "600", "--partitions", "2", "--latency-duration", latency.String(), "--rounds", "3",
		"--data-dir", data, "--keep-data", "--limits=false", "--quiet", "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s\nnode logs:\n%s", code, stdout, stderr, nodeLogs(data))
	}
	var rep Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	if len(rep.Errors) != 0 || len(rep.Results) != 3 || rep.Cluster == nil {
		t.Fatalf("errors %q, %d results, summary %v: want 3 results and a summary", rep.Errors, len(rep.Results), rep.Cluster)
	}
	single, full, paced := rep.Results[0], rep.Results[1], rep.Results[2]
	for i, want := range [][2]string{{phaseSingle, "strait-1node"}, {phaseCluster, "strait-3node"}, {phaseRate, "strait-3node"}} {
		if r := rep.Results[i]; r.Workload != want[0] || r.Broker != want[1] || r.Errors != 0 {
			t.Errorf("result %d: %s on %s with %d errors, want %s on %s without", i, r.Workload, r.Broker, r.Errors, want[0], want[1])
		}
	}
	for _, r := range []Result{single, full} {
		if r.Records != 600 || r.Bytes != 600*1024 {
			t.Errorf("%s: %d records, %d bytes; want 600 and %d", r.Workload, r.Records, r.Bytes, 600*1024)
		}
		checkLatency(t, r.Workload, r.Latency, 600)
	}

	// The single node is metered alone, the cluster node by node.
	if single.Cost == nil || single.Cost.PID <= 0 || len(single.NodeCosts) != 0 {
		t.Errorf("single node cost %+v, node costs %+v: want its own cost only", single.Cost, single.NodeCosts)
	}
	pids := map[int]bool{}
	for _, r := range []Result{full, paced} {
		if r.Cost != nil || len(r.NodeCosts) != 3 {
			t.Fatalf("%s: cost %+v, %d node costs; want 3 node costs", r.Workload, r.Cost, len(r.NodeCosts))
		}
		for _, c := range r.NodeCosts {
			if c.PID <= 0 || c.PID == single.Cost.PID || c.RSSBytes <= 0 || c.MaxRSSBytes < c.RSSBytes {
				t.Errorf("%s node cost %+v", r.Workload, c)
			}
			pids[c.PID] = true
		}
	}
	if len(pids) != 3 {
		t.Errorf("node pids %v: want the same 3 processes in both cluster phases", pids)
	}
	for pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("node %d still exists after the run: %v", pid, err)
		}
	}

	// The latency phase sends exactly what its schedule holds: records due
	// every 1/rate from the start, before the end of the phase.
	sum := rep.Cluster
	if want := full.RecordsPerSec / 2; sum.LatencyRate != want || sum.LatencyFraction != 0.5 {
		t.Fatalf("latency rate %v at fraction %v, want %v", sum.LatencyRate, sum.LatencyFraction, want)
	}
	interval := time.Duration(float64(time.Second) / sum.LatencyRate)
	due := int64((latency + interval - 1) / interval)
	if paced.Records != due || paced.Latency == nil || paced.Latency.Count != uint64(due) {
		t.Errorf("latency phase acknowledged %d records (%+v), want the %d due in %v at %.0f/s", paced.Records, paced.Latency, due, latency, sum.LatencyRate)
	}
	if sum.Nodes != 3 || sum.MinInsyncReplicas != 2 || sum.SingleMiBPerSec != single.MiBPerSec || sum.ClusterMiBPerSec != full.MiBPerSec ||
		sum.Ratio != full.MiBPerSec/single.MiBPerSec || sum.RatioMet != (sum.Ratio >= 0.5) ||
		sum.P50 != paced.Latency.P50 || sum.P99 != paced.Latency.P99 || sum.P99Met != (sum.P99 < 20*time.Millisecond) ||
		sum.SingleCPUSecPerGiB != single.Cost.CPUSecPerGiB ||
		math.Abs(sum.ClusterCPUSecPerGiB-(full.NodeCosts[0].CPUSecPerGiB+full.NodeCosts[1].CPUSecPerGiB+full.NodeCosts[2].CPUSecPerGiB)) > 1e-9 {
		t.Errorf("summary %+v does not match the results", sum)
	}

	// Three rounds ran, each a pair of adjacent phases; the results and
	// the summary are the round with the median ratio.
	if sum.Rounds != 3 || len(sum.RoundSingle) != 3 || len(sum.RoundCluster) != 3 || len(sum.RoundRatios) != 3 {
		t.Fatalf("rounds %d: single %v, cluster %v, ratios %v; want 3 of each", sum.Rounds, sum.RoundSingle, sum.RoundCluster, sum.RoundRatios)
	}
	below, above, at := 0, 0, -1
	for i, r := range sum.RoundRatios {
		if r != sum.RoundCluster[i]/sum.RoundSingle[i] || r <= 0 {
			t.Errorf("round %d ratio %v, want %v / %v", i, r, sum.RoundCluster[i], sum.RoundSingle[i])
		}
		switch {
		case r < sum.Ratio:
			below++
		case r > sum.Ratio:
			above++
		case sum.RoundSingle[i] == single.MiBPerSec && sum.RoundCluster[i] == full.MiBPerSec:
			at = i
		}
	}
	if at < 0 || below > 1 || above > 1 {
		t.Errorf("ratio %v of round %d is not the median of %v (results: single %v, cluster %v)", sum.Ratio, at, sum.RoundRatios, single.MiBPerSec, full.MiBPerSec)
	}

	// Every node holds a replica of both partitions: the topic had
	// replication factor 3.
	for _, node := range []string{"node1", "node2", "node3"} {
		for _, p := range []string{"strait-bench-0", "strait-bench-1"} {
			if _, err := os.Stat(filepath.Join(data, "cluster", node, p)); err != nil {
				t.Errorf("cluster %s has no replica of %s: %v", node, p, err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(data, "single", "node1", "strait-bench-0")); err != nil {
		t.Errorf("single node has no strait-bench-0: %v", err)
	}
}

// nodeLogs is the tail of every node log under data, for a failure message.
func nodeLogs(data string) string {
	logs, _ := filepath.Glob(filepath.Join(data, "*", "node*.log"))
	var b strings.Builder
	for _, l := range logs {
		b.WriteString("== " + l + "\n" + logTail(l, 30) + "\n")
	}
	return b.String()
}

// TestClusterDataRemoved: without --keep-data nothing the run created is
// left, even when a node cannot start (here: an unknown config key).
func TestClusterDataRemoved(t *testing.T) {
	data := t.TempDir()
	code, stdout, _ := runMain(t, "cluster", "--serve-cmd", os.Args[0]+" serve", "--set", "no.such.key=1",
		"--records", "1", "--data-dir", data, "--limits=false", "--quiet", "--json")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var rep Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 0 || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "node 1 exited before it was ready") ||
		!strings.Contains(rep.Errors[0], "no.such.key") {
		t.Fatalf("results %+v errors %q: want none and node 1's failure naming the key", rep.Results, rep.Errors)
	}
	left, err := os.ReadDir(data)
	if err != nil || len(left) != 0 {
		t.Fatalf("data dir holds %v (%v), want nothing", left, err)
	}
}

// TestClusterNodeExits: a node that exits during a phase ends the run
// with an error naming it and quoting its log. Before, the phase's
// producer retried against the dead nodes until its context ended (a
// full disk once halted every node and the bench ran on for ever).
func TestClusterNodeExits(t *testing.T) {
	// The single node halts once the phases have begun (the cluster's
	// start takes a few seconds); 100M records keep its phase going.
	t.Setenv(standInHaltAfter, "6s:"+string(filepath.Separator)+"single"+string(filepath.Separator))
	code, stdout, stderr := runMain(t, "cluster", "--serve-cmd", os.Args[0]+" serve", "--records", "100000000",
		"--data-dir", t.TempDir(), "--limits=false", "--quiet", "--json")
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "node 1 exited during the phase") ||
		!strings.Contains(rep.Errors[0], "halting as told by "+standInHaltAfter) {
		t.Fatalf("errors %q: want the exit of node 1 with its log", rep.Errors)
	}
}

func TestMedianIndex(t *testing.T) {
	for _, tc := range []struct {
		v    []float64
		want int
	}{
		{[]float64{0.4}, 0},
		{[]float64{0.5, 0.3, 0.4}, 2},
		{[]float64{0.3, 0.5, 0.4, 0.6}, 2}, // the lower middle one
		{[]float64{0.4, 0.4, 0.2}, 0},      // ties keep run order
	} {
		if got := medianIndex(tc.v); got != tc.want {
			t.Errorf("medianIndex(%v) = %d, want %d", tc.v, got, tc.want)
		}
	}
}
