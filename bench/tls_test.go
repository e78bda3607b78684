package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestCLITLSOnStraitAndKfake runs produce and consume with --tls as `make
// bench` does: a strait broker (this test binary standing in for `strait
// serve`) whose only client listener is SSL, then kfake in a child process
// given the run's keystore. Neither broker answers a plaintext client and
// neither client of the bench could handshake with a plaintext broker, so
// a run that moves records went over TLS on both sides.
func TestCLITLSOnStraitAndKfake(t *testing.T) {
	for _, tc := range []struct {
		workload string
		args     []string
	}{
		{"produce", []string{"--acks", "1", "--bytes", "1MiB"}},
		{"catch-up", []string{"--bytes", "1MiB", "--tail-duration", "0"}},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			ports, err := freePorts(2)
			if err != nil {
				t.Fatal(err)
			}
			addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
			serve := fmt.Sprintf("%s serve --set log.dirs=%s --set listeners=SSL://%s,CONTROLLER://127.0.0.1:%d "+
				"--set listener.security.protocol.map=SSL:SSL,CONTROLLER:PLAINTEXT --set inter.broker.listener.name=SSL "+
				"--set controller.quorum.voters=1@127.0.0.1:%d --set metrics.listener=",
				os.Args[0], t.TempDir(), addr, ports[1], ports[1])
			cmd := "produce"
			if tc.workload == "catch-up" {
				cmd = "consume"
			}
			args := append([]string{cmd, "--tls", "--target", addr, "--target-cmd", serve,
				"--peer", "kfake", "--peer-exec", os.Args[0] + " kfake-serve",
				"--partitions", "2", "--limits=false", "--quiet", "--json"}, tc.args...)
			code, stdout, stderr := runMain(t, args...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, tail(stderr, 4000))
			}
			var rep Report
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("%v in %s", err, stdout)
			}
			if rep.Config["tls"] != "true" || len(rep.Errors) != 0 {
				t.Fatalf("config %v errors %q: want tls=true and no errors", rep.Config, rep.Errors)
			}
			seen := map[string]bool{}
			for _, r := range rep.Results {
				if r.Workload != tc.workload {
					continue
				}
				seen[r.Broker] = true
				if r.MiBPerSec <= 0 || r.Bytes != 1<<20 || r.Errors != 0 {
					t.Errorf("%s %s: %+v: want 1 MiB moved, no errors", r.Broker, r.Workload, r)
				}
				if r.Cost == nil || r.Cost.CPUSeconds < 0 {
					t.Errorf("%s %s: cost %+v: want its process measured", r.Broker, r.Workload, r.Cost)
				}
			}
			if !seen["strait"] || !seen["kfake"] {
				t.Fatalf("%s results of %v, want strait's and kfake's: %+v", tc.workload, seen, rep.Results)
			}
		})
	}
}

// TestCLITLSNeedsTargetCmd: the run makes the certificate, so a broker it
// does not start cannot serve it.
func TestCLITLSNeedsTargetCmd(t *testing.T) {
	code, _, stderr := runMain(t, "produce", "--tls", "--target", "127.0.0.1:1", "--limits=false")
	if code != 2 || !strings.Contains(stderr, "--tls needs --target-cmd") {
		t.Fatalf("exit %d, stderr %q: want 2 and the reason", code, stderr)
	}
}

// TestResultsTLS: a --tls run is a row of its own, named with "tls", and
// the TLS section sets it beside its plaintext twin with the ratios of
// throughput and CPU per GiB, ours and kfake's.
func TestResultsTLS(t *testing.T) {
	result := func(broker string, mibs, cpuPerGiB float64) Result {
		return Result{Workload: "catch-up", Broker: broker, Bytes: 1 << 30, MiBPerSec: mibs,
			Cost: &BrokerCost{PID: 1, CPUSecPerGiB: cpuPerGiB}}
	}
	report := func(tls bool, results ...Result) *MirrorReport {
		cfg := map[string]any{"partitions": "8"}
		if tls {
			cfg["tls"] = "true"
		}
		return &MirrorReport{Report: Report{Command: "consume", Config: cfg, Results: results}}
	}
	res := &Results{}
	res.add(report(false, result("strait", 1000, 0.25), result("kfake", 500, 1.0)), "plain.json")
	res.add(report(true, result("strait", 400, 1.0), result("kfake", 400, 1.5)), "tls.json")
	if len(res.Rows) != 2 || res.Rows[1].Workload != "catch-up p=8 tls" || !res.Rows[1].TLS || res.Rows[0].TLS {
		t.Fatalf("rows %+v: want catch-up p=8 and catch-up p=8 tls", res.Rows)
	}
	md := markdownOf(res, "")
	want := "| catch-up p=8 tls | strait | 1000.0 | 400.0 | 0.40 | 0.25 | 1.00 | 4.00 | 500.0 | 400.0 | 0.80 | 1.00 | 1.50 | 1.50 |\n"
	if !strings.Contains(md, "\n## TLS\n") || !strings.Contains(md, want) {
		t.Fatalf("markdown lacks the TLS section's row\n%s\n%s", want, md)
	}

	// Without a plaintext twin there is nothing to set beside: no section.
	res = &Results{}
	res.add(report(true, result("strait", 400, 1.0)), "tls.json")
	md = markdownOf(res, "")
	if strings.Contains(md, "## TLS") {
		t.Fatalf("a TLS section without a plaintext twin:\n%s", md)
	}
}
