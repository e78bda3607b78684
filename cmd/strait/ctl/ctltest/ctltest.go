// Package ctltest runs the `strait` binary's client commands in tests, as
// a user runs them: the binary built once per test process, against a
// 1-node Strait and against franz-go's kfake (issue 28: every subcommand
// works against any Kafka-compatible cluster, not only Strait).
package ctltest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/strait-io/strait/broker/brokertest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Main runs a test package's tests and removes the binary afterwards:
// call it from TestMain (os.Exit(ctltest.Main(m))).
func Main(m *testing.M) int {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	return code
}

// Binary is the strait binary, built on first use (without -race, as
// users run it) into a temporary directory Main removes.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "strait-ctl-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "strait")
		cmd := exec.Command(goTool(), "build", "-o", binPath, "github.com/strait-io/strait/cmd/strait")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("building strait: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

// Target is a cluster the commands run against.
type Target struct {
	Name    string // "strait" or "kfake"
	Brokers string
	// Strait is the broker when Name is "strait".
	Strait *brokertest.Broker
	// Kfake is the cluster when Name is "kfake".
	Kfake *kfake.Cluster
}

// Strait starts a 1-node Strait for the test.
func Strait(t testing.TB, opts ...brokertest.Option) Target {
	t.Helper()
	b := brokertest.Start(t, opts...)
	return Target{Name: "strait", Brokers: b.Addr(), Strait: b}
}

// Kfake starts a 1-broker kfake for the test.
func Kfake(t testing.TB, opts ...kfake.Opt) Target {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return Target{Name: "kfake", Brokers: strings.Join(c.ListenAddrs(), ","), Kfake: c}
}

// Targets are both: run a test's body against each with t.Run(tg.Name).
func Targets(t testing.TB) []Target {
	t.Helper()
	return []Target{Strait(t), Kfake(t)}
}

// Result is one run of the binary.
type Result struct {
	Args           []string
	Code           int
	Stdout, Stderr string
}

func (r Result) String() string {
	return fmt.Sprintf("strait %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.Args, " "), r.Code, r.Stdout, r.Stderr)
}

// Run runs `strait args... --brokers <target>` with stdin (may be empty)
// and an environment with no profile file (HOME and XDG_CONFIG_HOME point
// to an empty directory), with a 60 s limit.
func Run(t testing.TB, tg Target, stdin string, args ...string) Result {
	t.Helper()
	if tg.Brokers != "" {
		args = append(append([]string{}, args...), "--brokers", tg.Brokers)
	}
	return RunEnv(t, nil, stdin, args...)
}

// RunEnv runs `strait args...` with extra environment variables.
func RunEnv(t testing.TB, env []string, stdin string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, Binary(t), args...)
	cmd.Env = append(Environ(t), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := Result{Args: args, Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	default:
		t.Fatalf("strait %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// Must is Run that fails the test unless the exit code is 0.
func Must(t testing.TB, tg Target, stdin string, args ...string) Result {
	t.Helper()
	r := Run(t, tg, stdin, args...)
	if r.Code != 0 {
		t.Fatalf("%s", r)
	}
	return r
}
