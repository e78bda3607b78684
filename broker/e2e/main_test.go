package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// straitBin is the binary TestMain built for this run.
var straitBin string

// TestMain builds the strait binary once for every test in the package.
// It uses the go tool of the toolchain running the tests: go test puts
// $GOROOT/bin first on PATH, and sets GOROOT when it was set for it.
func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	flag.Parse()
	dir, err := os.MkdirTemp("", "strait-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	straitBin = filepath.Join(dir, "strait")
	started := time.Now()
	// Built without -race even when the tests run with it: the broker is
	// measured (start in < 1 s) and loaded as users run it; its races are
	// the in-process tests' job.
	cmd := exec.Command(goTool(), "build", "-o", straitBin, "github.com/strait-io/strait/cmd/strait")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building strait: %v\n", err)
		return 1
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "e2e: built %s in %v\n", straitBin, time.Since(started).Round(time.Millisecond))
	}
	return m.Run()
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
