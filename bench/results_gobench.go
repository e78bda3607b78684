package bench

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// GoBench is one benchmark of `go test -bench` output: the mean of its
// lines when -count repeats it.
type GoBench struct {
	Pkg   string // the pkg: line above it, "" when none
	Name  string // as printed, without the -GOMAXPROCS suffix
	Procs int    // GOMAXPROCS, from the name's suffix; 0 when it has none
	Runs  int    // result lines averaged into Metrics
	// Metrics are the value/unit pairs after the iteration count, in the
	// order printed: ns/op, MB/s, B/op and allocs/op are testing's own,
	// the others b.ReportMetric's.
	Metrics []GoBenchMetric
}

// GoBenchMetric is one value/unit pair of a result line.
type GoBenchMetric struct {
	Value float64
	Unit  string
	runs  int // the runs averaged into Value
}

// Metric is the value of unit, false when the benchmark did not report it.
func (b *GoBench) Metric(unit string) (float64, bool) {
	for _, m := range b.Metrics {
		if m.Unit == unit {
			return m.Value, true
		}
	}
	return 0, false
}

// GoBenchOutput is what one `go test -bench` output file holds.
type GoBenchOutput struct {
	// Config is the first value of each "key: value" line (goos, goarch,
	// cpu); pkg changes between packages and is in GoBench.Pkg instead.
	Config     map[string]string
	Benchmarks []GoBench
	// Failures are the "--- FAIL" and "FAIL" lines: a benchmark that
	// failed prints no result, so its absence alone would go unnoticed.
	Failures []string
}

// A config line is a lower-case key without spaces, a colon and a value
// (the Go benchmark data format, proposal 14313); the procs suffix is what
// testing appends to a name when GOMAXPROCS is not 1.
var (
	goBenchConfigRE = regexp.MustCompile(`^([a-z][^\s:]*):\s*(.*)$`)
	goBenchProcsRE  = regexp.MustCompile(`-(\d+)$`)
)

// ParseGoBench reads `go test -bench` output. Lines other than results,
// configuration and failures (PASS, ok, test logs) are skipped, so a file
// captured with tee parses as is.
func ParseGoBench(r io.Reader) (*GoBenchOutput, error) {
	out := &GoBenchOutput{Config: map[string]string{}}
	index := map[string]int{} // pkg + name -> Benchmarks index, to merge -count repeats
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		switch {
		case strings.HasPrefix(line, "--- FAIL"), line == "FAIL", strings.HasPrefix(line, "FAIL\t"), strings.HasPrefix(line, "FAIL "):
			out.Failures = append(out.Failures, strings.TrimSpace(line))
			continue
		case strings.HasPrefix(line, "Benchmark"):
			b, ok := parseGoBenchLine(line)
			if !ok {
				continue
			}
			b.Pkg = pkg
			key := pkg + "\x00" + b.Name
			if i, seen := index[key]; seen {
				out.Benchmarks[i].merge(b)
				continue
			}
			index[key] = len(out.Benchmarks)
			out.Benchmarks = append(out.Benchmarks, b)
			continue
		}
		if m := goBenchConfigRE.FindStringSubmatch(line); m != nil {
			if m[1] == "pkg" {
				pkg = m[2]
			} else if _, ok := out.Config[m[1]]; !ok {
				out.Config[m[1]] = m[2]
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("bench report: go test -bench output: %w", err)
	}
	return out, nil
}

// parseGoBenchLine parses "BenchmarkX/sub-2  1234  987654 ns/op  12.5 MB/s ...":
// a name, an iteration count, then value/unit pairs. Anything else that
// starts with "Benchmark" (a log line, a name printed before its result
// under -v) is not a result.
func parseGoBenchLine(line string) (GoBench, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || len(f)%2 != 0 {
		return GoBench{}, false
	}
	if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
		return GoBench{}, false
	}
	b := GoBench{Name: f[0], Runs: 1}
	if m := goBenchProcsRE.FindStringSubmatch(b.Name); m != nil {
		b.Procs, _ = strconv.Atoi(m[1])
		b.Name = strings.TrimSuffix(b.Name, m[0])
	}
	for i := 2; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return GoBench{}, false
		}
		b.Metrics = append(b.Metrics, GoBenchMetric{Value: v, Unit: f[i+1], runs: 1})
	}
	return b, true
}

// merge folds another run of the same benchmark into b: each metric
// becomes the mean over the runs that reported it.
func (b *GoBench) merge(o GoBench) {
	for _, m := range o.Metrics {
		found := false
		for i := range b.Metrics {
			if p := &b.Metrics[i]; p.Unit == m.Unit {
				p.Value = (p.Value*float64(p.runs) + m.Value) / float64(p.runs+1)
				p.runs++
				found = true
				break
			}
		}
		if !found {
			b.Metrics = append(b.Metrics, m)
		}
	}
	b.Runs++
}
