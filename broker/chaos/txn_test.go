package chaos

import (
	"testing"
	"time"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/coordinator"
)

// The transaction coordinator's topic and the test cluster's partition
// count of it: three, so the producers' ids share coordinators and every
// node coordinates some.
const (
	txnStateTopic      = "__transaction_state"
	txnStatePartitions = 3
)

// txnChaosConfig is the transactional chaos cluster's configuration:
// __transaction_state as Kafka replicates it (RF 3, min.insync.replicas
// 2) in three partitions, timed out transactions looked for every second;
// small segments, so that data partitions roll (and snapshot their
// producer state) in the middle of transactions and __transaction_state
// is compacted while coordinators load it.
var txnChaosConfig = []string{
	"transaction.state.log.num.partitions=3",
	"transaction.state.log.replication.factor=3",
	"transaction.state.log.min.isr=2",
	"transaction.abort.timed.out.transaction.cleanup.interval.ms=1000",
	"log.segment.bytes=32768",
	"transaction.state.log.segment.bytes=16384",
	"log.cleaner.backoff.ms=200",
	"log.cleaner.min.cleanable.ratio=0.01",
}

// TestTransactionKill runs four franz-go transactional producers
// (distinct transactional ids, acks=all) whose transactions of 10-100
// records span 2-4 partitions of the RF=3 chaos topic, one in five
// aborted on purpose and, for one producer, one in 25 left hanging until
// the coordinator aborts it for its timeout, while a seeded schedule kills, every 1-2 s, either
// the node coordinating one of the ids (the leader of its
// __transaction_state partition) or the leader of a data partition, and
// restarts it a moment later. After the chaos a read_committed reader
// reads every partition to its end: no record of a committed transaction
// is lost, none of an aborted one is visible, no transaction is partly
// visible, no record is visible twice; no replica holds a transaction
// open and the replicas agree below the high watermark.
func TestTransactionKill(t *testing.T) {
	transactionKill(t, plan{records: 5_000, minFaults: 6, timeout: 60 * time.Second}, false)
}

// transactionKill runs the plan; with isolate, a third kind of fault cuts
// a coordinator's node off from the others for 2-5 s instead of killing
// it (faultnet's Isolate): a zombie coordinator that clients still reach.
func transactionKill(t *testing.T, pl plan, isolate bool) {
	e := newEnv(t, pl.timeout+3*time.Minute, brokertest.WithConfig(txnChaosConfig...))
	led := newTxnLedger()
	e.progress, e.failures = led.committedRecords.Load, led.failures
	w := e.startTxnWorkload(4, led)
	// The producers' first FindCoordinator creates __transaction_state.
	e.c.WaitForISR(t, txnStateTopic, chaosRF, isrTimeout)
	kinds := 2
	if isolate {
		kinds = 3
	}
	var coordinatorKills, leaderKills, isolations int
	faults := e.chaos(pl, func() bool {
		kind := e.rng.IntN(kinds)
		var id int32
		if kind == 1 {
			p := int32(e.rng.IntN(chaosPartitions))
			id = e.c.Leader(chaosTopic, p)
			e.logf("kill node %d, leader of %s-%d (%d records committed so far)", id, chaosTopic, p, led.committedRecords.Load())
		} else {
			p := w.producers[e.rng.IntN(len(w.producers))]
			id = e.c.Leader(txnStateTopic, coordinator.PartitionFor(p.id, txnStatePartitions))
			what := "kill"
			if kind == 2 {
				what = "isolate"
			}
			e.logf("%s node %d, coordinator of %s (%d records committed so far)", what, id, p.id, led.committedRecords.Load())
		}
		if id < 0 {
			return false
		}
		switch kind {
		case 0:
			coordinatorKills++
		case 1:
			leaderKills++
		case 2:
			isolations++
			e.c.Net.Isolate(id)
			time.Sleep(between(e.rng, 2*time.Second, 5*time.Second))
			e.c.Net.Heal()
			e.logf("healed; %s", e.leaders())
		}
		if kind != 2 {
			e.c.Kill(t, id)
			time.Sleep(between(e.rng, 300*time.Millisecond, 3*time.Second))
			e.logf("restart node %d; %s", id, e.leaders())
			e.c.Restart(t, id)
		}
		e.c.WaitForISR(t, chaosTopic, chaosRF, isrTimeout)
		e.c.WaitForISR(t, txnStateTopic, chaosRF, isrTimeout)
		e.logf("ISR full again")
		return true
	})
	w.Stop(t, flushTimeout)
	replaced, stalls := w.replaced()
	e.logf("producers stopped; transactions hung past their timeout %d; clients replaced %d; errors: %s", stalls, replaced, led.failures())
	e.c.WaitForISR(t, chaosTopic, chaosRF, isrTimeout)
	// A transaction a failover left open is aborted once it times out.
	e.c.WaitTransactionsDecided(t, chaosTopic, txnTimeout+isrTimeout)
	a := verifyTxns(t, e.ctx, e.c, chaosTopic, chaosPartitions, led.snapshot())
	divergent := compareReplicas(t, e.c, chaosTopic, chaosPartitions)
	if divergent != 0 {
		t.Errorf("%d divergent replicas, want 0", divergent)
	}
	e.logf("transaction kill: faults=%d (coordinator kills %d, leader kills %d, coordinator isolations %d) committed-lost=%d aborted-visible=%d partial=%d duplicates=%d divergent=%d; %v",
		faults, coordinatorKills, leaderKills, isolations, a.lost, a.abortedVisible, a.partial, a.dups, divergent, a)
	if int64(a.committedRecords) < pl.records {
		t.Errorf("%d records committed, want >= %d", a.committedRecords, pl.records)
	}
	if a.aborted == 0 {
		t.Error("no transaction was aborted: the check of aborted records checked nothing")
	}
}
