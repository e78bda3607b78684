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

// TestTransactionKill runs four franz-go transactional producers
// (distinct transactional ids, acks=all) whose transactions of 10-100
// records span 2-4 partitions of the RF=3 chaos topic, one in five
// aborted on purpose, while a seeded schedule kills, every 1-2 s, either
// the node coordinating one of the ids (the leader of its
// __transaction_state partition) or the leader of a data partition, and
// restarts it a moment later. After the chaos a read_committed reader
// reads every partition to its end: no record of a committed transaction
// is lost, none of an aborted one is visible, no transaction is partly
// visible, no record is visible twice; no replica holds a transaction
// open and the replicas agree below the high watermark.
func TestTransactionKill(t *testing.T) {
	transactionKill(t, plan{records: 5_000, minFaults: 6, timeout: 60 * time.Second})
}

func transactionKill(t *testing.T, pl plan) {
	e := newEnv(t, pl.timeout+3*time.Minute, brokertest.WithConfig(
		"transaction.state.log.num.partitions=3",
		"transaction.state.log.replication.factor=3",
		"transaction.state.log.min.isr=2",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms=1000",
	))
	led := newTxnLedger()
	e.progress, e.failures = led.committedRecords.Load, led.failures
	w := e.startTxnWorkload(4, led)
	// The producers' first FindCoordinator creates __transaction_state.
	e.c.WaitForISR(t, txnStateTopic, chaosRF, isrTimeout)
	coordinatorKills, leaderKills := 0, 0
	faults := e.chaos(pl, func() bool {
		var id int32
		if e.rng.IntN(2) == 0 {
			p := w.producers[e.rng.IntN(len(w.producers))]
			id = e.c.Leader(txnStateTopic, coordinator.PartitionFor(p.id, txnStatePartitions))
			e.logf("kill node %d, coordinator of %s (%d records committed so far)", id, p.id, led.committedRecords.Load())
			coordinatorKills++
		} else {
			p := int32(e.rng.IntN(chaosPartitions))
			id = e.c.Leader(chaosTopic, p)
			e.logf("kill node %d, leader of %s-%d (%d records committed so far)", id, chaosTopic, p, led.committedRecords.Load())
			leaderKills++
		}
		if id < 0 {
			return false
		}
		e.c.Kill(t, id)
		time.Sleep(between(e.rng, 300*time.Millisecond, 3*time.Second))
		e.logf("restart node %d; %s", id, e.leaders())
		e.c.Restart(t, id)
		e.c.WaitForISR(t, chaosTopic, chaosRF, isrTimeout)
		e.c.WaitForISR(t, txnStateTopic, chaosRF, isrTimeout)
		e.logf("ISR full again")
		return true
	})
	w.Stop(t, flushTimeout)
	e.logf("producers stopped; clients replaced %d; errors: %s", w.replaced(), led.failures())
	e.c.WaitForISR(t, chaosTopic, chaosRF, isrTimeout)
	// A transaction a failover left open is aborted once it times out.
	e.c.WaitTransactionsDecided(t, chaosTopic, txnTimeout+isrTimeout)
	a := verifyTxns(t, e.ctx, e.c, chaosTopic, chaosPartitions, led.snapshot())
	divergent := compareReplicas(t, e.c, chaosTopic, chaosPartitions)
	if divergent != 0 {
		t.Errorf("%d divergent replicas, want 0", divergent)
	}
	e.logf("transaction kill: faults=%d (coordinator %d, leader %d) committed-lost=%d aborted-visible=%d partial=%d duplicates=%d divergent=%d; %v",
		faults, coordinatorKills, leaderKills, a.lost, a.abortedVisible, a.partial, a.dups, divergent, a)
	if int64(a.committedRecords) < pl.records {
		t.Errorf("%d records committed, want >= %d", a.committedRecords, pl.records)
	}
	if a.aborted == 0 {
		t.Error("no transaction was aborted: the check of aborted records checked nothing")
	}
}
