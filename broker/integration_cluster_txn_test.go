package broker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// The transaction failover cluster: three partitions of __transaction_state
// (Kafka's 50 is only slower to place and load), replicated three times
// with min.insync.replicas 2 as Kafka's defaults are; the coordinator looks
// for timed out transactions every half second so a transaction its
// producer left behind is aborted within the test's time; leaders stay
// where failovers put them unless the test elects the preferred ones.
var txnFailoverConfig = []string{
	"auto.leader.rebalance.enable=false",
	"transaction.state.log.num.partitions=3",
	"transaction.state.log.replication.factor=3",
	"transaction.state.log.min.isr=2",
	"transaction.abort.timed.out.transaction.cleanup.interval.ms=500",
}

// TestClusterTransactionFailover kills the node of a transaction
// coordinator (the leader of the transactional id's __transaction_state
// partition) in a three-node cluster while franz-go's transactional
// producer (acks=all, RF=3, min.insync.replicas=2) works, and checks that
// the new coordinator completes or aborts every transaction: a
// read_committed consumer sees each committed transaction whole and
// nothing of the others, every replica's last stable offset reaches its
// log end (no hanging transaction) and the producer goes on.
func TestClusterTransactionFailover(t *testing.T) {
	c := brokertest.StartCluster(t, 3, brokertest.WithConfig(txnFailoverConfig...))
	ctx := testCtx(t, 4*time.Minute)
	const topic, partitions = "txn-failover", 3
	adm := c.Admin(t)
	createReplicatedTopic(t, adm, topic, partitions, 3, "min.insync.replicas", "2")
	c.WaitForISR(t, topic, 3, 15*time.Second)
	f := &txnFailover{c: c, ctx: ctx, topic: topic, partitions: partitions}
	runSubtests(t, []subtest{
		{"KillCoordinatorOfOpenTransaction", f.killCoordinatorOfOpenTransaction},
		{"KillCoordinatorBeforeCommitMarkers", f.killCoordinatorBeforeMarkers(true)},
		{"KillCoordinatorBeforeAbortMarkers", f.killCoordinatorBeforeMarkers(false)},
		{"KillCoordinatorOfAbandonedTransaction", f.killCoordinatorOfAbandonedTransaction},
		{"NothingHalfVisible", f.nothingHalfVisible},
	})
}

// txnFailover is the state the subtests share: the cluster, the data
// topic, and what read_committed readers must see of it in the end.
type txnFailover struct {
	c          *brokertest.Cluster
	ctx        context.Context
	topic      string
	partitions int32
	// committed and aborted are the values of the transactions that
	// committed and of those that did not.
	committed, aborted []string
	// uncertain are the values of each transaction whose commit failed
	// without a definite answer: franz-go aborts then, but the
	// coordinator may have prepared the commit before the answer was
	// lost, so all of each or none may be visible.
	uncertain [][]string
}

// txnProducer is a franz-go transactional producer of id bootstrapped at
// every node, with records placed by the test.
func (f *txnFailover) txnProducer(t *testing.T, id string, timeout time.Duration) *kgo.Client {
	return f.c.Client(t, kgo.TransactionalID(id), kgo.TransactionTimeout(timeout), kgo.RecordPartitioner(kgo.ManualPartitioner()))
}

// records are n values prefix-<partition>-<i> for every partition.
func (f *txnFailover) records(prefix string, n int) []*kgo.Record {
	var out []*kgo.Record
	for p := range f.partitions {
		for i := range n {
			out = append(out, &kgo.Record{Topic: f.topic, Partition: p, Value: fmt.Appendf(nil, "%s-%d-%d", prefix, p, i)})
		}
	}
	return out
}

// coordinator is the node coordinating id, as FindCoordinator answers,
// checked against the leader of id's __transaction_state partition.
func (f *txnFailover) coordinator(t *testing.T, id string) int32 {
	t.Helper()
	var node int32 = -1
	var last string
	ctx, cancel := context.WithTimeout(f.ctx, 20*time.Second)
	defer cancel()
	for {
		fc := f.c.Admin(t).FindTxnCoordinators(ctx, id)[id]
		p := txnStatePartition(id, int32(len(f.c.Image().Topics["__transaction_state"].Partitions)))
		node = fc.NodeID
		leader := f.c.Leader("__transaction_state", p)
		if fc.Err == nil && node == leader {
			return node
		}
		last = fmt.Sprintf("FindCoordinator answered node %d (%v); __transaction_state-%d is led by %d", node, fc.Err, p, leader)
		select {
		case <-ctx.Done():
			t.Fatalf("no coordinator of %s: %s", id, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// txnStatePartition is the __transaction_state partition of a
// transactional id: the same hash as a group's (TransactionStateManager.partitionFor).
func txnStatePartition(id string, partitions int32) int32 { return offsetsPartitionFor(id, partitions) }

// state is id's transaction state as DescribeTransactions answers.
func (f *txnFailover) state(t *testing.T, id string) string {
	t.Helper()
	d, err := f.c.Admin(t).DescribeTransactions(f.ctx, id)
	if err != nil {
		return "error: " + err.Error()
	}
	tx, err := d.On(id, nil)
	if err != nil {
		return "error: " + err.Error()
	}
	if tx.Err != nil {
		return "error: " + tx.Err.Error()
	}
	return tx.State
}

// restart starts node id again and waits until the data topic and
// __transaction_state are fully in sync.
func (f *txnFailover) restart(t *testing.T, id int32) {
	t.Helper()
	f.c.Restart(t, id)
	f.c.WaitForISR(t, f.topic, 3, 30*time.Second)
	f.c.WaitForISR(t, "__transaction_state", 3, 30*time.Second)
}

// open begins a transaction and produces recs in it.
func (f *txnFailover) open(t *testing.T, cl *kgo.Client, recs []*kgo.Record) error {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatalf("begin transaction: %v", err)
	}
	return cl.ProduceSync(f.ctx, recs...).FirstErr()
}

// commit runs one transaction of recs and tries to commit it (endTxn).
func (f *txnFailover) commit(t *testing.T, cl *kgo.Client, recs []*kgo.Record) bool {
	t.Helper()
	return f.endTxn(t, cl, recs, f.open(t, cl, recs))
}

// endTxn ends the producer's transaction as franz-go documents it: a
// commit, unless the produce failed, and an abort when the commit fails.
// It reports whether the transaction committed, and notes its values in
// committed or aborted.
func (f *txnFailover) endTxn(t *testing.T, cl *kgo.Client, recs []*kgo.Record, produceErr error) bool {
	t.Helper()
	var vals []string
	for _, r := range recs {
		vals = append(vals, string(r.Value))
	}
	var commitErr error
	if produceErr == nil {
		if commitErr = cl.EndTransaction(f.ctx, kgo.TryCommit); commitErr == nil {
			f.committed = append(f.committed, vals...)
			return true
		}
		t.Logf("commit failed, aborting: %v", commitErr)
	} else {
		t.Logf("produce failed, aborting: %v", produceErr)
	}
	if err := cl.EndTransaction(f.ctx, kgo.TryAbort); err != nil {
		t.Logf("abort: %v", err)
	}
	if commitErr != nil && !commitRefused(commitErr) {
		f.uncertain = append(f.uncertain, vals)
	} else {
		f.aborted = append(f.aborted, vals...)
	}
	return false
}

// commitRefused reports whether a failed EndTransaction(TryCommit) means
// the transaction did not commit: franz-go did not attempt it
// (OPERATION_NOT_ATTEMPTED), or the coordinator refused it with a
// non-retriable error. Anything else leaves the outcome unknown.
func commitRefused(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke) && (ke == kerr.OperationNotAttempted || !ke.Retriable && ke != kerr.UnknownServerError)
}

// killCoordinatorOfOpenTransaction: a transaction has written to every
// partition when its coordinator's node dies. The producer writes more
// and commits through the new coordinator, which loaded the ongoing
// transaction and its partitions from __transaction_state.
func (f *txnFailover) killCoordinatorOfOpenTransaction(t *testing.T) {
	const id = "failover-open"
	cl := f.txnProducer(t, id, 30*time.Second)
	// A first transaction makes the producer known to the coordinator.
	if !f.commit(t, cl, f.records("open-first", 5)) {
		t.Fatal("the first transaction did not commit with every node up")
	}

	before := f.records("open-before", 10)
	if err := f.open(t, cl, before); err != nil {
		t.Fatalf("produce before the kill: %v", err)
	}
	if s := f.state(t, id); s != "Ongoing" {
		t.Fatalf("transaction state before the kill: %s, want Ongoing", s)
	}
	old := f.coordinator(t, id)
	t.Logf("killing node %d, coordinator of %s with a transaction open", old, id)
	f.c.Kill(t, old)

	after := f.records("open-after", 10)
	err := cl.ProduceSync(f.ctx, after...).FirstErr()
	all := append(before, after...)
	committed := f.endTxn(t, cl, all, err)
	now := f.coordinator(t, id)
	t.Logf("coordinator moved from node %d to node %d; committed %v", old, now, committed)
	if now == old {
		t.Fatalf("node %d still coordinates %s after it was killed", old, id)
	}
	// The producer goes on: until a transaction commits (franz-go may
	// need to abort the one the failover interrupted).
	for i := 0; !committed; i++ {
		if i == 3 {
			t.Fatal("no transaction committed in three attempts after the failover")
		}
		committed = f.commit(t, cl, f.records(fmt.Sprintf("open-retry%d", i), 10))
	}
	f.restart(t, old)
}

// killCoordinatorBeforeMarkers: EndTxn is answered once PrepareCommit
// (or PrepareAbort) is in __transaction_state, before the markers are
// written. The links between the coordinator and one partition's leader
// are cut, so that partition's marker cannot land; the coordinator's node
// is then killed, still in PrepareCommit (PrepareAbort). The new
// coordinator must write every marker: the transaction becomes visible
// whole (or not at all), and the producer goes on.
func (f *txnFailover) killCoordinatorBeforeMarkers(commit bool) func(t *testing.T) {
	return func(t *testing.T) {
		// Balance leadership again after the previous kill, so the
		// coordinator's node does not lead every data partition.
		if _, err := f.c.Admin(t).ElectLeaders(f.ctx, kadm.ElectPreferredReplica, nil); err != nil {
			t.Fatalf("elect preferred leaders: %v", err)
		}
		base, end, prepared, completed := "failover-abort-markers", kgo.TryAbort, "PrepareAbort", "CompleteAbort"
		if commit {
			base, end, prepared, completed = "failover-commit-markers", kgo.TryCommit, "PrepareCommit", "CompleteCommit"
		}
		// The cut must spare the active controller: a node cut off from
		// it is fenced, its leaderships move, and the coordinator may
		// then write the held back marker to the partition's new leader.
		// So the coordinator, the partition's leader and the controller
		// are the three nodes: a transactional id is picked whose
		// coordinator is not the controller.
		var id string
		var coord, cutFrom, cutPartition int32
		f.c.WaitFor(t, 20*time.Second, "a coordinator and a data partition leader that are neither each other nor the controller", func() bool {
			ctrl := f.c.Controller()
			n := int32(len(f.c.Image().Topics["__transaction_state"].Partitions))
			for i := range 20 {
				cand := fmt.Sprintf("%s-%d", base, i)
				c := f.c.Leader("__transaction_state", txnStatePartition(cand, n))
				if c < 0 || c == ctrl {
					continue
				}
				for p := range f.partitions {
					if l := f.c.Leader(f.topic, p); l >= 0 && l != c && l != ctrl {
						id, coord, cutFrom, cutPartition = cand, c, l, p
						return true
					}
				}
			}
			return false
		})
		if c := f.coordinator(t, id); c != coord {
			t.Fatalf("FindCoordinator names node %d for %s, the image node %d", c, id, coord)
		}
		cl := f.txnProducer(t, id, 60*time.Second)
		recs := f.records(id, 10)
		if err := f.open(t, cl, recs); err != nil {
			t.Fatalf("produce: %v", err)
		}
		t.Logf("cutting coordinator node %d from node %d, leader of %s", coord, cutFrom, tp(f.topic, cutPartition))
		f.c.Net.Partition([]int32{coord}, []int32{cutFrom})
		if err := cl.EndTransaction(f.ctx, end); err != nil {
			// With a link cut the end is still answered (the ISR of
			// the coordinator's partition shrinks to two); if it is
			// not, the scenario did not happen and the test is wrong,
			// not the broker.
			t.Fatalf("end (commit %v) with node %d cut off from node %d: %v", commit, coord, cutFrom, err)
		}
		if commit {
			f.committed = append(f.committed, values(recs)...)
		} else {
			f.aborted = append(f.aborted, values(recs)...)
		}
		if s := f.state(t, id); s != prepared {
			t.Fatalf("state once the end was answered, with %s's marker held back: %s, want %s", tp(f.topic, cutPartition), s, prepared)
		}
		t.Logf("end answered, killing coordinator node %d in %s", coord, prepared)
		f.c.Kill(t, coord)
		f.c.Net.Heal()
		f.c.WaitFor(t, 30*time.Second, id+" reaching "+completed+" on a new coordinator", func() bool {
			return f.state(t, id) == completed
		})
		t.Logf("node %d completed it", f.coordinator(t, id))
		f.restart(t, coord)

		// The producer goes on with the new coordinator.
		if !f.commit(t, cl, f.records(id+"-next", 5)) {
			t.Fatal("the transaction after the failover did not commit")
		}
	}
}

// killCoordinatorOfAbandonedTransaction: a producer opens a transaction,
// writes, and is never heard of again; its coordinator's node dies. The
// new coordinator must abort the transaction once it times out, so the
// last stable offset moves on.
func (f *txnFailover) killCoordinatorOfAbandonedTransaction(t *testing.T) {
	const id = "failover-abandoned"
	cl := f.txnProducer(t, id, 3*time.Second)
	recs := f.records("abandoned", 10)
	if err := f.open(t, cl, recs); err != nil {
		t.Fatalf("produce: %v", err)
	}
	f.aborted = append(f.aborted, values(recs)...)
	coord := f.coordinator(t, id)
	t.Logf("killing node %d, coordinator of %s, whose producer is gone with a transaction open", coord, id)
	f.c.Kill(t, coord)
	f.c.WaitFor(t, 30*time.Second, id+" aborted by a new coordinator", func() bool {
		return f.state(t, id) == "CompleteAbort"
	})
	f.restart(t, coord)
}

// nothingHalfVisible reads the data topic back with read_committed and
// read_uncommitted once every node is up: every committed transaction is
// there whole, nothing of the others, and no replica holds a transaction
// open.
func (f *txnFailover) nothingHalfVisible(t *testing.T) {
	f.c.WaitTransactionsDecided(t, f.topic, 30*time.Second)
	got := readValues(t, f.c, f.topic, f.partitions, true)
	want := slices.Clone(f.committed)
	for _, vals := range f.uncertain {
		visible := 0
		for _, v := range vals {
			if _, ok := slices.BinarySearch(got, v); ok {
				visible++
			}
		}
		switch visible {
		case 0:
		case len(vals):
			want = append(want, vals...)
		default:
			t.Errorf("a transaction whose commit went unanswered is partly visible: %d of its %d records", visible, len(vals))
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		var missing, extra []string
		for _, v := range want {
			if _, ok := slices.BinarySearch(got, v); !ok {
				missing = append(missing, v)
			}
		}
		for _, v := range got {
			if _, ok := slices.BinarySearch(want, v); !ok {
				extra = append(extra, v)
			}
		}
		t.Errorf("read_committed read %d records, want %d: missing %v, not committed %v", len(got), len(want), missing, extra)
	}
	all := readValues(t, f.c, f.topic, f.partitions, false)
	for _, v := range f.aborted {
		if _, ok := slices.BinarySearch(all, v); !ok && strings.HasPrefix(v, "abandoned") {
			t.Errorf("the abandoned transaction's %s is not in the log", v)
		}
	}
	t.Logf("read_committed: %d records of committed transactions, none of %d aborted; %d transactions with an unanswered commit",
		len(got), len(f.aborted), len(f.uncertain))
	listed, err := f.c.Admin(t).ListTransactions(f.ctx, nil, []string{"Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence"})
	if err != nil {
		t.Fatalf("list transactions: %v", err)
	}
	if len(listed) != 0 {
		t.Errorf("transactions still open: %v", listed)
	}
}
