package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// defaultPorts are the listeners of `strait serve` without flags: Kafka
// clients, the metadata quorum, metrics.
var defaultPorts = []int{9092, 9093, 9644}

// TestMakeRunContract: `make run` is `./bin/strait serve` with no flags,
// and that is a working single-node Kafka on 127.0.0.1:9092 with its data
// in ./data of the working directory. It only runs when the three default
// ports are free, since it must bind them.
func TestMakeRunContract(t *testing.T) {
	checkMakeRunRecipe(t)
	for _, port := range defaultPorts {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			t.Logf("**************************************************************")
			t.Logf("*** SKIPPING the `make run` contract: port %d is taken (%v)", port, err)
			t.Logf("**************************************************************")
			t.Skipf("default port %d is not free", port)
		}
		l.Close()
	}

	wd := t.TempDir()
	p := startProc(t, wd, "serve")
	ready, err := p.waitReady(20 * time.Second)
	if err != nil {
		if strings.Contains(p.stderr(), "address already in use") {
			// Someone bound a default port between the check and the start.
			t.Skipf("*** SKIPPING the `make run` contract: a default port was taken meanwhile:\n%s", p.stderr())
		}
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"listener.PLAINTEXT":  "127.0.0.1:9092",
		"listener.CONTROLLER": "127.0.0.1:9093",
		"metrics":             "127.0.0.1:9644",
		"nodeID":              "1",
	} {
		if ready[key] != want {
			t.Errorf("ready line: %s=%q, want %q", key, ready[key], want)
		}
	}
	dataDir := filepath.Join(wd, "data")
	if _, err := os.Stat(filepath.Join(dataDir, "meta.properties")); err != nil {
		t.Errorf("./data is not the log directory: %v", err)
	}

	// A client that knows only the default address produces and consumes.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := newClient(t, "127.0.0.1:9092", kgo.AllowAutoTopicCreation(),
		kgo.ConsumeTopics("make-run"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "make-run", Value: []byte("hello")}).FirstErr(); err != nil {
		t.Fatalf("produce to the default broker: %v", err)
	}
	var got []string
	for len(got) == 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("consuming from the default broker: nothing within 20s")
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if len(got) != 1 || got[0] != "hello" {
		t.Errorf("consumed %q, want [hello]", got)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "make-run-0")); err != nil {
		t.Errorf("the auto-created topic's partition is not under ./data: %v", err)
	}

	resp, err := http.Get("http://127.0.0.1:9644/metrics")
	if err != nil {
		t.Fatalf("metrics listener: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(body) == 0 {
		t.Errorf("GET /metrics: %s, %d bytes", resp.Status, len(body))
	}

	cl.Close()
	sent := p.signal(os.Interrupt) // Ctrl-C in the terminal running make run
	code, err := p.wait(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("make run contract: ready after %v, SIGINT exit %d after %v",
		p.readyAfter().Round(time.Millisecond), code, time.Since(sent).Round(time.Millisecond))
	if code != 0 {
		t.Errorf("SIGINT: exit code %d, want 0", code)
	}
	if _, err := os.Stat(filepath.Join(dataDir, cleanShutdownFile)); err != nil {
		t.Errorf("no clean shutdown marker in ./data after SIGINT: %v", err)
	}
}

// checkMakeRunRecipe checks that the Makefile's run target starts the
// binary with no flags (so the defaults above are what `make run` gives).
func checkMakeRunRecipe(t *testing.T) {
	t.Helper()
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Logf("no make on PATH: not checking the Makefile's run recipe")
		return
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(mk, "-n", "-C", root, "run").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n run: %v\n%s", err, out)
	}
	var last string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(l, "make") {
			last = strings.TrimSpace(l)
		}
	}
	if last != "./bin/strait serve" {
		t.Errorf("make run ends with %q, want \"./bin/strait serve\" (no flags)\nmake -n run:\n%s", last, out)
	}
}
