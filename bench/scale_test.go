package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIScale runs `strait bench scale` end to end at a tiny size (steps
// of 20 and 40 partitions, 20 connections) against nodes of this test
// binary standing in for `strait serve` and kfake beside them: every
// step's figures on both brokers, Strait's restart with every partition's
// end offset kept, and the report's Scale section with its targets.
func TestCLIScale(t *testing.T) {
	data := t.TempDir()
	code, stdout, stderr := runMain(t, "scale", "--serve-cmd", os.Args[0]+" serve",
		"--peer", "kfake", "--peer-exec", os.Args[0]+" kfake-serve",
		"--partitions-steps", "20,40", "--connections", "20", "--metadata-requests", "20", "--prefill-records", "1",
		"--produce-duration", "300ms", "--settle", "100ms", "--data-dir", data, "--keep-data", "--limits=false", "--quiet", "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s\nnode logs:\n%s", code, stdout, stderr, nodeLogs(data))
	}
	var rep Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	s := rep.Scale
	if len(rep.Errors) != 0 || s == nil || len(s.Steps) != 2 || s.Acks != "1" {
		t.Fatalf("errors %q, summary %+v: want two steps and acks=1", rep.Errors, s)
	}
	for i, st := range s.Steps {
		if want := []int{20, 40}[i]; st.Partitions != want || st.Topics != want/10 || st.Strait == nil || st.Peer == nil {
			t.Fatalf("step %d: %+v, want %d partitions in %d topics on both brokers", i, st, want, want/10)
		}
		for _, f := range []*ScaleFigures{st.Strait, st.Peer} {
			if f.Error != "" || f.CreateTook <= 0 || f.IdleRSS <= 0 || f.IdleFDs <= 0 || f.ConnFDs < f.IdleFDs+20 ||
				f.MetadataAll == nil || f.MetadataAll.Count != 20 || f.MetadataOne == nil || f.MetadataOne.Count != 20 ||
				f.Produce == nil || f.Produce.Records == 0 || f.Produce.Errors != 0 || f.P8 == nil || f.P8.Records == 0 || f.Ratio <= 0 {
				t.Errorf("step %d: figures %+v: want every one measured, no error", i, *f)
			}
		}
		f := st.Strait
		if f.StartupTook <= 0 || f.StartupLogged == "" || f.ShutdownTook <= 0 || f.RestartRSS <= 0 || !f.RestartOffsetsOK {
			t.Errorf("step %d: Strait's restart %+v: want start-up, logged start-up, shutdown, RSS and the offsets kept", i, *f)
		}
		if p := st.Peer; p.StartupTook != 0 || p.RestartRSS != 0 {
			t.Errorf("step %d: kfake has restart figures %+v", i, *p)
		}
	}

	file := filepath.Join(t.TempDir(), "60-scale.json")
	if err := os.WriteFile(file, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	res := loadResults(t, []string{file})
	md := markdownOf(res, "")
	for _, want := range []string{"## Scale", "| 20 | 2 | ", "| 40 | 4 | ",
		"Targets at 40 partitions (the targets are set at 10000 partitions; this run's largest step):", "- start-up: "} {
		if !strings.Contains(md, want) {
			t.Errorf("RESULTS.md lacks %q:\n%s", want, md)
		}
	}
}
