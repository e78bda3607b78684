package ctltest

import (
	"os"
	"strings"
	"testing"
)

// TestBinaryRuns: the binary builds and answers --help and an unknown
// command as a user sees them.
func TestBinaryRuns(t *testing.T) {
	if r := Run(t, Target{}, "", "--help"); r.Code != 0 || !strings.Contains(r.Stdout, "usage: strait") {
		t.Fatalf("%s", r)
	}
	if r := Run(t, Target{}, "", "nosuch"); r.Code != 2 || !strings.Contains(r.Stderr, `unknown command "nosuch"`) {
		t.Fatalf("%s", r)
	}
}

func TestMain(m *testing.M) { os.Exit(Main(m)) }
