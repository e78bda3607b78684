package bench

import (
	"bytes"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
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

func TestResultsMarkdown(t *testing.T) {
	res, err := LoadResults(reportFixtures)
	if err != nil {
		t.Fatal(err)
	}
	res.Commit, res.Date = "abc1234", time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC)
	var md bytes.Buffer
	res.WriteMarkdown(&md, "results.png")
	got := md.String()
	wantRows := []string{
		"| produce acks=1 p=8 | strait | 200.0 | 4.00ms | 80.0 | 16.0ms | append | 800.0 | 2.50 | 0.25 |",
		// consume.json carries no limits: produce.json's apply; sendfile beats TCP.
		"| catch-up p=1 | strait | 400.0 | - | 500.0 | - | sendfile-loopback | 1600.0 | 0.80 | 0.25 |",
		"| cluster produce-acks-all p=8 | strait-3node | 64.0 | 12.5ms | - | - | append | 800.0 | - | 0.08 |",
		// Fixed rate: no limit bounds it.
		"| cluster produce-acks-all-rate p=8 | strait-3node | 30.0 | 8.00ms | - | - | - | - | - | - |",
		// A mirror copy is bounded by the slower of append and the network.
		"| mirror mirror-catch-up p=8 | strait-mirror | 90.0 | - | - | - | append | 800.0 | - | 0.11 |",
	}
	var rows []string
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| workload") {
			rows = append(rows, l)
		}
	}
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
		"- ratio 0.40 (target >= 0.40: met)\n",
		"(30720 rec/s): p50 2.00ms, p99 8.00ms (target < 50.0ms: met)\n",
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
}

func TestResultsChart(t *testing.T) {
	res, err := LoadResults(reportFixtures)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.WriteChart(&buf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	w, h := ChartSize(5)
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h || w != 240 || h != 460 {
		t.Fatalf("chart %v, want %dx%d = 240x460", b, w, h)
	}
	rgba := func(x, y int) color.RGBA {
		r, g, b, a := img.At(x, y).RGBA()
		return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
	}
	// Scale 500 MiB/s: ours 200 MiB/s in the first group is 80 of 200 px
	// high, from y 140 to the axis at 220.
	for _, c := range []struct {
		x, y int
		want color.RGBA
	}{
		{27, 141, colorOurs.c},
		{27, 139, color.RGBA{0xff, 0xff, 0xff, 0xff}},
		// kfake's catch-up, the largest, is full height in the second group.
		{80, 21, colorPeer.c},
		// kfake's produce p99 is the largest: full height in the lower panel.
		{40, 2*chartMargin + chartPanelH + 1, colorPeer.c},
		// The catch-up has no latency: no bar in the lower panel.
		{66, 2*chartMargin + 2*chartPanelH - 2, color.RGBA{0xff, 0xff, 0xff, 0xff}},
	} {
		if got := rgba(c.x, c.y); got != c.want {
			t.Errorf("pixel (%d,%d) = %v, want %v", c.x, c.y, got, c.want)
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
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Width != 240 || cfg.Height != 460 {
		t.Errorf("chart %dx%d, %v; want 240x460", cfg.Width, cfg.Height, err)
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
