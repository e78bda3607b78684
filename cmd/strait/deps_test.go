package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLeavesOutTestModules: the modules go.mod lists as for tests and
// the benchmark's peer only (issue 26) must not be linked into the strait
// binary; kfake in particular is a whole test broker.
func TestBinaryLeavesOutTestModules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	testOnly := []string{
		"github.com/twmb/franz-go/pkg/kfake",
		"github.com/IBM/sarama",
		"github.com/segmentio/kafka-go",
		"github.com/cockroachdb/datadriven",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, m := range testOnly {
			if dep == m || strings.HasPrefix(dep, m+"/") {
				t.Errorf("the strait binary links %s (module %s, for tests only)", dep, m)
			}
		}
	}
}
