package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/strait-io/strait/bench/limits"
)

// peerLabel is the broker label of --peer kfake's results.
const peerLabel = "kfake"

// tlsSuffix ends the name of a row run with --tls.
const tlsSuffix = "tls"

// Results is what `strait bench report` gathers from the JSON reports of
// the other commands: one Row per workload, the machine's limits, and the
// cluster and mirror verdicts; and from `go test -bench` output, the
// storage micro-benchmarks.
type Results struct {
	Commit  string
	Date    time.Time
	Limits  *limits.Result
	Rows    []Row
	Cluster *ClusterSummary
	Mirror  *MirrorSummary
	// Reassign is `strait bench reassign`'s figures.
	Reassign *ReassignSummary
	// Scale is `strait bench scale`'s figures.
	Scale *ScaleSummary
	// Storage are the benchmarks of the .txt files, in file order;
	// StorageConfig is the first such file's goos, goarch and cpu.
	Storage       []GoBench
	StorageConfig map[string]string
	// Errors are the errors the reports carry, prefixed with their file.
	Errors []string
}

// Row is one workload: our broker's figure beside kfake's and the
// machine limit that bounds it.
type Row struct {
	Workload string
	// TLS marks a run over TLS listeners (--tls); its Workload ends in
	// " tls" and its plaintext twin is the row named without it.
	TLS       bool
	Broker    string // the label of our broker
	MiBPerSec float64
	P99       time.Duration // 0 when the workload has no latency
	// Cost is our broker's CPU and memory, nil when not measured. For a
	// cluster it covers its CostNodes nodes: CPU summed over them (the
	// cluster's cost of a GiB), max RSS the largest node's.
	Cost      *BrokerCost
	CostNodes int
	// Peer is kfake's result for the same workload, nil without one.
	Peer *Result
	// LimitName names the limits probe bounding the workload, "" when
	// none does (fixed-rate workloads).
	LimitName      string
	LimitMiBPerSec float64
	// VsPeer is MiBPerSec / kfake's, VsLimit MiBPerSec / the limit; 0 when
	// either side is missing.
	VsPeer  float64
	VsLimit float64
	// Result is our broker's result the row shows, for the figures the
	// table has no column for (a transactional run's).
	Result *Result
}

// LoadResults reads the JSON reports in files, in order, and the
// `go test -bench` output of the .txt files among them.
func LoadResults(files []string) (*Results, error) {
	res := &Results{}
	for _, f := range files {
		if strings.HasSuffix(f, ".txt") {
			if err := res.loadGoBench(f); err != nil {
				return nil, err
			}
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("bench report: %w", err)
		}
		// MirrorReport is a superset of Report: it reads either.
		var rep MirrorReport
		if err := json.Unmarshal(b, &rep); err != nil {
			return nil, fmt.Errorf("bench report: %s: %w", f, err)
		}
		res.add(&rep, f)
	}
	return res, nil
}

// add appends rep's rows. The first report carrying limits gives the
// machine's limits for the reports that carry none.
func (res *Results) add(rep *MirrorReport, file string) {
	if res.Limits == nil && rep.Limits != nil {
		res.Limits = rep.Limits
	}
	if rep.Cluster != nil {
		res.Cluster = rep.Cluster
	}
	if rep.Mirror != nil {
		res.Mirror = rep.Mirror
	}
	if rep.Reassign != nil {
		res.Reassign = rep.Reassign
	}
	if rep.Scale != nil {
		res.Scale = rep.Scale
	}
	for _, e := range rep.Errors {
		res.Errors = append(res.Errors, file+": "+e)
	}
	lim := rep.Limits
	if lim == nil {
		lim = res.Limits
	}
	for i, r := range rep.Results {
		if r.Broker == peerLabel {
			continue
		}
		row := Row{Workload: rowName(rep, r.Workload), TLS: rep.Config["tls"] == "true",
			Broker: r.Broker, MiBPerSec: r.MiBPerSec, Result: &rep.Results[i]}
		row.Cost, row.CostNodes = r.combinedCost()
		if r.Latency != nil && r.Latency.Count > 0 {
			row.P99 = r.Latency.P99
		}
		for i := range rep.Results {
			if p := &rep.Results[i]; p.Broker == peerLabel && p.Workload == r.Workload {
				row.Peer = p
				row.VsPeer = div(r.MiBPerSec, p.MiBPerSec)
			}
		}
		row.LimitName, row.LimitMiBPerSec = limitFor(r.Workload, lim)
		row.VsLimit = div(r.MiBPerSec, row.LimitMiBPerSec)
		res.Rows = append(res.Rows, row)
	}
}

// rowName names a workload with the command and the settings that tell
// the rows of the matrix apart.
func rowName(rep *MirrorReport, workload string) string {
	parts := []string{workload}
	switch rep.Command {
	case "cluster", "mirror", "reassign":
		parts = []string{rep.Command, workload}
	}
	if kind, _ := workloadKind(workload); kind != kindFetch {
		if a, ok := rep.Config["acks"].(string); ok && a != "" {
			parts = append(parts, "acks="+a)
		}
	}
	if workload == groupWorkload {
		if proto, ok := rep.Config["group-protocol"].(string); ok && proto != "" {
			parts = append(parts, proto)
		}
		if m, ok := rep.Config["group-members"].(string); ok && m != "" {
			parts = append(parts, "members="+m)
		}
	}
	if p, ok := rep.Config["partitions"].(string); ok && p != "" {
		parts = append(parts, "p="+p)
	}
	if rep.Config["tls"] == "true" {
		parts = append(parts, tlsSuffix)
	}
	return strings.Join(parts, " ")
}

type kind int

const (
	kindRate    kind = iota // fixed rate: no machine limit bounds it
	kindProduce             // bounded by appending to the log
	kindFetch               // bounded by moving bytes to a socket
	kindCopy                // a mirror: fetched from one broker, appended on another
)

// workloadKind classifies a workload by its name (produce.go, consume.go,
// cluster.go and mirror.go name them).
func workloadKind(w string) (kind, bool) {
	switch {
	case w == "e2e", w == "mirror-steady", strings.HasSuffix(w, "-rate"):
		return kindRate, true
	case w == "mirror-catch-up":
		return kindCopy, true
	case w == "catch-up", w == groupWorkload, w == "tail", strings.Contains(w, "fetch"):
		return kindFetch, true
	case w == "prefill", strings.HasPrefix(w, "produce"):
		return kindProduce, true
	}
	return kindRate, false
}

// limitFor is the ceiling bounding workload w: buffered sequential append
// for produce, the faster of loopback TCP and sendfile for reads (a broker
// reaches whichever its read path uses), the smaller of the two for a
// mirror's copy. It returns "" when no probe bounds it or none ran.
func limitFor(w string, l *limits.Result) (string, float64) {
	if l == nil {
		return "", 0
	}
	get := func(name string) float64 {
		if p, ok := l.Get(name); ok && p.Err == "" {
			return p.MiBPerSec
		}
		return 0
	}
	network := func() (string, float64) {
		tcp, sf := get(limits.LoopbackTCP), get(limits.SendfileLoopback)
		if sf >= tcp && sf > 0 {
			return limits.SendfileLoopback, sf
		}
		if tcp > 0 {
			return limits.LoopbackTCP, tcp
		}
		return "", 0
	}
	k, _ := workloadKind(w)
	switch k {
	case kindProduce:
		if v := get(limits.AppendBuffered); v > 0 {
			return limits.AppendBuffered, v
		}
	case kindFetch:
		return network()
	case kindCopy:
		name, v := network()
		if a := get(limits.AppendBuffered); a > 0 && (v == 0 || a < v) {
			return limits.AppendBuffered, a
		}
		return name, v
	}
	return "", 0
}

// gitCommit is the short hash of HEAD, "unknown" outside a git checkout.
func gitCommit(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if s := strings.TrimSpace(string(out)); err == nil && s != "" {
		return s
	}
	return "unknown"
}

func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strait bench report", flag.ContinueOnError)
	out := fs.String("out", "bench/RESULTS.md", "the Markdown file to write")
	chart := fs.String("chart", "", "the PNG chart to write beside it (none when empty)")
	commit := fs.String("commit", "", "the commit to name (default: git rev-parse --short HEAD, else unknown)")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return parseFlags(fs, args, stdout, stderr)
	}
	files := fs.Args()
	if len(files) == 0 {
		fmt.Fprintf(stderr, "%s: no JSON report given\nusage: %s [flags] FILE.json... [GO-TEST-BENCH-OUTPUT.txt...]\n", fs.Name(), fs.Name())
		return 2
	}
	res, err := LoadResults(files)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return 1
	}
	res.Commit, res.Date = *commit, time.Now().UTC()
	if res.Commit == "" {
		res.Commit = gitCommit(ctx)
	}
	if err := res.WriteFiles(*out, *chart); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s (%d workloads", *out, len(res.Rows))
	if n := len(res.Storage); n > 0 {
		fmt.Fprintf(stdout, ", %d storage benchmarks", n)
	}
	fmt.Fprint(stdout, ")")
	if *chart != "" {
		fmt.Fprintf(stdout, " and %s", *chart)
	}
	fmt.Fprintln(stdout)
	return 0
}
