package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIProduceProfiles runs `strait bench produce --profile DIR` against
// a strait broker (this test binary standing in for `strait serve`, the
// bench turning its pprof on) and a kfake child (--pprof): each broker's
// CPU, allocs and heap profiles are written under DIR and named in the
// report, each a gzipped profile whose references resolve.
func TestCLIProduceProfiles(t *testing.T) {
	// Both brokers (children, which inherit the environment) record every
	// allocation: at the default rate, one sample per 512 KiB, a workload
	// this small can go unsampled now that Strait's request frames come
	// from its buffer pool, and the alloc_objects check below then fails
	// on a profile that is right.
	t.Setenv("GODEBUG", "memprofilerate=1")
	addr, serve := straitServeCmd(t)
	dir := filepath.Join(t.TempDir(), "profiles")
	code, stdout, stderr := runMain(t, "produce", "--target", addr, "--target-cmd", serve,
		"--peer", "kfake", "--peer-exec", os.Args[0]+" kfake-serve", "--profile", dir, "--profile-window", "1s",
		"--records", "2000", "--limits=false", "--quiet", "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, tail(stderr, 4000))
	}
	var rep Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	if len(rep.Results) != 2 || len(rep.Errors) != 0 {
		t.Fatalf("results %+v, errors %q: want strait's and kfake's", rep.Results, rep.Errors)
	}
	for _, r := range rep.Results {
		p := r.Profiles
		if p == nil {
			t.Errorf("%s: no profiles in the report", r.Broker)
			continue
		}
		for kind, path := range map[string]string{"cpu": p.CPU, "allocs": p.Allocs, "heap": p.Heap} {
			if want := filepath.Join(dir, "produce-"+r.Broker+"-"+kind+".pb.gz"); path != want {
				t.Errorf("%s %s profile: %q, want %q", r.Broker, kind, path, want)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s %s profile: %v", r.Broker, kind, err)
				continue
			}
			if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) || len(b) < 100 {
				t.Errorf("%s %s profile: %d bytes starting %q, want a gzipped profile", r.Broker, kind, len(b), b[:min(len(b), 8)])
				continue
			}
			profileCheck(t, b)
		}
		// The workload allocated: its allocs profile counts objects.
		if got := profileCheck(t, readFile(t, p.Allocs)); len(got) != 4 || got[0] <= 0 {
			t.Errorf("%s allocs profile totals %v: want alloc_objects > 0", r.Broker, got)
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReportTextNamesProfiles: the text report says where each result's
// profiles are.
func TestReportTextNamesProfiles(t *testing.T) {
	rep := Report{Results: []Result{
		{Workload: "produce", Broker: "strait", Profiles: &Profiles{CPU: "d/c.pb.gz", Allocs: "d/a.pb.gz", Heap: "d/h.pb.gz"}},
		{Workload: "produce", Broker: "kfake"},
	}}
	var b strings.Builder
	rep.WriteText(&b)
	if want := "produce strait profiles: d/c.pb.gz d/a.pb.gz d/h.pb.gz\n"; !strings.Contains(b.String(), want) {
		t.Fatalf("text report lacks %q:\n%s", want, b.String())
	}
	if strings.Count(b.String(), "profiles:") != 1 {
		t.Fatalf("a result without profiles got a line:\n%s", b.String())
	}
}
