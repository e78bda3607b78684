package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// modulePrefix is cut from package paths in the storage table.
const modulePrefix = "github.com/strait-io/strait/"

// loadGoBench adds the storage micro-benchmarks of one `go test -bench`
// output file. A failure or an output without results (a build error) is
// noted in res.Errors, like a JSON report's errors, rather than failing
// the report: `make bench` marks the step FAILED itself and the other
// sections are still worth writing.
func (res *Results) loadGoBench(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("bench report: %w", err)
	}
	defer f.Close()
	out, err := ParseGoBench(f)
	if err != nil {
		return fmt.Errorf("bench report: %s: %w", file, err)
	}
	if res.StorageConfig == nil && len(out.Benchmarks) > 0 {
		res.StorageConfig = out.Config
	}
	res.Storage = append(res.Storage, out.Benchmarks...)
	for _, l := range out.Failures {
		res.Errors = append(res.Errors, file+": "+l)
	}
	if len(out.Benchmarks) == 0 {
		res.Errors = append(res.Errors, file+": no benchmark results")
	}
	return nil
}

// storagePair is a comparison storage/bench_test.go makes by its
// sub-benchmark names: Of against its sibling To on Unit (higher is
// better), and the "paired" sibling that measures the same ratio in
// alternating phases of one op and reports it as Paired. The benchmarks'
// doc comments call the paired figure the robust one: separate runs of
// b.N ops end up bound by the kernel's writeback as much as by our code.
// Only these pairs are compared: other benchmarks name no counterpart.
type storagePair struct {
	Bench, Of, To, Unit, Paired string
}

var storagePairs = []storagePair{
	{Bench: "BenchmarkAppend", Of: "log", To: "raw", Unit: "MB/s", Paired: "pct_of_raw"},
	{Bench: "BenchmarkAppendFsync", Of: "group", To: "per-append", Unit: "appends/s", Paired: "group_speedup"},
}

// StorageComparison is one storagePair as measured.
type StorageComparison struct {
	Name string // "BenchmarkAppend log/raw MB/s"
	// Ratio is Of's Unit over To's from their separate runs, 0 when
	// either is missing.
	Ratio float64
	// Paired is the paired sub-benchmark's metric, PairedUnit its unit;
	// PairedOK is false when it did not run.
	Paired     float64
	PairedUnit string
	PairedOK   bool
}

// StorageComparisons are the storagePairs found in res.Storage, per
// package, in table order.
func (res *Results) StorageComparisons() []StorageComparison {
	find := func(pkg, name string) *GoBench {
		for i := range res.Storage {
			if b := &res.Storage[i]; b.Pkg == pkg && b.Name == name {
				return b
			}
		}
		return nil
	}
	var out []StorageComparison
	for _, p := range storagePairs {
		seen := map[string]bool{}
		for _, b := range res.Storage {
			if seen[b.Pkg] || !strings.HasPrefix(b.Name, p.Bench+"/") {
				continue
			}
			seen[b.Pkg] = true
			c := StorageComparison{Name: fmt.Sprintf("%s %s/%s %s", p.Bench, p.Of, p.To, p.Unit), PairedUnit: p.Paired}
			if of, to := find(b.Pkg, p.Bench+"/"+p.Of), find(b.Pkg, p.Bench+"/"+p.To); of != nil && to != nil {
				a, _ := of.Metric(p.Unit)
				z, _ := to.Metric(p.Unit)
				c.Ratio = div(a, z)
			}
			if pb := find(b.Pkg, p.Bench+"/paired"); pb != nil {
				c.Paired, c.PairedOK = pb.Metric(p.Paired)
			}
			if c.Ratio != 0 || c.PairedOK {
				out = append(out, c)
			}
		}
	}
	return out
}

// goBenchStdUnits are testing's own columns; the other units are
// b.ReportMetric's and go into the last column.
var goBenchStdUnits = []string{"ns/op", "MB/s", "B/op", "allocs/op"}

func (res *Results) writeStorageMarkdown(w io.Writer) {
	if len(res.Storage) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Storage micro-benchmarks\n\n")
	var env []string
	if c := res.StorageConfig["cpu"]; c != "" {
		env = append(env, c)
	}
	if c := res.StorageConfig; c["goos"] != "" && c["goarch"] != "" {
		env = append(env, c["goos"]+"/"+c["goarch"])
	}
	if p := res.Storage[0].Procs; p > 0 {
		env = append(env, fmt.Sprintf("GOMAXPROCS %d", p))
	}
	fmt.Fprintf(w, "`go test -bench . -benchmem ./storage/...`")
	if len(env) > 0 {
		fmt.Fprintf(w, " on %s", strings.Join(env, ", "))
	}
	fmt.Fprintf(w, ".\nMB/s is 10^6 bytes per second, as `testing` counts it; the last column is what each benchmark reports\n")
	fmt.Fprintf(w, "of its own (see its doc comment in storage/bench_test.go).\n\n")
	fmt.Fprintf(w, "| package | benchmark | ns/op | MB/s | B/op | allocs/op | other metrics |\n")
	fmt.Fprintf(w, "|---|---|--:|--:|--:|--:|---|\n")
	for _, b := range res.Storage {
		fmt.Fprintln(w, b.markdown())
	}
	cs := res.StorageComparisons()
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nThe comparisons the benchmarks' names pair: the ratio of the two separate runs, and the figure the paired\n")
	fmt.Fprintf(w, "sub-benchmark reports, which alternates the two within each op (the robust one, per storage/bench_test.go).\n\n")
	fmt.Fprintf(w, "| comparison | separate runs | paired run |\n|---|--:|--:|\n")
	for _, c := range cs {
		paired := "-"
		if c.PairedOK {
			paired = fmtMetric(c.Paired) + " " + c.PairedUnit
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", c.Name, ratioCell(c.Ratio), paired)
	}
}

// markdown is the benchmark's table line; "-" marks a metric it lacks.
func (b *GoBench) markdown() string {
	name := b.Name
	if b.Runs > 1 {
		name += fmt.Sprintf(" (mean of %d)", b.Runs)
	}
	cells := []string{strings.TrimPrefix(b.Pkg, modulePrefix), name}
	for _, u := range goBenchStdUnits {
		v, ok := b.Metric(u)
		switch {
		case !ok:
			cells = append(cells, "-")
		case u == "MB/s":
			cells = append(cells, fmt.Sprintf("%.2f", v))
		case u == "ns/op":
			cells = append(cells, fmtMetric(v))
		default: // B/op, allocs/op: whole numbers
			cells = append(cells, fmt.Sprintf("%.0f", v))
		}
	}
	var other []string
	for _, m := range b.Metrics {
		if !slices.Contains(goBenchStdUnits, m.Unit) {
			other = append(other, fmtMetric(m.Value)+" "+m.Unit)
		}
	}
	if len(other) == 0 {
		other = []string{"-"}
	}
	cells = append(cells, strings.Join(other, ", "))
	return "| " + strings.Join(cells, " | ") + " |"
}

// fmtMetric prints ns/op or a custom metric with the precision testing
// prints it with (testing.prettyPrint): whole numbers from 1000 up, else
// about four significant digits. MB/s, B/op and allocs/op it prints with
// fixed formats of their own, which markdown follows.
func fmtMetric(v float64) string {
	// Each decade down takes one more decimal: 0 digits from 999.95
	// (what rounds to 1000), 1 from 99.995, ... up to 7.
	y := math.Abs(v)
	prec := 0
	if y != 0 {
		for limit := 999.95; prec < 7 && y < limit; limit /= 10 {
			prec++
		}
	}
	return fmt.Sprintf("%.*f", prec, v)
}
