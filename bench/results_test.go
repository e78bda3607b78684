package bench

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var reportFixtures = []string{
	"testdata/report/produce.json",
	"testdata/report/consume.json",
	"testdata/report/cluster.json",
	"testdata/report/mirror.json",
}

// loadResults is LoadResults of fixture files that must load.
func loadResults(t *testing.T, files []string) *Results {
	t.Helper()
	res, err := LoadResults(files)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// markdownOf is the RESULTS.md res writes, with chart as its chart's path.
func markdownOf(res *Results, chart string) string {
	var md bytes.Buffer
	res.WriteMarkdown(&md, chart)
	return md.String()
}

func TestResultsMarkdown(t *testing.T) {
	res := loadResults(t, reportFixtures)
	res.Commit, res.Date = "abc1234", time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC)
	got := markdownOf(res, "results.png")
	wantRows := []string{
		// These fixtures carry no broker cost: "-" for CPU and RSS.
		"| produce acks=1 p=8 | strait | 200.0 | 4.00ms | - | - | 80.0 | 16.0ms | - | - | append | 800.0 | 2.50 | 0.25 |",
		// consume.json carries no limits: produce.json's apply; sendfile beats TCP.
		"| catch-up p=1 | strait | 400.0 | - | - | - | 500.0 | - | - | - | sendfile-loopback | 1600.0 | 0.80 | 0.25 |",
		"| cluster produce-acks-all p=8 | strait-3node | 64.0 | 12.5ms | - | - | - | - | - | - | append | 800.0 | - | 0.08 |",
		// Fixed rate: no limit bounds it.
		"| cluster produce-acks-all-rate p=8 | strait-3node | 30.0 | 8.00ms | - | - | - | - | - | - | - | - | - | - |",
		// A mirror copy is bounded by the slower of append and the network.
		"| mirror mirror-catch-up p=8 | strait-mirror | 90.0 | - | - | - | - | - | - | - | append | 800.0 | - | 0.11 |",
	}
	rows := workloadRows(got)
	if len(rows) != len(wantRows) {
		t.Fatalf("%d rows, want %d:\n%s", len(rows), len(wantRows), got)
	}
	for i := range wantRows {
		if rows[i] != wantRows[i] {
			t.Errorf("row %d:\n got %s\nwant %s", i, rows[i], wantRows[i])
		}
	}
	for _, want := range []string{
		"at commit `abc1234` on 2026-11-30 20:00 UTC.",
		"- append: 800.0 MiB/s\n",
		"- sendfile-loopback: 1600.0 MiB/s\n",
		"- sendfile-loopback: 1600.0 MiB/s\n- system call (getppid): 1030 ns\n- free page reporting: on (virtio balloon, blocks of order 9 and up)\n\nThis machine hands the memory it frees back",
		"- ratio 0.40 (target >= 0.50: NOT met)\n",
		"(30720 rec/s): p50 2.00ms, p99 8.00ms (target < 20.0ms: met)\n",
		"- catch-up 90.0 MiB/s, ratio to min(source fetch, destination produce) 0.60 (target >= 0.80: NOT met)\n",
		"lag p50 100ms, p99 400ms, max 500ms (target p99 < 1.00s: met)\n",
		"![throughput and p99 per workload](results.png)",
		"Top: throughput, full height 500.0 MiB/s. Bottom: p99 latency, full height 16.0ms",
		"- testdata/report/consume.json: kfake: tail: context deadline exceeded\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "## Storage") {
		t.Errorf("storage section without a go test -bench output:\n%s", got)
	}
}

// workloadRows are the lines of the workloads table of md.
func workloadRows(md string) []string {
	_, table, _ := strings.Cut(md, "## Workloads\n")
	table, _, _ = strings.Cut(table, "\n\n## ")
	var rows []string
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| workload") {
			rows = append(rows, l)
		}
	}
	return rows
}

func TestResultsChart(t *testing.T) {
	res := loadResults(t, reportFixtures)
	var buf bytes.Buffer
	if err := res.WriteChart(&buf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	l := res.layoutChart()
	if b := img.Bounds(); b.Dx() != l.w || b.Dy() != l.h {
		t.Fatalf("chart %v, want %dx%d", b, l.w, l.h)
	}
	if w, h := res.ChartSize(); w != l.w || h != l.h {
		t.Fatalf("ChartSize %dx%d, layout %dx%d", w, h, l.w, l.h)
	}
	rgba := func(x, y int) color.RGBA {
		r, g, b, a := img.At(x, y).RGBA()
		return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
	}
	white := color.RGBA{0xff, 0xff, 0xff, 0xff}
	// The first group's ours bar starts (chartGroupW-2*chartBarW)/2 into
	// it, kfake's one bar width further.
	ours := func(group int) int { return l.plotX + group*chartGroupW + (chartGroupW-2*chartBarW)/2 + 2 }
	peer := func(group int) int { return ours(group) + chartBarW }
	axis0, axis1 := l.tops[0]+chartPanelH, l.tops[1]+chartPanelH
	for _, c := range []struct {
		x, y int
		want color.RGBA
	}{
		// Scale 500 MiB/s: ours 200 MiB/s in the first group is 80 of 200 px.
		{ours(0), axis0 - 1, colorOurs.c},
		{ours(0), axis0 - 80, colorOurs.c},
		{ours(0), axis0 - 81, white},
		// kfake's catch-up, the largest, is full height in the second group.
		{peer(1), l.tops[0], colorPeer.c},
		// kfake's produce p99 is the largest: full height in the lower panel.
		{peer(0), l.tops[1], colorPeer.c},
		// The catch-up has no latency: no bar in the lower panel.
		{ours(1), axis1 - 2, white},
		{peer(1), axis1 - 2, white},
	} {
		if got := rgba(c.x, c.y); got != c.want {
			t.Errorf("pixel (%d,%d) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
	// Each label is drawn: some pixel of its box has the text colour.
	for _, lb := range l.labels {
		if strings.TrimSpace(lb.text) == "" {
			continue
		}
		found := false
		b := lb.bounds()
		for y := b.Min.Y; y < b.Max.Y && !found; y++ {
			for x := b.Min.X; x < b.Max.X && !found; x++ {
				found = rgba(x, y) == colorText
			}
		}
		if !found {
			t.Errorf("label %q at %v: no text pixel", lb.text, b)
		}
	}
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	out, chart := filepath.Join(dir, "RESULTS.md"), filepath.Join(dir, "results.png")
	var stdout, stderr bytes.Buffer
	args := append([]string{"report", "--out", out, "--chart", chart, "--commit", "feed123"}, reportFixtures...)
	if code := MainContext(t.Context(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if want := "wrote " + out + " (5 workloads) and " + chart + "\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "at commit `feed123` on ") || !strings.Contains(string(md), "](results.png)") {
		t.Errorf("RESULTS.md:\n%s", md)
	}
	f, err := os.Open(chart)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res := loadResults(t, reportFixtures)
	res.Commit = "feed123"
	w, h := res.ChartSize()
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Width != w || cfg.Height != h {
		t.Errorf("chart %dx%d, %v; want %dx%d", cfg.Width, cfg.Height, err, w, h)
	}

	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"report"}, 2, "no JSON report given"},
		{[]string{"report", "--frob"}, 2, "unknown flag --frob"},
		{[]string{"report", "--out", out, filepath.Join(dir, "missing.json")}, 1, "missing.json"},
		{[]string{"report", "--out", out, out}, 1, "RESULTS.md: invalid character"},
	} {
		var so, se bytes.Buffer
		if code := MainContext(t.Context(), c.args, &so, &se); code != c.code || !strings.Contains(se.String(), c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, se.String(), c.code, c.msg)
		}
	}
}

// costFixtures carry broker costs: ours and kfake's measured, kfake's
// unmeasured (in-process), a single node and a 3-node cluster; with a
// go test -bench output of the storage benchmarks.
var costFixtures = []string{
	"testdata/results/produce-cost.json",
	"testdata/results/cluster-cost.json",
	"testdata/results/storage-bench.txt",
}

func TestResultsCostColumns(t *testing.T) {
	res := loadResults(t, costFixtures)
	got := markdownOf(res, "")
	if !strings.Contains(got, "| workload | broker | MiB/s | p99 | cpu s/GiB | max rss MiB | kfake MiB/s | kfake p99 | kfake cpu s/GiB | kfake max rss MiB | limit |") {
		t.Errorf("header lacks the cost columns:\n%s", got)
	}
	wantRows := []string{
		// 64 MiB max RSS ours, 300 MiB kfake's.
		"| produce acks=all p=1 | strait | 120.0 | 3.00ms | 2.50 | 64 | 60.0 | 9.00ms | 10.25 | 300 | - | - | 2.00 | - |",
		// kfake in-process: no cost.
		"| e2e acks=all p=1 | strait | 10.0 | 900µs | 3.75 | 50 | 10.0 | 1.50ms | - | - | - | - | 1.00 | - |",
		"| cluster produce-acks1 p=8 | strait-1node | 150.0 | 5.00ms | 1.75 | 120 | - | - | - | - | - | - | - | - |",
		// 1.5 + 2.0 + 2.5 s/GiB over the nodes; the largest max RSS, 250 MiB.
		"| cluster produce-acks-all p=8 | strait-3node | 64.0 | 12.5ms | 6.00 (3 nodes) | 250 (3 nodes) | - | - | - | - | - | - | - | - |",
	}
	rows := workloadRows(got)
	if !reflect.DeepEqual(rows, wantRows) {
		t.Errorf("rows\n got %s\nwant %s", strings.Join(rows, "\n     "), strings.Join(wantRows, "\n     "))
	}
	if !strings.Contains(got, "A cell marked \"(N nodes)\" is a cluster's: CPU summed over its\nN nodes") {
		t.Errorf("no legend for the summed cells:\n%s", got)
	}
}

func TestResultsStorageMarkdown(t *testing.T) {
	res := loadResults(t, costFixtures)
	if len(res.Storage) != 9 || len(res.Errors) != 0 {
		t.Fatalf("%d storage benchmarks, errors %q", len(res.Storage), res.Errors)
	}
	got := markdownOf(res, "")
	_, storage, ok := strings.Cut(got, "\n## Storage micro-benchmarks\n\n")
	if !ok {
		t.Fatalf("no storage section:\n%s", got)
	}
	for _, want := range []string{
		"on Oxide Virtual Turin-like Processor, linux/amd64, GOMAXPROCS 2.\n",
		"| package | benchmark | ns/op | MB/s | B/op | allocs/op | other metrics |\n",
		"| storage | BenchmarkAppend/log | 1649936 | 10.05 | 1320 | 22 | - |\n",
		"| storage | BenchmarkAppend/paired | 92390421 | - | 589688 | 12341 | 573.3 log_MB/s, 54.45 pct_of_raw, 1053 raw_MB/s |\n",
		"| storage | BenchmarkRead/batch=256 | 30037 | 34909.48 | 64 | 1 | 1.000 allocs/read, 3.000 batches/read, 18656 ns/read |\n",
		// 10.05 / 483.73 MB/s; 121.6 / 381.2 appends/s.
		"| BenchmarkAppend log/raw MB/s | 0.02 | 54.45 pct_of_raw |\n",
		"| BenchmarkAppendFsync group/per-append appends/s | 0.32 | 3.349 group_speedup |\n",
	} {
		if !strings.Contains(storage, want) {
			t.Errorf("storage section lacks %q:\n%s", want, storage)
		}
	}
	// Read has no pair: no comparison is made up for it.
	if strings.Contains(storage, "| BenchmarkRead ") {
		t.Errorf("comparison for BenchmarkRead:\n%s", storage)
	}
}

func TestResultsStorageFailure(t *testing.T) {
	f := filepath.Join(t.TempDir(), "05-storage-bench.txt")
	out := "# github.com/strait-io/strait/storage\nstorage/x.go:1:1: syntax error\nFAIL\tgithub.com/strait-io/strait/storage [build failed]\n"
	if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	res := loadResults(t, []string{"testdata/report/produce.json", f})
	want := []string{f + ": FAIL\tgithub.com/strait-io/strait/storage [build failed]", f + ": no benchmark results"}
	if !reflect.DeepEqual(res.Errors, want) {
		t.Errorf("errors %q, want %q", res.Errors, want)
	}
	md := markdownOf(res, "")
	if strings.Contains(md, "## Storage") || !strings.Contains(md, "no benchmark results") {
		t.Errorf("markdown:\n%s", md)
	}
}

// TestChartLabels checks every text the chart draws: each rune has a
// glyph, each label lies inside the image and overlaps no other, and the
// title, axis labels, legends, values and names are all there.
func TestChartLabels(t *testing.T) {
	for _, files := range [][]string{reportFixtures, costFixtures, append(append([]string{}, reportFixtures...), costFixtures...)} {
		res := loadResults(t, files)
		res.Commit = "abc1234"
		l := res.layoutChart()
		img := image.Rect(0, 0, l.w, l.h)
		texts := map[string]int{}
		for i, lb := range l.labels {
			texts[lb.text]++
			if m := missingGlyphs(lb.text); len(m) > 0 {
				t.Errorf("label %q: no glyph for %q", lb.text, m)
			}
			if b := lb.bounds(); !b.In(img) {
				t.Errorf("label %q at %v outside the %v image", lb.text, b, img)
			}
			for _, o := range l.labels[i+1:] {
				if lb.bounds().Overlaps(o.bounds()) {
					t.Errorf("label %q at %v overlaps %q at %v", lb.text, lb.bounds(), o.text, o.bounds())
				}
			}
		}
		want := []string{"Benchmark results: ours vs kfake at abc1234", "Throughput, MiB/s (higher is better)", "p99 latency (lower is better)"}
		for _, w := range want {
			if texts[w] != 1 {
				t.Errorf("%v: label %q drawn %d times", files, w, texts[w])
			}
		}
		if texts["ours"] != 2 || texts["kfake"] != 2 {
			t.Errorf("%v: legends ours %d, kfake %d; want one per panel", files, texts["ours"], texts["kfake"])
		}
		for _, r := range res.Rows {
			if texts[r.Workload] == 0 {
				t.Errorf("%v: no name label for %q", files, r.Workload)
			}
			if texts[fmtMiB(r.MiBPerSec)] == 0 {
				t.Errorf("%v: no value label for %q's %.1f MiB/s", files, r.Workload, r.MiBPerSec)
			}
			if r.P99 > 0 && texts[fmtDur(r.P99)] == 0 {
				t.Errorf("%v: no value label for %q's p99 %v", files, r.Workload, r.P99)
			}
		}
	}
}

// The targets section judges issue 29's produce targets from the rows:
// against kfake, against the append limit, and marks a row the reports
// lack as not measured rather than met.
func TestResultsTargetsMarkdown(t *testing.T) {
	res := loadResults(t, reportFixtures)
	md := markdownOf(res, "")
	_, got, ok := strings.Cut(md, "## Targets\n")
	if !ok {
		t.Fatalf("no targets section:\n%s", md)
	}
	got, _, _ = strings.Cut(got, "\n## ")
	for _, want := range []string{
		"| produce acks=1 p=8: throughput >= 2.0x kfake | 2.50x (200.0 vs 80.0 MiB/s) | met |\n",
		"| produce acks=1 p=8: >= 40% of the append limit | 25% (200.0 of 800.0 MiB/s) | NOT met |\n",
		"| produce acks=1 p=1: throughput >= 1.5x kfake | - | not measured |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("targets lack %q:\n%s", want, got)
		}
	}
}

// TestScaleMarkdown: the Scale section of RESULTS.md from a `strait bench
// scale` report: a row per step with Strait's and kfake's figures ("-"
// where one is missing, n/a restart columns for kfake), the targets judged
// at 10,000 partitions, and a step's error.
func TestScaleMarkdown(t *testing.T) {
	res := loadResults(t, []string{"testdata/report/scale.json"})
	got := markdownOf(res, "")
	for _, want := range []string{
		"## Scale\n",
		"of 8 partitions just before it (MiB/s all / p8, and their ratio).\n",
		"| 1000 | 100 | 2.50s | 500ms (520ms) | 60 | 90 | 55 | 1023 / 2023 | 2.00ms / 200µs | 270.0 / 300.0 | 0.90 | 300ms | 40 | 80 | 12 / 1012 | 4.00ms / 300µs | 120.0 / 150.0 | 0.80 |\n",
		"| 10000 | 1000 | 30.0s | 1.50s (1.6s) | 210 | 300 | 180 | 10023 / 11023 | 25.0ms / 300µs | 180.0 / 300.0 | 0.60 | 4.00s | 100 | 200 | 12 / 1012 | 40.0ms / 300µs | - | - |\n",
		"Targets at 10000 partitions:\n",
		"- start-up: 1.50s (target < 5.00s): met\n",
		"- RSS (largest of idle, 1000 connections, restarted): 300 MiB (target < 1 GiB): met\n",
		"- Metadata p99, all topics: 25.0ms (target < 20.0ms): NOT met\n",
		"- Metadata p99, one topic: 300µs (target < 20.0ms): met\n",
		"- produce to all partitions / 8 partitions: 0.60 (target >= 0.7): NOT met\n",
		"- kfake at 10000 partitions: error: bench: produce: 3 records failed, first: context deadline exceeded\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks %q:\n%s", want, got)
		}
	}

	// The text report says the same.
	rep := &Report{Scale: res.Scale}
	var txt bytes.Buffer
	rep.WriteText(&txt)
	for _, want := range []string{
		"strait p=10000 (1000 topics): create 30.0s; start-up 1.50s (logged 1.6s, shutdown 7.00s); idle rss 210 MiB, 10023 fds;",
		"at 10000 partitions produce to all partitions / 8 partitions: 0.60 (target >= 0.7: NOT met)\n",
	} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, txt.String())
		}
	}
}
