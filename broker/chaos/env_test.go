package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/broker/brokertest"
)

// The chaos topic: six partitions, three replicas, acks=all needs two in
// sync (the workload).
const (
	chaosTopic      = "chaos"
	chaosPartitions = 6
	chaosRF         = 3
	chaosMinISR     = "2"
)

// Bounds of the waits around faults; a wait that runs out is a broker bug
// (a stuck ISR, a leader never elected), not slowness.
const (
	isrTimeout   = 45 * time.Second
	flushTimeout = 60 * time.Second
)

// env is one chaos run: a three-node cluster, the chaos topic, the
// producers' ledger and the seeded random source of the fault schedule.
type env struct {
	t     *testing.T
	c     *brokertest.Cluster
	rng   *rand.Rand
	ctx   context.Context
	start time.Time
	led   *ledger
	w     *workload
	// extra are the ledgers of producers outside w (stopped by the test),
	// audited with led.
	extra []*ledger
	// progress is what a plan's records count, and failures what went
	// wrong so far: led's acknowledged records and failures unless the
	// test sets its own (the transactional test counts committed
	// records).
	progress func() int64
	failures func() string
}

// newEnv starts the cluster and creates the chaos topic, fully in sync.
func newEnv(t *testing.T, timeout time.Duration, opts ...brokertest.Option) *env {
	t.Helper()
	e := &env{t: t, rng: newRand(t), start: time.Now(), led: newLedger()}
	e.progress, e.failures = e.led.nAcked.Load, e.led.failures
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	e.ctx = ctx
	e.c = brokertest.StartCluster(t, 3, opts...)
	e.createTopic(chaosTopic, chaosPartitions, chaosRF)
	return e
}

// logf logs with the time since the run started.
func (e *env) logf(format string, args ...any) {
	e.t.Helper()
	e.t.Logf("%6.2fs "+format, append([]any{time.Since(e.start).Seconds()}, args...)...)
}

// createTopic creates a topic through a client bootstrapped at every
// node (any node forwards to the active controller) and waits until every
// partition has a leader and a full ISR.
func (e *env) createTopic(name string, partitions int32, rf int16) {
	e.t.Helper()
	e.createTopicNoWait(name, partitions, rf)
	e.c.WaitForISR(e.t, name, int(rf), isrTimeout)
}

// createTopicNoWait creates a topic and returns once the controller
// answered.
func (e *env) createTopicNoWait(name string, partitions int32, rf int16) {
	e.t.Helper()
	adm := e.c.Admin(e.t)
	resp, err := adm.CreateTopic(e.ctx, partitions, rf, map[string]*string{"min.insync.replicas": kadm.StringPtr(chaosMinISR)}, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		e.t.Fatalf("create topic %s: %v", name, err)
	}
}

// startProducers starts n producers over every partition of the chaos
// topic, bootstrapped at every node.
func (e *env) startProducers(n int) {
	e.t.Helper()
	all := make([]int32, chaosPartitions)
	for p := range all {
		all[p] = int32(p)
	}
	var ps []*producer
	for i := range n {
		ps = append(ps, &producer{id: i + 1, cl: e.c.Client(e.t, producerOpts()...), partitions: all, led: e.led})
	}
	e.w = startWorkload(e.ctx, chaosTopic, ps...)
}

// plan is how long a chaos run lasts: until records are acknowledged (or
// committed: env.progress) and at least minFaults faults were injected,
// failing after timeout.
type plan struct {
	records   int64
	minFaults int
	timeout   time.Duration
}

// chaos injects a fault every 1-2 s until the plan is met and returns how
// many it injected. fault returns false when it found nothing to do.
func (e *env) chaos(pl plan, fault func() bool) int {
	e.t.Helper()
	deadline := time.Now().Add(pl.timeout)
	faults := 0
	for e.progress() < pl.records || faults < pl.minFaults {
		if time.Now().After(deadline) {
			e.t.Fatalf("plan not met after %v: %d of %d records, %d of %d faults; failures: %s",
				pl.timeout, e.progress(), pl.records, faults, pl.minFaults, e.failures())
		}
		time.Sleep(between(e.rng, time.Second, 2*time.Second))
		if fault() {
			faults++
		}
	}
	return faults
}

// finish stops the producers, heals the network, waits for a full ISR and
// verifies the records and the replicas.
func (e *env) finish() (audit, int) {
	e.t.Helper()
	e.w.Stop(e.t, flushTimeout)
	e.c.Net.Heal()
	e.logf("producers stopped: %d acknowledged, %d failed (%s); acknowledgement latency %s",
		e.led.nAcked.Load(), e.led.nFailed.Load(), e.led.failures(), e.led.latency())
	e.c.WaitForISR(e.t, chaosTopic, chaosRF, isrTimeout)
	acked := e.led.snapshot()
	for _, l := range e.extra {
		for v, a := range l.snapshot() {
			acked[v] = a
		}
	}
	a := verifyRecords(e.t, e.ctx, e.c, chaosTopic, acked)
	divergent := compareReplicas(e.t, e.c, chaosTopic, chaosPartitions)
	if divergent != 0 {
		e.t.Errorf("%d divergent replicas, want 0", divergent)
	}
	return a, divergent
}

// leaders describes the chaos topic's leaders and epochs in the newest
// image.
func (e *env) leaders() string {
	img := e.c.Image()
	t, ok := img.Topics[chaosTopic]
	if !ok {
		return "no topic"
	}
	s := "leaders"
	for _, p := range t.Partitions {
		s += fmt.Sprintf(" %d:%d@%d", p.Index, p.Leader, p.LeaderEpoch)
	}
	return s
}
