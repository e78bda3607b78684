package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
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
// unregistered; every acknowledged record is in the log exactly once. The
// move (about 60 MiB off node 4, 20 MiB to each other broker) is throttled
// at 4 MiB/s (--throttle, KIP-73): each destination broker's new replica
// grows at the throttle within 10% once the quota's first window has
// passed, for about 4 s.
func TestDecommissionUnderLoad(t *testing.T) {
	decommissionUnderLoad(t, 60000, 4<<20)
}

// decommissionUnderLoad runs the test with prefill records of about 1 KiB
// acknowledged before the move, so it has data to copy, and the moves
// throttled at throttle bytes/s (--throttle).
func decommissionUnderLoad(t *testing.T, prefill int, throttle float64) {
	const (
		topic    = "decommission"
		perPhase = 300 // records acknowledged in each phase
		// After the prefill the producer slows to loadInterval per
		// record (about 100 KiB/s), below the throttle, so the moved
		// replicas catch up. It also costs the move: a leader's quota
		// counts what it sends every follower of a throttled
		// partition, in sync or not (Kafka's
		// KafkaApis.sizeOfThrottledPartitions), and each leader here
		// sends its partition's new records to two in-sync followers,
		// about 70 KiB/s, 2% of a 4 MiB/s throttle (at 5 ms per
		// record and a 2 MiB/s throttle the moves ran at 91-92%). The
		// leader also counts the partial batch that ends a fetch,
		// which the follower drops (Kafka sends and counts it too):
		// up to a batch (16 KiB) per 1 MiB fetch.
		loadInterval = 10 * time.Millisecond
	)
	// Budgets grow with the prefill: at least 10 MiB/s of acks=all RF=3
	// writes and of throttled copying.
	budget := time.Duration(prefill/10000+1) * 30 * time.Second
	nodes := newClusterNodes(t, 4,
		"default.replication.factor=3",
		"min.insync.replicas=2",
		"offsets.topic.replication.factor=3",
		"broker.session.timeout.ms=3000",
		"broker.heartbeat.interval.ms=300",
	)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second+3*budget)
	defer cancel()
	for _, cn := range nodes {
		cn.launch()
	}
	for _, cn := range nodes {
		cn.awaitReady(30 * time.Second)
	}
	first3 := clusterAddrs(nodes[:3])
	// Each partition has one replica on node 4 and leads elsewhere, so
	// decommission moves each to the one broker it lacks, fetching from a
	// leader no other move fetches from: each destination's rate is its
	// own follower throttle's and its leader's leader throttle's, not a
	// share of a leader throttle serving several destinations.
	createAssigned(ctx, t, newClient(t, first3[0]), topic, [][]int32{{1, 2, 4}, {2, 3, 4}, {3, 1, 4}})
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
	// Batches of at most Kafka's default batch.size (16 KiB; franz-go's
	// default is 1 MB): a replica fetch that ends inside a batch has the
	// leader's quota count the partial batch the follower drops (as in
	// Kafka), so big batches would make the copy run below the throttle.
	prod := newClient(t, first3[0], kgo.SeedBrokers(first3...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordDeliveryTimeout(60*time.Second), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(16<<10))
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
			switch {
			case i >= prefill:
				time.Sleep(loadInterval)
			case i%10 == 9:
				time.Sleep(time.Millisecond)
			}
		}
	}()
	led.waitAcked(t, int64(prefill), budget)
	onDisk := dirBytes(t, nodes[3].logDir, topic+"-")

	// The operator's command, as a user runs it, throttled (KIP-73); the
	// destination brokers' throttled follower byte rate is sampled while
	// it runs.
	cmd := exec.CommandContext(ctx, straitBin, "cluster", "decommission", "4", "--json", "--timeout", fmt.Sprint(budget+60*time.Second),
		"--throttle", fmt.Sprint(int64(throttle)), "--brokers", strings.Join(first3, ","))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	began := time.Now()
	var growths []*newReplicaGrowth
	for _, cn := range nodes[:3] {
		g, err := watchNewReplicas(cn.logDir, topic)
		if err != nil {
			t.Fatal(err)
		}
		growths = append(growths, g)
	}
	sampled := make(chan map[int32][]float64, 1)
	grown := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() { sampled <- sampleFollowerRates(nodes[:3], stopSampling) }()
	go func() { defer close(grown); sampleGrowths(growths, stopSampling) }()
	err := cmd.Run()
	close(stopSampling)
	rates := <-sampled
	<-grown
	if err != nil {
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
	// The copy is spread over the three other brokers, each fetching its
	// share under its own follower throttle.
	perBroker := float64(onDisk) / 3 / took.Seconds()
	t.Logf("decommission moved %d partitions (%.1f MiB on node 4 when it began) in %v: %.2f MiB/s per destination broker, %.0f%% of the throttle; progress:\n%s",
		len(res.Moves), float64(onDisk)/(1<<20), took.Round(time.Millisecond), perBroker/(1<<20), 100*perBroker/throttle, errb.String())
	for _, cn := range nodes[:3] {
		t.Logf("node %d throttled follower byte rate while moving (throttle %.1f MiB/s): %s", cn.id,
			throttle/(1<<20), summarizeRates(rates[cn.id], throttle))
	}
	// The bound: the bytes replicated to each destination
	// broker's new replicas per second stay within 10% of the throttle
	// (each broker's follower throttle bounds its own fetching), once the
	// quota's first window has passed (see quotaWindow).
	for i, g := range growths {
		rate, span, n, err := g.settledRate(0.9)
		if err != nil {
			t.Fatalf("node %d: replication to its new replicas is not within 10%% of the %.1f MiB/s throttle: %v", nodes[i].id, throttle/(1<<20), err)
		}
		t.Logf("node %d new replicas grew %.2f MiB/s (%.0f%% of the throttle) over %v (%d samples), %.1f MiB in all",
			nodes[i].id, rate/(1<<20), 100*rate/throttle, span.Round(time.Millisecond), n, float64(g.size[len(g.size)-1])/(1<<20))
		if math.Abs(rate-throttle) > 0.1*throttle {
			t.Errorf("node %d: replication to its new replicas ran at %.2f MiB/s during the move, want %.2f MiB/s ±10%%",
				nodes[i].id, rate/(1<<20), throttle/(1<<20))
		}
	}
	if on := onNode4(); len(on) != 0 {
		t.Fatalf("replicas left on node 4 after decommission: %v", on)
	}
	// The throttles are gone once the moves are complete.
	for _, cn := range nodes[:3] {
		if v, ok, err := scrapeMetric(cn.ports.metrics, `strait_replication_throttled_rate_limit{side="follower"}`); err != nil || ok {
			t.Fatalf("node %d still throttled after the decommission: %v %v", cn.id, v, err)
		}
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
	total, err := logBytes(dir, func(name string) bool { return strings.HasPrefix(name, prefix) })
	if err != nil {
		t.Fatal(err)
	}
	return total
}

// sampleFollowerRates reads each node's throttled follower byte rate every
// 250 ms until stop closes.
func sampleFollowerRates(nodes []*clusterNode, stop <-chan struct{}) map[int32][]float64 {
	out := map[int32][]float64{}
	for {
		for _, cn := range nodes {
			if v, ok, err := scrapeMetric(cn.ports.metrics, `strait_replication_throttled_byte_rate{side="follower"}`); err == nil && ok {
				out[cn.id] = append(out[cn.id], v)
			}
		}
		select {
		case <-stop:
			return out
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// sampleGrowths samples every growth every 100 ms until stop closes.
func sampleGrowths(growths []*newReplicaGrowth, stop <-chan struct{}) {
	for {
		for _, g := range growths {
			g.sample()
		}
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// summarizeRates is the peak, the mean and the median of the non-zero
// samples, each also as a fraction of the throttle. The median is the
// settled rate: the sensor lets a first window's worth through at once.
func summarizeRates(samples []float64, throttle float64) string {
	var nonZero []float64
	var peak, sum float64
	for _, v := range samples {
		peak = max(peak, v)
		if v > 0 {
			nonZero = append(nonZero, v)
			sum += v
		}
	}
	if len(nonZero) == 0 {
		return "no throttled bytes sampled"
	}
	slices.Sort(nonZero)
	n, med := float64(len(nonZero)), nonZero[len(nonZero)/2]
	return fmt.Sprintf("peak %.2f MiB/s (%.0f%%), mean of %d non-zero samples %.2f MiB/s (%.0f%%), median %.2f MiB/s (%.0f%%)",
		peak/(1<<20), 100*peak/throttle, len(nonZero), sum/n/(1<<20), 100*sum/n/throttle, med/(1<<20), 100*med/throttle)
}
