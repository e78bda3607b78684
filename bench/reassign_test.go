package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCLIReassign runs `strait bench reassign` end to end at a tiny size on
// four nodes of this test binary standing in for `strait serve`: the three
// produce phases (steady, during the move to node 4, during the throttled
// move back), the moves completed, and the report's Reassignment section
// beside them with kfake n/a.
func TestCLIReassign(t *testing.T) {
	data := t.TempDir()
	code, stdout, stderr := runMain(t, "reassign", "--serve-cmd", os.Args[0]+" serve",
		"--partitions", "2", "--move-partitions", "3", "--move-bytes", "3MiB", "--throttle", "1MiB",
		"--duration", "400ms", "--data-dir", data, "--keep-data", "--limits=false", "--quiet", "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s\nnode logs:\n%s", code, stdout, stderr, nodeLogs(data))
	}
	var rep Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	if len(rep.Errors) != 0 || len(rep.Results) != 3 || rep.Reassign == nil {
		t.Fatalf("errors %q, %d results, summary %v: want 3 results and a summary", rep.Errors, len(rep.Results), rep.Reassign)
	}
	for i, want := range []string{phaseSteady, phaseMoving, phaseMovingThrottle} {
		r := rep.Results[i]
		if r.Workload != want || r.Broker != "strait-4node" || r.Errors != 0 || r.Records == 0 || len(r.NodeCosts) != 4 {
			t.Errorf("result %d: %s on %s, %d records, %d errors, %d node costs; want %s on strait-4node, records, no errors, 4 node costs",
				i, r.Workload, r.Broker, r.Records, r.Errors, len(r.NodeCosts), want)
		}
	}
	s := rep.Reassign
	t.Logf("%+v", *s)
	if s.MoveBytes < 3<<20 || s.MoveTook <= 0 || s.ThrottledMoveTook <= 0 || s.SteadyMiBPerSec <= 0 ||
		s.MovingMiBPerSec <= 0 || s.ThrottledMiBPerSec <= 0 || s.Throttle != 1<<20 || s.Nodes != 4 {
		t.Errorf("summary %+v: want every figure", s)
	}
	// The move back must have been waited for (asking
	// ListPartitionReassignments about no partitions once ended it in
	// about 5 ms) and throttled: 3 MiB through one leader at 1 MiB/s
	// takes about 2 s past the first quota window. When the throttles were
	// set from kadm's cached metadata (the replicas from before the first
	// move), the leader of the move back got no rate and the move ended in
	// about 250 ms in some runs.
	if s.ThrottledMoveTook < time.Second {
		t.Errorf("the throttled move of %d bytes at %d bytes/s took %v", s.MoveBytes, s.Throttle, s.ThrottledMoveTook)
	}

	// RESULTS.md: the rows and the section.
	file := filepath.Join(t.TempDir(), "50-reassign.json")
	if err := os.WriteFile(file, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	res := loadResults(t, []string{file})
	md := markdownOf(res, "")
	for _, want := range []string{"| reassign produce-steady p=2 | strait-4node |", "| reassign produce-during-throttled-move p=2 |",
		"## Reassignment", "| during the throttled move | ", "kfake cannot reassign partitions: n/a"} {
		if !strings.Contains(md, want) {
			t.Errorf("RESULTS.md lacks %q:\n%s", want, md)
		}
	}
}
