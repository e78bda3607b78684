package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runArgs(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestServeNoFlags(t *testing.T) {
	code, out, errs := runArgs("serve")
	want := "strait: no broker yet (node.id=1, listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093, log.dirs=./data)\n"
	if code != 0 || out != want || errs != "" {
		t.Fatalf("code %d\nstdout %q\nstderr %q", code, out, errs)
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
		{"config and set", []string{"serve", "--config", props, "--set", "log.dirs=/from/set"},
			"node.id=2, listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093, log.dirs=/from/set"},
		{"equals forms", []string{"serve", "--config=" + props, "--set=log.dirs=/a,/b"},
			"log.dirs=/a,/b"},
		{"single dash", []string{"serve", "-config", props},
			"log.dirs=/from/file"},
		{"repeated set, last wins", []string{"serve", "--set", "log.dirs=/x", "--set", "log.dirs=/y"},
			"log.dirs=/y"},
		{"kafka-server-start form", []string{"serve", props, "--override", "log.dirs=/o"},
			"node.id=2, listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093, log.dirs=/o"},
		{"set and override mix in order", []string{"serve", "--override", "log.dirs=/o", "--set", "log.dirs=/s"},
			"log.dirs=/s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, _ := runArgs(tc.args...)
			if code != 0 || !strings.Contains(out, tc.out) {
				t.Fatalf("code %d stdout %q, want it to contain %q", code, out, tc.out)
			}
		})
	}
	// Kafka keys Strait ignores are named in a warning on stderr.
	_, _, errs := runArgs("serve", "--config", props)
	if !strings.Contains(errs, `level=WARN msg="ignoring configs Strait does not implement" keys=num.io.threads`) {
		t.Fatalf("stderr %q", errs)
	}
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
