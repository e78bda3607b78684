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
	ctx := testCtx(t, 6*time.Minute)
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
//
// The scenario needs the controller to stay the third node throughout
// (see markersSetup). On a loaded machine the raft leader can step down
// (a stall past its lease) and the next one be the coordinator or the cut
// off leader: that node's peer is then fenced, and its leaderships move
// as in Kafka (a broker the controller does not hear from loses them).
// The new coordinator then completes the transaction at once, or the end
// fails, and the scenario did not happen: the attempt is given up and run
// again with a fresh transactional id.
func (f *txnFailover) killCoordinatorBeforeMarkers(commit bool) func(t *testing.T) {
	return func(t *testing.T) {
		const attempts = 3
		for attempt := range attempts {
			if f.markersAttempt(t, commit, attempt) {
				return
			}
		}
		t.Fatalf("the controller or the leaders moved in each of %d attempts; the scenario never happened", attempts)
	}
}

// markersSetup is what an attempt of killCoordinatorBeforeMarkers stands
// on: the controller, and the leaders (with their epochs) of the
// coordinator's __transaction_state partition and of the data partition
// whose leader is cut off from the coordinator.
type markersSetup struct {
	ctrl                            int32
	coord, coordEpoch               int32
	cutFrom, cutEpoch               int32
	txnStatePartition, cutPartition int32
}

// current is the setup as the cluster is now, with s's partitions.
func (f *txnFailover) current(s markersSetup) markersSetup {
	now := s
	now.ctrl = f.agreedController()
	now.coord, now.coordEpoch = f.leaderAndEpoch("__transaction_state", s.txnStatePartition)
	now.cutFrom, now.cutEpoch = f.leaderAndEpoch(f.topic, s.cutPartition)
	return now
}

// agreedController is the controller every running node names, or -1 when
// they do not agree (an election is under way or a node is stale).
func (f *txnFailover) agreedController() int32 {
	ctrl := int32(-1)
	for _, id := range f.c.Running() {
		n := f.c.Node(id).Node()
		if n == nil {
			continue
		}
		got := n.ControllerID()
		if got < 0 || ctrl >= 0 && got != ctrl {
			return -1
		}
		ctrl = got
	}
	return ctrl
}

// leaderAndEpoch is a partition's leader and leader epoch in the newest
// image (-1, -1 when unknown).
func (f *txnFailover) leaderAndEpoch(topic string, p int32) (int32, int32) {
	img := f.c.Image()
	if img == nil {
		return -1, -1
	}
	tp, ok := img.Topics[topic]
	if !ok || int(p) >= len(tp.Partitions) {
		return -1, -1
	}
	return tp.Partitions[p].Leader, tp.Partitions[p].LeaderEpoch
}

// markersAttempt runs killCoordinatorBeforeMarkers once with a fresh
// transactional id. It reports false, having healed the network and let
// the transaction end, when the controller or a leader moved so that the
// scenario did not happen.
func (f *txnFailover) markersAttempt(t *testing.T, commit bool, attempt int) bool {
	// Balance leadership again after the previous kill, so the
	// coordinator's node does not lead every data partition.
	if _, err := f.c.Admin(t).ElectLeaders(f.ctx, kadm.ElectPreferredReplica, nil); err != nil {
		t.Fatalf("elect preferred leaders: %v", err)
	}
	base, end, prepared, completed := "failover-abort-markers", kgo.TryAbort, "PrepareAbort", "CompleteAbort"
	if commit {
		base, end, prepared, completed = "failover-commit-markers", kgo.TryCommit, "PrepareCommit", "CompleteCommit"
	}
	// The cut must spare the active controller: a node cut off from it
	// is fenced, its leaderships move, and the coordinator may then
	// write the held back marker to the partition's new leader. So the
	// coordinator, the partition's leader and the controller are the
	// three nodes: a transactional id is picked whose coordinator is not
	// the controller.
	var id string
	var setup markersSetup
	f.c.WaitFor(t, 20*time.Second, "a coordinator and a data partition leader that are neither each other nor the controller", func() bool {
		ctrl := f.agreedController()
		if ctrl < 0 {
			return false
		}
		n := int32(len(f.c.Image().Topics["__transaction_state"].Partitions))
		for i := range 20 {
			cand := fmt.Sprintf("%s-%d-%d", base, attempt, i)
			sp := txnStatePartition(cand, n)
			c, ce := f.leaderAndEpoch("__transaction_state", sp)
			if c < 0 || c == ctrl {
				continue
			}
			for p := range f.partitions {
				if l, le := f.leaderAndEpoch(f.topic, p); l >= 0 && l != c && l != ctrl {
					id = cand
					setup = markersSetup{ctrl: ctrl, coord: c, coordEpoch: ce, cutFrom: l, cutEpoch: le, txnStatePartition: sp, cutPartition: p}
					return true
				}
			}
		}
		return false
	})
	coord, cutFrom := setup.coord, setup.cutFrom
	if c := f.coordinator(t, id); c != coord {
		t.Fatalf("FindCoordinator names node %d for %s, the image node %d", c, id, coord)
	}
	cl := f.txnProducer(t, id, 60*time.Second)
	recs := f.records(id, 10)
	if err := f.open(t, cl, recs); err != nil {
		t.Fatalf("produce: %v", err)
	}
	t.Logf("attempt %d: cutting coordinator node %d from node %d, leader of %s; controller %d", attempt, coord, cutFrom, tp(f.topic, setup.cutPartition), setup.ctrl)
	f.c.Net.Partition([]int32{coord}, []int32{cutFrom})
	moved := func(when string) bool {
		now := f.current(setup)
		if now == setup {
			return false
		}
		t.Logf("attempt %d: the scenario did not happen: %s, the controller and leaders moved from %+v to %+v", attempt, when, setup, now)
		return true
	}
	if moved("right after the cut") {
		f.giveUpAttempt(t, cl, id, recs, commit, nil)
		return false
	}
	// The end is bounded: a coordinator that lost the controller can hold
	// it as long as its log append waits for an ISR it cannot shrink.
	endCtx, cancel := context.WithTimeout(f.ctx, 30*time.Second)
	err := cl.EndTransaction(endCtx, end)
	cancel()
	if err != nil {
		// With a link cut the end is still answered (the ISR of the
		// coordinator's partition shrinks to two); if it is not, the
		// scenario did not happen and the test is wrong, not the broker.
		if moved("the end failed: " + err.Error()) {
			f.giveUpAttempt(t, cl, id, recs, commit, err)
			return false
		}
		t.Fatalf("end (commit %v) with node %d cut off from node %d: %v", commit, coord, cutFrom, err)
	}
	s := f.state(t, id)
	if s != prepared {
		if moved("the state was " + s + " once the end was answered") {
			f.giveUpAttempt(t, cl, id, recs, commit, nil)
			return false
		}
		t.Fatalf("state once the end was answered, with %s's marker held back: %s, want %s", tp(f.topic, setup.cutPartition), s, prepared)
	}
	// Held at Prepare*: the scenario happened, whatever moves from now on.
	f.noteEnded(recs, commit)
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
	return true
}

// noteEnded notes recs as committed or aborted: their end was answered.
func (f *txnFailover) noteEnded(recs []*kgo.Record, commit bool) {
	if commit {
		f.committed = append(f.committed, values(recs)...)
	} else {
		f.aborted = append(f.aborted, values(recs)...)
	}
}

// giveUpAttempt heals the network after an attempt whose scenario did not
// happen and sees its transaction decided, noting its records as the end
// went: answered (endErr nil), the end's outcome; a commit that failed,
// aborted as endTxn does and uncertain; an abort that failed, aborted
// again. The cluster is left fully in sync for the next attempt.
func (f *txnFailover) giveUpAttempt(t *testing.T, cl *kgo.Client, id string, recs []*kgo.Record, commit bool, endErr error) {
	t.Helper()
	f.c.Net.Heal()
	f.c.WaitForISR(t, f.topic, 3, 30*time.Second)
	f.c.WaitForISR(t, "__transaction_state", 3, 30*time.Second)
	switch {
	case endErr == nil && f.state(t, id) == "Ongoing":
		// Given up right after the cut: end it now, every link up.
		f.endTxn(t, cl, recs, nil)
	case endErr == nil:
		f.noteEnded(recs, commit)
	default:
		if err := cl.EndTransaction(f.ctx, kgo.TryAbort); err != nil {
			t.Logf("abort after the failed end: %v", err)
		}
		// A refusal of the last try says nothing of an earlier one
		// that franz-go retried (it may have reached a coordinator
		// that prepared the commit): a failed commit is uncertain.
		if commit {
			f.uncertain = append(f.uncertain, values(recs))
		} else {
			f.aborted = append(f.aborted, values(recs)...)
		}
	}
	// A transaction nobody could end is aborted when it times out.
	f.c.WaitFor(t, 90*time.Second, id+" decided after the given up attempt", func() bool {
		s := f.state(t, id)
		return s == "CompleteCommit" || s == "CompleteAbort"
	})
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
