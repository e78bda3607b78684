package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strait-io/strait/broker/config"
)

func runArgs(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// loadArgs parses serve's arguments as runServe does, without serving.
func loadArgs(args ...string) (cfg *config.Config, code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	cfg, _, code = loadServeConfig(args, &out, &errb)
	return cfg, code, out.String(), errb.String()
}

func TestServeNoFlags(t *testing.T) {
	cfg, code, out, errs := loadArgs()
	if cfg == nil || code != 0 || out != "" || errs != "" {
		t.Fatalf("code %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if got := fmt.Sprintf("node.id=%d, listeners=%s, log.dirs=%s", cfg.NodeID, endpoints(cfg.Listeners), strings.Join(cfg.LogDirs, ",")); got !=
		"node.id=1, listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093, log.dirs=./data" {
		t.Fatalf("defaults: %s", got)
	}
}

func TestServeFlags(t *testing.T) {
	dir := t.TempDir()
	props := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(props, []byte("node.id=2\ncontroller.quorum.voters=2@127.0.0.1:9093\nlog.dirs=/from/file\nnum.io.threads=8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		out  string
	}{
		{"config and set", []string{"--config", props, "--set", "log.dirs=/from/set"},
			"node.id=2, listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093, log.dirs=/from/set"},
		{"equals forms", []string{"--config=" + props, "--set=log.dirs=/a,/b"},
			"log.dirs=/a,/b"},
		{"single dash", []string{"-config", props},
			"log.dirs=/from/file"},
		{"repeated set, last wins", []string{"--set", "log.dirs=/x", "--set", "log.dirs=/y"},
			"log.dirs=/y"},
		{"kafka-server-start form", []string{props, "--override", "log.dirs=/o"},
			"node.id=2, listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093, log.dirs=/o"},
		{"set and override mix in order", []string{"--override", "log.dirs=/o", "--set", "log.dirs=/s"},
			"log.dirs=/s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, code, _, _ := loadArgs(tc.args...)
			if cfg == nil || code != 0 {
				t.Fatalf("code %d", code)
			}
			got := fmt.Sprintf("node.id=%d, listeners=%s, log.dirs=%s", cfg.NodeID, endpoints(cfg.Listeners), strings.Join(cfg.LogDirs, ","))
			if !strings.Contains(got, tc.out) {
				t.Fatalf("parsed %q, want it to contain %q", got, tc.out)
			}
		})
	}
	// Kafka keys Strait ignores are named in a warning on stderr.
	_, _, _, errs := loadArgs("--config", props)
	if !strings.Contains(errs, `level=WARN msg="ignoring configs Strait does not implement" keys=num.io.threads`) {
		t.Fatalf("stderr %q", errs)
	}
	// A voter address no controller listener binds loads, with a warning.
	cfg, code, _, errs := loadArgs("--set", "listeners=PLAINTEXT://127.0.0.1:9621,CONTROLLER://127.0.0.1:9631")
	if cfg == nil || code != 0 || !strings.Contains(errs, `level=WARN msg="configuration: controller.quorum.voters gives this node (1) the address 127.0.0.1:9093, but no controller listener binds port 9093`) {
		t.Fatalf("code %d, stderr %q", code, errs)
	}
}

// TestServeRunsAndStops serves on free ports and stops on cancellation
// with exit code 0, logging the ready line with the listener addresses.
func TestServeRunsAndStops(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runContext(ctx, []string{"serve", "--set", "log.dirs=" + dir,
			"--set", "listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
			"--set", "controller.quorum.voters=1@127.0.0.1:0", "--set", "metrics.listener="}, &out, &errb)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errb.String(), "strait broker ready") {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no ready line; stderr:\n%s", errb.String())
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited early with %d; stderr:\n%s", code, errb.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if !strings.Contains(errb.String(), "listener.PLAINTEXT=127.0.0.1:") {
		t.Fatalf("ready line lacks the listener address:\n%s", errb.String())
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit code %d; stderr:\n%s", code, errb.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not stop within 5 s of cancellation")
	}
	if _, err := os.Stat(filepath.Join(dir, ".kafka_cleanshutdown")); err != nil {
		t.Fatalf("no clean shutdown marker after a graceful stop: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServeHelp(t *testing.T) {
	for _, h := range []string{"--help", "-h", "-help"} {
		code, out, errs := runArgs("serve", h)
		if code != 0 || !strings.HasPrefix(out, "usage: strait serve [--config FILE] [--set key=value]...") || errs != "" {
			t.Fatalf("%s: code %d stdout %q stderr %q", h, code, out, errs)
		}
	}
}

// TestServeBadInvocation: exit code 2 and the problem named on stderr.
func TestServeBadInvocation(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.properties")
	for _, tc := range []struct {
		name string
		args []string
		err  string // the first line of stderr
	}{
		{"unknown flag", []string{"serve", "--bogus"}, "strait serve: unknown flag --bogus"},
		{"unknown flag with value", []string{"serve", "--bogus=1"}, "strait serve: unknown flag --bogus"},
		{"set without value", []string{"serve", "--set"}, "strait serve: flag needs an argument: -set"},
		{"set not key=value", []string{"serve", "--set", "num.partitions"}, `strait serve: invalid value "num.partitions" for flag -set: "num.partitions" is not key=value`},
		{"two files", []string{"serve", "a.properties", "b.properties"}, `strait serve: unexpected argument "b.properties"`},
		{"file twice", []string{"serve", "--config", "a.properties", "b.properties"}, `strait serve: config file given twice: --config "a.properties" and "b.properties"`},
		{"missing file", []string{"serve", "--config", missing}, "strait serve: bad configuration:"},
		{"unknown key", []string{"serve", "--set", "num.partition=3"}, "strait serve: bad configuration:"},
		{"bad value", []string{"serve", "--set", "num.partitions=-3"}, "strait serve: bad configuration:"},
		{"add-scram mechanism", []string{"serve", "--add-scram", "SCRAM-SHA-1=[name=a,password=b]"},
			`strait serve: --add-scram "SCRAM-SHA-1=[name=a,password=b]": the mechanism SCRAM-SHA-1 is not supported (SCRAM-SHA-256 or SCRAM-SHA-512)`},
		{"add-scram brackets", []string{"serve", "--add-scram", "SCRAM-SHA-256=name=a,password=b"},
			`strait serve: --add-scram "SCRAM-SHA-256=name=a,password=b": expected the configuration to start with [`},
		{"add-scram no name", []string{"serve", "--add-scram", "SCRAM-SHA-256=[password=b]"},
			`strait serve: --add-scram "SCRAM-SHA-256=[password=b]": name is required`},
		{"add-scram no password", []string{"serve", "--add-scram", "SCRAM-SHA-256=[name=a]"},
			`strait serve: --add-scram "SCRAM-SHA-256=[name=a]": password or saltedpassword is required`},
		{"add-scram salted without salt", []string{"serve", "--add-scram", "SCRAM-SHA-256=[name=a,saltedpassword=AAAA]"},
			`strait serve: --add-scram "SCRAM-SHA-256=[name=a,saltedpassword=AAAA]": saltedpassword needs the salt it was made with`},
		{"add-scram iterations", []string{"serve", "--add-scram", "SCRAM-SHA-512=[name=a,password=b,iterations=100]"},
			`strait serve: --add-scram "SCRAM-SHA-512=[name=a,password=b,iterations=100]": iterations must be within 4096..16384 for SCRAM-SHA-512, not 100`},
		{"add-scram unknown key", []string{"serve", "--add-scram", "SCRAM-SHA-512=[name=a,password=b,colour=red]"},
			`strait serve: --add-scram "SCRAM-SHA-512=[name=a,password=b,colour=red]": unknown SCRAM configurations: colour`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runArgs(tc.args...)
			if code != 2 || out != "" || strings.SplitN(errs, "\n", 2)[0] != tc.err {
				t.Fatalf("code %d stdout %q stderr %q, want 2 and %q", code, out, errs, tc.err)
			}
		})
	}
	// The configuration problems themselves, on the following lines.
	for args, want := range map[string]string{
		"--config " + missing:               missing + ": no such file or directory",
		"--set num.partition=3":             `unknown configuration "num.partition" (did you mean "num.partitions"?)`,
		"--set num.partitions=-3":           "Invalid value -3 for configuration num.partitions: Value must be at least 1",
		"--set node.id=7":                   "the node id 7 must be included in the set of voters controller.quorum.voters=Set(1)",
		"--set listeners=PLAINTEXT://:9092": "controller.listener.names must contain at least one value appearing in the 'listeners' configuration",
	} {
		_, _, errs := runArgs(append([]string{"serve"}, strings.Fields(args)...)...)
		if !strings.Contains(errs, want) {
			t.Errorf("%s: stderr %q does not say %q", args, errs, want)
		}
	}
}
