package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDecommissionUnderLoad is issue 32's done-when on four strait
// processes: while an idempotent acks=all producer counts what it was
// told, `strait cluster decommission 4` moves every replica off node 4
// (KIP-455 reassignments, waiting until done), node 4 is stopped and then
// unregistered; every acknowledged record is in the log exactly once.
func TestDecommissionUnderLoad(t *testing.T) {
	const (
		topic         = "decommission"
		numPartitions = 8
		perPhase      = 500 // records acknowledged in each phase
		// prefill records of about 1 KiB are acknowledged before the
		// move, so it has data to copy.
		prefill = 10000
	)
	nodes := newClusterNodes(t, 4,
		"default.replication.factor=3",
		"min.insync.replicas=2",
		"offsets.topic.replication.factor=3",
		"broker.session.timeout.ms=3000",
		"broker.heartbeat.interval.ms=300",
	)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	for _, cn := range nodes {
		cn.launch()
	}
	for _, cn := range nodes {
		cn.awaitReady(30 * time.Second)
	}
	first3 := clusterAddrs(nodes[:3])
	adm := newAdmin(t, first3[0])
	if resp, err := adm.CreateTopic(ctx, numPartitions, 3, nil, topic); err != nil || resp.Err != nil {
		t.Fatalf("create %s: %v %v", topic, err, resp.Err)
	}
	onNode4 := func() []string {
		m, err := nodes[0].metadata(ctx)
		if err != nil {
			return []string{err.Error()}
		}
		var out []string
		for _, p := range partitions(m) {
			if slices.Contains(p.replicas, 4) {
				out = append(out, fmt.Sprintf("%s/%d", p.topic, p.partition))
			}
		}
		return out
	}
	waitUntil(t, 20*time.Second, "node 4 to hold replicas of "+topic, func() (bool, string) {
		on := onNode4()
		return len(on) > 0, fmt.Sprint(on)
	})
	t.Logf("replicas on node 4 before: %v", onNode4())

	led := newLedger(topic)
	led.pad = strings.Repeat("x", 1000)
	prod := newClient(t, first3[0], kgo.SeedBrokers(first3...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordDeliveryTimeout(60*time.Second), kgo.ProducerBatchCompression(kgo.NoCompression()))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			led.produce(ctx, prod, i)
			if i%10 == 9 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	led.waitAcked(t, prefill, 60*time.Second)
	onDisk := dirBytes(t, nodes[3].logDir, topic+"-")

	// The operator's command, as a user runs it.
	cmd := exec.CommandContext(ctx, straitBin, "cluster", "decommission", "4", "--json", "--timeout", "90s",
		"--brokers", strings.Join(first3, ","))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	began := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("strait cluster decommission 4: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	var res struct {
		Moves    []json.RawMessage `json:"moves"`
		Complete bool              `json:"complete"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || !res.Complete || len(res.Moves) == 0 {
		t.Fatalf("decommission output %q (%v)\nstderr:\n%s", out.String(), err, errb.String())
	}
	took := time.Since(began)
	t.Logf("decommission moved %d partitions (%.1f MiB on node 4 when it began) in %v, %.1f MiB/s; progress:\n%s",
		len(res.Moves), float64(onDisk)/(1<<20), took.Round(time.Millisecond), float64(onDisk)/(1<<20)/took.Seconds(), errb.String())
	if on := onNode4(); len(on) != 0 {
		t.Fatalf("replicas left on node 4 after decommission: %v", on)
	}
	led.waitAcked(t, led.nacked.Load()+perPhase, 30*time.Second)

	// Node 4 stops; the producer goes on without noticing.
	if code, took := nodes[3].term(); code != 0 {
		t.Fatalf("node 4 exited %d after %v", code, took)
	}
	led.waitAcked(t, led.nacked.Load()+perPhase, 30*time.Second)
	unreg := exec.CommandContext(ctx, straitBin, "cluster", "decommission", "4", "--unregister", "--brokers", strings.Join(first3, ","))
	if b, err := unreg.CombinedOutput(); err != nil || !strings.Contains(string(b), "unregistered") {
		t.Fatalf("decommission 4 --unregister: %v\n%s", err, b)
	}
	waitUntil(t, 10*time.Second, "node 1 to list brokers 1-3 only", func() (bool, string) {
		m, err := nodes[0].metadata(ctx)
		if err != nil {
			return false, err.Error()
		}
		ids := brokerIDs(m)
		return len(ids) == 3 && !strings.HasPrefix(ids[len(ids)-1], "4@"), fmt.Sprint(ids)
	})

	close(stop)
	<-done
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	log, ends := readAll(t, first3[0], topic)
	a, problems := check(led.snapshot(), log, ends)
	errs := led.errors()
	t.Logf("decommission under load: %s; %d produce errors %s", a, len(errs), summarizeErrs(errs))
	for _, p := range problems {
		t.Error(p)
	}
	if a.lost != 0 || a.duplicates != 0 || a.acked < 3*perPhase || len(errs) != 0 {
		t.Fatalf("lost %d, duplicated %d of %d acknowledged; %d produce errors", a.lost, a.duplicates, a.acked, len(errs))
	}
}

// dirBytes is the size of the files under the directories of dir whose
// names start with prefix (a topic's partition directories).
func dirBytes(t *testing.T, dir, prefix string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		err := filepath.WalkDir(filepath.Join(dir, e.Name()), func(_ string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err == nil && strings.HasSuffix(d.Name(), ".log") {
				total += info.Size()
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return total
}
