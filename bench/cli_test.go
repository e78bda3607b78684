package bench

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"strings"
	"testing"
)

func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = MainContext(ctxT(t), args, &o, &e)
	return code, o.String(), e.String()
}

func TestCLIFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string // in stderr
	}{
		{[]string{}, 2, "usage: strait bench"},
		{[]string{"bogus"}, 2, `unknown workload "bogus"`},
		{[]string{"produce", "--nope"}, 2, "unknown flag --nope"},
		{[]string{"consume", "--peer", "kfake", "-frobnicate=1"}, 2, "unknown flag --frobnicate"},
		{[]string{"e2e", "--target", "x:1", "--tail-duration", "1s"}, 2, "unknown flag --tail-duration"},
		{[]string{"limits", "--target", "x:1"}, 2, "unknown flag --target"},
		{[]string{"produce", "--records", "ten"}, 2, `invalid value "ten" for flag -records`},
		{[]string{"produce", "--record-size", "1 parsec"}, 2, "bad size"},
		{[]string{"produce"}, 2, "nothing to run against"},
		{[]string{"produce", "--peer", "redpanda"}, 2, `--peer "redpanda"`},
		{[]string{"produce", "--peer", "kfake", "--acks", "2"}, 2, `acks "2"`},
		{[]string{"produce", "--peer", "kfake", "--compression", "brotli"}, 2, `compression "brotli"`},
		{[]string{"produce", "--peer", "kfake", "--transactional", "--acks", "1"}, 2, "transactional producer needs acks=all"},
		{[]string{"produce", "--peer", "kfake", "--transactional", "--rate", "10"}, 2, "transactional run takes no rate"},
		{[]string{"produce", "--peer", "kfake", "--transactional", "--txn-records", "0"}, 2, "--txn-records 0 < 1"},
		{[]string{"produce", "--target-cmd", "strait serve"}, 2, "--target-cmd needs --target"},
		{[]string{"produce", "--target", "x:1", "--profile", "d"}, 2, "--profile needs --target-cmd"},
		{[]string{"produce", "--peer", "kfake", "--profile-url", "http://x:1"}, 2, "--profile-url needs --profile DIR"},
		{[]string{"produce", "--peer", "kfake", "--profile", "d", "--profile-window", "500ms"}, 2, "--profile-window 500ms < 1s"},
		{[]string{"produce", "--peer", "kfake", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"produce", "--peer", "kfake", "--rounds", "0"}, 2, "--rounds 0 < 1"},
		{[]string{"cluster", "--acks", "1"}, 2, "unknown flag --acks"},
		{[]string{"cluster", "--target", "x:1"}, 2, "unknown flag --target"},
		{[]string{"cluster", "--nodes", "1"}, 2, "cluster of 1 nodes: want at least 2"},
		{[]string{"cluster", "--min-insync-replicas", "4"}, 2, "min.insync.replicas 4 outside 1..3"},
		{[]string{"cluster", "--latency-fraction", "1.5"}, 2, "latency fraction 1.5"},
		{[]string{"cluster", "--latency-duration", "0s"}, 2, "latency duration > 0"},
		{[]string{"cluster", "--set", "novalue"}, 2, `"novalue" is not key=value`},
	} {
		code, _, stderr := runMain(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d stderr %q, want exit %d naming %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

func TestCLIHelp(t *testing.T) {
	code, stdout, _ := runMain(t, "produce", "-h")
	if code != 0 || !strings.Contains(stdout, "-record-size") || !strings.Contains(stdout, "-peer-exec") {
		t.Fatalf("produce -h: exit %d, stdout %q", code, stdout)
	}
	if strings.Contains(runHelp(t), "kfake-serve") {
		t.Fatal("help lists the hidden kfake-serve")
	}
}

func runHelp(t *testing.T) string {
	_, stdout, _ := runMain(t, "help")
	return stdout
}

// TestCLIPeerProgramMissing: kfake is not in the strait binary; without
// the kfake-serve program beside it or on PATH, --peer kfake says how to
// build it instead of failing obscurely.
func TestCLIPeerProgramMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	code, stdout, stderr := runMain(t, "produce", "--peer", "kfake", "--records", "10", "--limits=false", "--quiet")
	if code == 0 || !strings.Contains(stdout, "no kfake-serve program") || !strings.Contains(stdout, "make bench-peer") {
		t.Fatalf("exit %d, stdout %q stderr %q: want a failure saying how to build kfake-serve", code, stdout, stderr)
	}
}

// TestCLIProduceJSON runs produce against a kfake child and checks the
// JSON report.
func TestCLIProduceJSON(t *testing.T) {
	code, stdout, stderr := runMain(t, "produce", "--peer", "kfake", "--peer-exec", os.Args[0]+" kfake-serve",
		"--records", "300", "--partitions", "2", "--limits=false", "--quiet", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stderr != "" {
		t.Errorf("--quiet wrote to stderr: %q", stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	if len(rep.Results) != 1 || rep.Results[0].Records != 300 || rep.Results[0].Broker != "kfake" || rep.Results[0].Errors != 0 {
		t.Fatalf("results %+v, want 300 records from kfake", rep.Results)
	}
	if rep.Config["record-size"] != "1KiB" || rep.Config["acks"] != "all" || len(rep.Errors) != 0 {
		t.Fatalf("config %v errors %v", rep.Config, rep.Errors)
	}
}

// TestCLIRounds: with --rounds 3 the target and the kfake child each run
// the workload three times, alternating; the report's rows carry every
// round's figures and are the median round (rounds.go). The target keeps
// its data across rounds, as a strait node does, yet every round
// prefills: each has a topic of its own.
func TestCLIRounds(t *testing.T) {
	target := startKfake(t)
	code, stdout, stderr := runMain(t, "consume", "--target", target.Addrs[0], "--target-name", "stand-in",
		"--peer", "kfake", "--peer-exec", os.Args[0]+" kfake-serve", "--rounds", "3",
		"--bytes", "300KiB", "--partitions", "2", "--tail-duration", "0", "--limits=false", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stderr, "round "); n != 3 || !strings.Contains(stderr, "round 3 of 3") {
		t.Errorf("progress names %d rounds, want 3: %q", n, stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	if len(rep.Results) != 4 || len(rep.Ratios) != 2 || rep.Config["topic"] != "strait-bench" {
		t.Fatalf("%d results, %d ratios, topic %q: want prefill and catch-up for each broker, their ratios, the topic as given: %+v",
			len(rep.Results), len(rep.Ratios), rep.Config["topic"], rep.Results)
	}
	for _, r := range rep.Results {
		if len(r.Rounds) != 3 || r.Records != 300 {
			t.Fatalf("%s %s: %d rounds of %d records, want 3 of 300", r.Broker, r.Workload, len(r.Rounds), r.Records)
		}
		var lower, higher int
		for _, f := range r.Rounds {
			switch {
			case f.MiBPerSec < r.MiBPerSec:
				lower++
			case f.MiBPerSec > r.MiBPerSec:
				higher++
			}
		}
		if lower > 1 || higher > 1 {
			t.Errorf("%s: %.2f MiB/s is not the median of its rounds %+v", r.Broker, r.MiBPerSec, r.Rounds)
		}
	}
}

// TestCLISideBySide runs the same workload against a "target" (an
// in-process kfake standing in for strait) and the kfake child, with the
// limits probed first: the shape `strait bench produce --peer kfake` prints.
func TestCLISideBySide(t *testing.T) {
	target := startKfake(t)
	code, stdout, stderr := runMain(t, "consume", "--target", target.Addrs[0], "--target-name", "stand-in",
		"--peer", "kfake", "--peer-exec", os.Args[0]+" kfake-serve",
		"--bytes", "512KiB", "--tail-duration", "600ms", "--tail-rate", "1000",
		"--limits-time", "50ms", "--limits-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	for _, want := range []string{
		"strait bench consume: ", "record-size=1KiB",
		"machine limits", "append+fsync", "sendfile-loopback",
		"prefill", "catch-up", "tail",
		"ratio stand-in/kfake prefill: throughput", "ratio stand-in/kfake catch-up: throughput",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "\r") {
		t.Errorf("no progress line on stderr: %q", stderr)
	}
	// The catch-up rows: 512 records from each broker.
	rows := 0
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && f[0] == "catch-up" {
			rows++
			if f[2] != "512" {
				t.Errorf("catch-up row %q: want 512 records", line)
			}
			if f[1] == "kfake" && f[9] == "-" {
				t.Errorf("kfake child row has no cost: %q", line)
			}
		}
	}
	if rows != 2 {
		t.Errorf("%d catch-up rows, want 2:\n%s", rows, stdout)
	}
}

func TestCLIE2E(t *testing.T) {
	code, stdout, stderr := runMain(t, "e2e", "--peer", "kfake", "--peer-exec", os.Args[0]+" kfake-serve",
		"--rate", "1000", "--records", "200", "--limits=false", "--quiet", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if r := rep.Results[0]; r.Records != 200 || r.Produced != 200 || r.Latency == nil || r.Latency.Count != 200 {
		t.Fatalf("%+v, want 200 produced, read and timed", r)
	}
}

func TestCLILimits(t *testing.T) {
	code, stdout, stderr := runMain(t, "limits", "--time", "30ms", "--dir", t.TempDir(), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Limits == nil || len(rep.Limits.Probes) != 6 {
		t.Fatalf("limits %+v, want 6 probes", rep.Limits)
	}
}

func TestSizeFlag(t *testing.T) {
	for in, want := range map[string]int64{"16384": 16384, "16KiB": 16384, "1gib": 1 << 30, "1.5m": 3 << 19, "2 MB": 2 << 20, "7b": 7} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := parseSize("-1k"); err == nil {
		t.Error("negative size accepted")
	}
	if got := formatSize(16384); got != "16KiB" {
		t.Errorf("formatSize(16384) = %q", got)
	}
}

func TestCLIUnreachableTarget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	code, stdout, _ := runMain(t, "produce", "--target", addr, "--records", "1", "--limits=false", "--quiet", "--json")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var rep Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 0 || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], addr) {
		t.Fatalf("results %+v errors %q, want no result and one error naming %s", rep.Results, rep.Errors, addr)
	}
}
