package bench

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strait-io/strait/bench/kfakepeer"
)

// startKfake starts an in-process kfake closed at the end of the test.
func startKfake(t *testing.T) *Broker {
	t.Helper()
	c, err := kfakepeer.Start(1, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &Broker{Label: "kfake", Addrs: c.Addrs}
}

func testProducer(b *Broker, topic string) ProducerConfig {
	p := DefaultProducerConfig()
	p.Bootstrap = b.Addrs
	p.Topic = topic
	p.Partitions = 3
	return p
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// endOffsets sums the topic's end offsets: what the broker holds.
func endOffsets(t *testing.T, b *Broker, topic string) int64 {
	t.Helper()
	end, err := offsets(ctxT(t), seedOpts(b.Addrs, nil), topic, false)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, o := range end {
		n += o
	}
	return n
}

func checkLatency(t *testing.T, what string, l *Latency, count int64) {
	t.Helper()
	if l == nil || l.Count != uint64(count) {
		t.Fatalf("%s latency %+v, want %d samples", what, l, count)
	}
	if !(l.P50 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) || l.Max <= 0 {
		t.Fatalf("%s latency quantiles out of order: %+v", what, l)
	}
}

func TestProduceThenCatchUp(t *testing.T) {
	b := startKfake(t)
	ctx := ctxT(t)
	pc := testProducer(b, "produce-catchup")
	pc.Producers = 2

	res, err := RunProduce(ctx, ProduceConfig{ProducerConfig: pc, Bytes: 2 << 20, Label: b.Label})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 2048 || res.Bytes != 2<<20 || res.Errors != 0 || res.Workload != "produce" || res.Broker != "kfake" {
		t.Fatalf("produce result %+v, want 2048 records, 2 MiB, no errors", res)
	}
	checkLatency(t, "produce", res.Latency, 2048)
	if res.Cost != nil {
		t.Fatalf("in-process broker has a cost: %+v", res.Cost)
	}
	if got := endOffsets(t, b, pc.Topic); got != 2048 {
		t.Fatalf("broker holds %d records, want 2048", got)
	}

	// Prefill off and more bytes asked than there are: the catch-up reads
	// everything and stops at the end offsets.
	out, err := RunConsume(ctx, ConsumeConfig{ProducerConfig: pc, Bytes: 1 << 30, Label: b.Label})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Workload != "catch-up" || out[0].Records != 2048 || out[0].Bytes != 2<<20 || out[0].Errors != 0 {
		t.Fatalf("catch-up %+v, want 2048 records and 2 MiB", out)
	}

	// Fewer bytes than held: the catch-up stops at the byte cap.
	out, err = RunConsume(ctx, ConsumeConfig{ProducerConfig: pc, Bytes: 1000 * 1024, Label: b.Label})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Records != 1000 || out[0].Bytes != 1000*1024 {
		t.Fatalf("capped catch-up read %d records %d bytes, want 1000 and %d", out[0].Records, out[0].Bytes, 1000*1024)
	}
}

func TestConsumePrefillAndTail(t *testing.T) {
	b := startKfake(t)
	pc := testProducer(b, "prefill-tail")
	pc.Acks = "1"
	pc.Compression = "zstd"
	out, err := RunConsume(ctxT(t), ConsumeConfig{
		ProducerConfig: pc,
		Bytes:          1 << 20,
		Prefill:        true,
		TailDuration:   300 * time.Millisecond,
		TailRate:       2000,
		Label:          b.Label,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 {
		t.Fatalf("%d results, want prefill, catch-up, tail: %+v", len(out), out)
	}
	pre, cu, tail := out[0], out[1], out[2]
	if pre.Workload != "prefill" || pre.Records != 1024 || pre.Errors != 0 {
		t.Fatalf("prefill %+v, want 1024 records", pre)
	}
	if cu.Workload != "catch-up" || cu.Records != 1024 || cu.Bytes != 1<<20 {
		t.Fatalf("catch-up %+v, want 1024 records", cu)
	}
	if tail.Workload != "tail" || tail.Records == 0 || tail.Records != tail.Produced || tail.Errors != 0 {
		t.Fatalf("tail %+v, want records read == produced > 0", tail)
	}
	if got := endOffsets(t, b, pc.Topic); got != 1024+tail.Produced {
		t.Fatalf("broker holds %d, want %d", got, 1024+tail.Produced)
	}
}

func TestE2E(t *testing.T) {
	b := startKfake(t)
	res, err := RunE2E(ctxT(t), E2EConfig{
		ProducerConfig: testProducer(b, "e2e"),
		Rate:           2000,
		Records:        400,
		Label:          b.Label,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Workload != "e2e" || res.Records != 400 || res.Produced != 400 || res.Errors != 0 {
		t.Fatalf("e2e %+v, want 400 produced and read", res)
	}
	checkLatency(t, "e2e", res.Latency, 400)
}

func TestProduceByRecordsAndRate(t *testing.T) {
	b := startKfake(t)
	pc := testProducer(b, "rate")
	pc.Acks = "0"
	pc.Producers = 3
	res, err := RunProduce(ctxT(t), ProduceConfig{ProducerConfig: pc, Records: 301, Rate: 3000, Label: b.Label})
	if err != nil {
		t.Fatal(err)
	}
	// Records are claimed from one counter: 301 in total over 3 producers.
	if res.Records != 301 || res.Errors != 0 {
		t.Fatalf("%+v, want 301 records", res)
	}
	// acks=0 gets no reply, so wait for the broker to have them all.
	deadline := time.Now().Add(10 * time.Second)
	for endOffsets(t, b, pc.Topic) != 301 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := endOffsets(t, b, pc.Topic); got != 301 {
		t.Fatalf("broker holds %d, want 301", got)
	}
}

// TestProduceDurationAtRate: at a fixed rate the schedule, not the wall
// clock, picks the records, so 250 ms at 2000/s is exactly 500 records
// however slow this machine is.
func TestProduceDurationAtRate(t *testing.T) {
	b := startKfake(t)
	pc := testProducer(b, "duration-rate")
	pc.Producers = 2
	res, err := RunProduce(ctxT(t), ProduceConfig{ProducerConfig: pc, Duration: 250 * time.Millisecond, Rate: 2000, Label: b.Label})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 500 || res.Errors != 0 {
		t.Fatalf("%+v, want 500 records", res)
	}
	if got := endOffsets(t, b, pc.Topic); got != 500 {
		t.Fatalf("broker holds %d, want 500", got)
	}
}

func TestProduceConfigErrors(t *testing.T) {
	ctx := context.Background()
	base := ProducerConfig{Bootstrap: []string{"127.0.0.1:1"}}
	for name, cfg := range map[string]ProduceConfig{
		"no bootstrap": {Records: 1},
		"no stop":      {ProducerConfig: base},
		"bad acks":     {ProducerConfig: ProducerConfig{Bootstrap: base.Bootstrap, Acks: "2"}, Records: 1},
		"bad codec":    {ProducerConfig: ProducerConfig{Bootstrap: base.Bootstrap, Compression: "brotli"}, Records: 1},
		"neg rate":     {ProducerConfig: base, Records: 1, Rate: -1},
	} {
		if _, err := RunProduce(ctx, cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := RunE2E(ctx, E2EConfig{ProducerConfig: base, Records: 1}); err == nil {
		t.Error("e2e without a rate: no error")
	}
}

func TestKfakeListenPrefix(t *testing.T) {
	if kfakeListenPrefix != kfakepeer.ListenPrefix {
		t.Fatalf("bench reads %q, kfake-serve prints %q", kfakeListenPrefix, kfakepeer.ListenPrefix)
	}
}

// TestKfakeChildProcess runs kfake as a child (this test binary, through
// TestMain) and checks its cost is measured and it is gone after Close.
func TestKfakeChildProcess(t *testing.T) {
	ctx := ctxT(t)
	b, err := StartKfakeProcess(ctx, []string{os.Args[0], "kfake-serve"}, 1, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.PID <= 0 || b.PID == os.Getpid() || len(b.Addrs) != 1 {
		t.Fatalf("broker %+v, want a child pid and one address", b)
	}
	res, err := RunProduce(ctx, ProduceConfig{ProducerConfig: testProducer(b, "child"), Bytes: 1 << 20, Label: b.Label, BrokerPID: b.PID})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 1024 || res.Cost == nil || res.Cost.PID != b.PID {
		t.Fatalf("%+v, want 1024 records and the child's cost", res)
	}
	if c := res.Cost; c.CPUSeconds < 0 || c.RSSBytes <= 0 || c.MaxRSSBytes < c.RSSBytes || c.PeakRSSBytes < c.MaxRSSBytes {
		t.Fatalf("cost %+v: want cpu >= 0 and 0 < rss <= max rss <= peak", c)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(b.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("child %d still exists after Close: %v", b.PID, err)
	}
}

// cancelOn is a progress writer that cancels a run once its progress line
// shows phase: cancellation on an event, not after a guessed time.
type cancelOn struct {
	mu     sync.Mutex
	phase  string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.Contains(string(p), " "+c.phase+" ") {
		c.cancel()
	}
	return len(p), nil
}

// TestCancelEndsRuns: a run that would last an hour ends with ctx's error
// and what it counted so far, leaving no producer behind.
func TestCancelEndsRuns(t *testing.T) {
	b := startKfake(t)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	out, err := RunConsume(ctx, ConsumeConfig{
		ProducerConfig: testProducer(b, "cancel"),
		Bytes:          64 << 10,
		Prefill:        true,
		TailDuration:   time.Hour,
		TailRate:       500,
		Label:          b.Label,
		Progress:       &cancelOn{phase: "tail", cancel: cancel},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("tail: err %v, want cancelled", err)
	}
	if n := len(out); n != 3 || out[2].Workload != "tail" || out[0].Records != 64 || out[1].Records != 64 {
		t.Fatalf("results %+v, want prefill and catch-up of 64, and the cut tail", out)
	}

	ctx, cancel = context.WithCancel(ctxT(t))
	defer cancel()
	res, err := RunProduce(ctx, ProduceConfig{
		ProducerConfig: testProducer(b, "cancel"),
		Duration:       time.Hour,
		Rate:           100,
		Label:          b.Label,
		Progress:       &cancelOn{phase: "produce", cancel: cancel},
	})
	if !errors.Is(err, context.Canceled) || res.Workload != "produce" {
		t.Fatalf("produce: %+v, %v; want a result and cancelled", res, err)
	}
}

// TestConsumeGroup: a group catch-up (KIP-848 and classic, 3 members)
// reads every record of the topic once, counted by offset, and says how
// long the first record took. kfake serves both protocols.
func TestConsumeGroup(t *testing.T) {
	for _, proto := range []string{"consumer", "classic"} {
		t.Run(proto, func(t *testing.T) {
			b := startKfake(t)
			pc := testProducer(b, "group-"+proto)
			pc.Partitions = 4
			out, err := RunConsume(ctxT(t), ConsumeConfig{
				ProducerConfig: pc,
				Bytes:          1 << 20,
				Prefill:        true,
				Group:          GroupConfig{Members: 3, Protocol: proto},
				Label:          b.Label,
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != 2 {
				t.Fatalf("%d results, want prefill and group catch-up: %+v", len(out), out)
			}
			cu := out[1]
			if cu.Workload != groupWorkload || cu.Records != 1024 || cu.Bytes != 1<<20 || cu.Errors != 0 || cu.FirstRecord <= 0 {
				t.Fatalf("group catch-up %+v, want 1024 records and a first-record time", cu)
			}
		})
	}
}

func TestGroupConfigErrors(t *testing.T) {
	for _, g := range []GroupConfig{{Members: -1}, {Members: 2, Protocol: "share"}, {Members: 1}} {
		if err := g.Validate(); err == nil {
			t.Errorf("%+v: no error", g)
		}
	}
	if err := (GroupConfig{}).Validate(); err != nil {
		t.Errorf("no group: %v", err)
	}
}
