package bench

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseGoBench(t *testing.T) {
	f, err := os.Open("testdata/results/storage-bench.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := ParseGoBench(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Failures) != 0 {
		t.Errorf("failures %q", out.Failures)
	}
	if got := out.Config["cpu"]; got != "Oxide Virtual Turin-like Processor" {
		t.Errorf("cpu %q", got)
	}
	if out.Config["goos"] != "linux" || out.Config["goarch"] != "amd64" || out.Config["pkg"] != "" {
		t.Errorf("config %v", out.Config)
	}
	var names []string
	for _, b := range out.Benchmarks {
		names = append(names, b.Name)
		if b.Pkg != "github.com/strait-io/strait/storage" || b.Procs != 2 || b.Runs != 1 {
			t.Errorf("%s: pkg %q procs %d runs %d", b.Name, b.Pkg, b.Procs, b.Runs)
		}
	}
	want := []string{
		"BenchmarkAppend/log", "BenchmarkAppend/raw", "BenchmarkAppend/paired",
		"BenchmarkAppendFsync/group", "BenchmarkAppendFsync/per-append", "BenchmarkAppendFsync/paired",
		"BenchmarkRead/batch=1", "BenchmarkRead/batch=16", "BenchmarkRead/batch=256",
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("names\n got %q\nwant %q", names, want)
	}
	paired := out.Benchmarks[2]
	for unit, want := range map[string]float64{
		"ns/op": 92390421, "log_MB/s": 573.3, "pct_of_raw": 54.45, "raw_MB/s": 1053, "B/op": 589688, "allocs/op": 12341,
	} {
		if got, ok := paired.Metric(unit); !ok || got != want {
			t.Errorf("paired %s = %v, %v; want %v", unit, got, ok, want)
		}
	}
	if _, ok := paired.Metric("MB/s"); ok {
		t.Error("paired has MB/s: it calls no SetBytes")
	}
	if got, _ := out.Benchmarks[8].Metric("MB/s"); got != 34909.48 {
		t.Errorf("batch=256 MB/s %v", got)
	}
}

func TestParseGoBenchRepeatsAndFailures(t *testing.T) {
	const in = `goos: linux
pkg: example.com/a
BenchmarkX-8   	     100	      1000 ns/op	      10 B/op
BenchmarkX
BenchmarkX is not a result line
BenchmarkX-8   	     100	      3000 ns/op	      30 B/op	  5.0 extra/op
--- FAIL: BenchmarkY
    y_test.go:10: boom
BenchmarkZ/case-x	10	 5 ns/op
FAIL
FAIL	example.com/a	0.1s
pkg: example.com/b
BenchmarkX-8   	     100	      7 ns/op
`
	out, err := ParseGoBench(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"--- FAIL: BenchmarkY", "FAIL", "FAIL\texample.com/a\t0.1s"}; !reflect.DeepEqual(out.Failures, want) {
		t.Errorf("failures %q, want %q", out.Failures, want)
	}
	if len(out.Benchmarks) != 3 {
		t.Fatalf("%d benchmarks, want 3: %+v", len(out.Benchmarks), out.Benchmarks)
	}
	x := out.Benchmarks[0]
	ns, _ := x.Metric("ns/op")
	bop, _ := x.Metric("B/op")
	extra, _ := x.Metric("extra/op")
	// -count repeats average; a metric only one run reported keeps its value.
	if x.Name != "BenchmarkX" || x.Procs != 8 || x.Runs != 2 || ns != 2000 || bop != 20 || extra != 5 {
		t.Errorf("merged %+v", x)
	}
	// A name without a numeric suffix keeps it: GOMAXPROCS was 1.
	if z := out.Benchmarks[1]; z.Name != "BenchmarkZ/case-x" || z.Procs != 0 || z.Pkg != "example.com/a" {
		t.Errorf("z %+v", z)
	}
	// The same name in another package is another benchmark.
	if b := out.Benchmarks[2]; b.Pkg != "example.com/b" || b.Runs != 1 {
		t.Errorf("b %+v", b)
	}
}
