package txn

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

// TestCommitWritesMarkersThenCompletes: a transaction over partitions led
// by two brokers. EndTxn answers once PrepareCommit is in the log; the
// markers go to each leader with the coordinator epoch; until they are all
// written the id answers CONCURRENT_TRANSACTIONS; then CompleteCommit is
// appended and the next transaction can start.
func TestCommitWritesMarkersThenCompletes(t *testing.T) {
	e := newEnv(t)
	e.elect(7)
	pid, epoch, code := e.init("app", 60000)
	if code != 0 || pid != 1001 || epoch != 0 {
		t.Fatalf("InitProducerId: pid %d epoch %d %s", pid, epoch, codeName(code))
	}
	e.addOK("app", pid, epoch, tp("a", 0), tp("b", 1))
	e.addOK("app", pid, epoch, tp("a", 0)) // already in: nothing appended
	if got := e.describe("app"); got != "Ongoing pid=1001 epoch=0 a[0] b[1]" {
		t.Fatalf("describe: %s", got)
	}

	gate := make(chan struct{})
	e.markers.mu.Lock()
	e.markers.gate = gate
	e.markers.mu.Unlock()
	if code := e.end("app", pid, epoch, true); code != 0 {
		t.Fatalf("EndTxn: %s", codeName(code))
	}
	// Markers are being written: the id waits.
	if got := e.add("app", pid, epoch, tp("a", 1)); got[tp("a", 1)] != kerr.ConcurrentTransactions.Code {
		t.Fatalf("AddPartitionsToTxn while completing: %v", got)
	}
	if code := e.end("app", pid, epoch, true); code != kerr.ConcurrentTransactions.Code {
		t.Fatalf("EndTxn retry while completing: %s", codeName(code))
	}
	// The pending completion is checked before the outcome, as Kafka does.
	if code := e.end("app", pid, epoch, false); code != kerr.ConcurrentTransactions.Code {
		t.Fatalf("abort of a committing transaction: %s", codeName(code))
	}
	close(gate)
	e.waitFor("CompleteCommit", func() bool { return strings.HasPrefix(e.describe("app"), "CompleteCommit") })

	calls := e.markers.calls()
	slices.SortFunc(calls, func(a, b markerCall) int { return int(a.broker - b.broker) })
	if len(calls) != 2 || calls[0].broker != 1 || calls[1].broker != 2 || !calls[0].commit || calls[0].coordEpoch != 7 ||
		calls[0].pid != pid || calls[0].epoch != 0 || calls[0].partitions[0] != tp("a", 0) || calls[1].partitions[0] != tp("b", 1) {
		t.Fatalf("markers %+v", calls)
	}
	p := e.c.PartitionFor("app")
	if got := strings.Join(e.log.states(t, p, "app"), " "); got != "Empty Ongoing PrepareCommit CompleteCommit" {
		t.Fatalf("log: %s", got)
	}
	// A retried commit is answered NONE; the next transaction starts.
	if code := e.end("app", pid, epoch, true); code != 0 {
		t.Fatalf("EndTxn retry after completion: %s", codeName(code))
	}
	e.addOK("app", pid, epoch, tp("a", 1))
	if got := e.describe("app"); got != "Ongoing pid=1001 epoch=0 a[1]" {
		t.Fatalf("describe: %s", got)
	}
}

// TestNextTransactionWaitsForTheMarkers: an AddPartitionsToTxn that
// starts the next transaction while the previous commit's markers are
// being written waits for them (up to ConcurrentWait) and succeeds,
// instead of answering CONCURRENT_TRANSACTIONS for the client to retry
// after its backoff.
func TestNextTransactionWaitsForTheMarkers(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ConcurrentWait = time.Minute })
	e.elect(3)
	pid, epoch, _ := e.init("app", 60000)
	e.addOK("app", pid, epoch, tp("a", 0))
	gate := make(chan struct{})
	e.markers.mu.Lock()
	e.markers.gate = gate
	e.markers.mu.Unlock()
	if code := e.end("app", pid, epoch, true); code != 0 {
		t.Fatalf("EndTxn: %s", codeName(code))
	}
	added := make(chan map[storage.TopicPartition]int16, 1)
	go func() { added <- e.add("app", pid, epoch, tp("a", 1)) }()
	select {
	case got := <-added:
		t.Fatalf("AddPartitionsToTxn answered %v while the markers were held", got)
	case <-time.After(100 * time.Millisecond):
	}
	close(gate)
	select {
	case got := <-added:
		if got[tp("a", 1)] != 0 {
			t.Fatalf("AddPartitionsToTxn after the markers: %v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("AddPartitionsToTxn still waits after the commit completed")
	}
	if got := e.describe("app"); got != "Ongoing pid=1001 epoch=0 a[1]" {
		t.Fatalf("describe: %s", got)
	}
	p := e.c.PartitionFor("app")
	if got := strings.Join(e.log.states(t, p, "app"), " "); got != "Empty Ongoing PrepareCommit CompleteCommit Ongoing" {
		t.Fatalf("log: %s", got)
	}
}

// TestInitProducerIDFencesAnOngoingTransaction: a second InitProducerId
// for an id whose producer is inside a transaction aborts it with a bumped
// epoch (markers at that epoch fence the old producer on every partition)
// and answers CONCURRENT_TRANSACTIONS; the retry gets the next epoch, and
// the old producer is PRODUCER_FENCED.
func TestInitProducerIDFencesAnOngoingTransaction(t *testing.T) {
	e := newEnv(t)
	e.elect(1)
	pid, epoch, _ := e.init("etl", 60000)
	e.addOK("etl", pid, epoch, tp("a", 0))
	if _, _, code := e.init("etl", 60000); code != kerr.ConcurrentTransactions.Code {
		t.Fatalf("InitProducerId over an ongoing transaction: %s", codeName(code))
	}
	e.waitFor("the abort to complete", func() bool { return strings.HasPrefix(e.describe("etl"), "CompleteAbort") })
	calls := e.markers.calls()
	if len(calls) != 1 || calls[0].commit || calls[0].epoch != 1 || calls[0].pid != pid {
		t.Fatalf("markers %+v", calls)
	}
	pid2, epoch2, code := e.init("etl", 60000)
	if code != 0 || pid2 != pid || epoch2 != 2 {
		t.Fatalf("retry: pid %d epoch %d %s", pid2, epoch2, codeName(code))
	}
	if got := e.add("etl", pid, epoch, tp("a", 1)); got[tp("a", 1)] != kerr.ProducerFenced.Code {
		t.Fatalf("zombie AddPartitionsToTxn: %v", got)
	}
	if code := e.end("etl", pid, epoch, true); code != kerr.ProducerFenced.Code {
		t.Fatalf("zombie EndTxn: %s", codeName(code))
	}
	if code := e.end("etl", pid+1, epoch2, true); code != kerr.InvalidProducerIDMapping.Code {
		t.Fatalf("EndTxn with another producer id: %s", codeName(code))
	}
	if code := e.end("etl", pid, epoch2, true); code != kerr.InvalidTxnState.Code {
		t.Fatalf("EndTxn with no transaction: %s", codeName(code))
	}
}

// TestTimedOutTransactionIsAborted: an ongoing transaction older than its
// timeout is aborted by the scan, with a bumped epoch.
func TestTimedOutTransactionIsAborted(t *testing.T) {
	e := newEnv(t)
	e.elect(1)
	pid, epoch, _ := e.init("slow", 1000)
	e.addOK("slow", pid, epoch, tp("b", 0))
	e.c.abortTimedOut()
	if got := e.describe("slow"); !strings.HasPrefix(got, "Ongoing") {
		t.Fatalf("aborted before its timeout: %s", got)
	}
	e.clk.Advance(1001 * time.Millisecond)
	e.c.abortTimedOut()
	e.waitFor("CompleteAbort", func() bool { return strings.HasPrefix(e.describe("slow"), "CompleteAbort") })
	if calls := e.markers.calls(); len(calls) != 1 || calls[0].commit || calls[0].epoch != epoch+1 {
		t.Fatalf("markers %+v", calls)
	}
	if code := e.end("slow", pid, epoch, true); code != kerr.ProducerFenced.Code {
		t.Fatalf("the timed out producer's commit: %s", codeName(code))
	}
}

// TestNewCoordinatorCompletesPreparedTransaction: the coordinator stops
// after PrepareCommit with markers unwritten; the next leader of the
// partition loads it and writes them, at its own coordinator epoch.
func TestNewCoordinatorCompletesPreparedTransaction(t *testing.T) {
	e := newEnv(t)
	e.elect(1)
	pid, epoch, _ := e.init("app", 60000)
	e.addOK("app", pid, epoch, tp("a", 0))
	e.markers.err = func(storage.TopicPartition) int16 { return kerr.NotLeaderForPartition.Code }
	if code := e.end("app", pid, epoch, true); code != 0 {
		t.Fatalf("EndTxn: %s", codeName(code))
	}
	e.waitFor("a marker attempt", func() bool { return len(e.markers.calls()) > 0 })
	p := e.c.PartitionFor("app")
	e.c.OnResignation(p)
	e.markers.mu.Lock()
	e.markers.err = nil
	e.markers.reqs = nil
	e.markers.mu.Unlock()

	e.c.OnElection(p, 2)
	e.waitFor("CompleteCommit", func() bool { return strings.HasPrefix(e.describe("app"), "CompleteCommit") })
	calls := e.markers.calls()
	if len(calls) == 0 || calls[len(calls)-1].coordEpoch != 2 || !calls[len(calls)-1].commit {
		t.Fatalf("markers after the failover %+v", calls)
	}
	if got := strings.Join(e.log.states(t, p, "app"), " "); got != "Empty Ongoing PrepareCommit CompleteCommit" {
		t.Fatalf("log: %s", got)
	}
}

// TestFencedCoordinatorLeavesTheTransaction: a leader that has seen a newer
// coordinator epoch answers TRANSACTION_COORDINATOR_FENCED; this
// coordinator stops sending and appends nothing more.
func TestFencedCoordinatorLeavesTheTransaction(t *testing.T) {
	e := newEnv(t)
	e.elect(1)
	pid, epoch, _ := e.init("app", 60000)
	e.addOK("app", pid, epoch, tp("a", 0))
	e.markers.err = func(storage.TopicPartition) int16 { return kerr.TransactionCoordinatorFenced.Code }
	if code := e.end("app", pid, epoch, false); code != 0 {
		t.Fatalf("EndTxn: %s", codeName(code))
	}
	e.waitFor("a marker attempt", func() bool { return len(e.markers.calls()) > 0 })
	time.Sleep(50 * time.Millisecond)
	if n := len(e.markers.calls()); n != 1 {
		t.Fatalf("%d marker requests after the fence, want 1", n)
	}
	if got := strings.Join(e.log.states(t, e.c.PartitionFor("app"), "app"), " "); got != "Empty Ongoing PrepareAbort" {
		t.Fatalf("log: %s", got)
	}
}

// TestCoordinatorErrors: ids of partitions not served, a partition still
// loading, unknown topics, a failed append, timeouts out of range.
func TestCoordinatorErrors(t *testing.T) {
	e := newEnv(t)
	if _, _, code := e.init("x", 1000); code != kerr.NotCoordinator.Code {
		t.Fatalf("not led: %s", codeName(code))
	}
	gate := make(chan struct{})
	e.log.readGate = gate
	e.c.OnElection(e.c.PartitionFor("x"), 1)
	if _, _, code := e.init("x", 1000); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("loading: %s", codeName(code))
	}
	close(gate)
	e.waitFor("loaded", func() bool { _, _, code := e.init("x", 1000); return code == 0 })

	if _, _, code := e.init("x", 0); code != kerr.InvalidTransactionTimeout.Code {
		t.Fatalf("timeout 0: %s", codeName(code))
	}
	if _, _, code := e.init("x", int32(DefaultMaxTimeout.Milliseconds())+1); code != kerr.InvalidTransactionTimeout.Code {
		t.Fatalf("timeout above the maximum: %s", codeName(code))
	}
	pid, epoch, _ := e.init("x", 1000)
	got := e.add("x", pid, epoch, tp("a", 0), tp("nope", 0))
	if got[tp("nope", 0)] != kerr.UnknownTopicOrPartition.Code || got[tp("a", 0)] != kerr.OperationNotAttempted.Code {
		t.Fatalf("unknown topic: %v", got)
	}
	e.log.mu.Lock()
	e.log.failNext = []error{kerr.NotEnoughReplicas}
	e.log.mu.Unlock()
	if got := e.add("x", pid, epoch, tp("a", 0)); got[tp("a", 0)] != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("failed append: %v", got)
	}
	e.addOK("x", pid, epoch, tp("a", 0)) // the failed transition was dropped
	if got := e.describe("unknown"); got != kerr.NotCoordinator.Error() && got != kerr.TransactionalIDNotFound.Error() {
		t.Fatalf("describe unknown: %s", got)
	}
}

// TestVerifyOnly: AddPartitionsToTxn v4 with VerifyOnly (KIP-890, sent by
// partition leaders) changes nothing and answers per partition.
func TestVerifyOnly(t *testing.T) {
	e := newEnv(t)
	e.elect(1)
	pid, epoch, _ := e.init("v", 60000)
	e.addOK("v", pid, epoch, tp("a", 0))
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 5
	for _, tx := range []struct {
		pid   int64
		epoch int16
	}{{pid, epoch}, {pid, epoch + 1}} {
		rt := kmsg.NewAddPartitionsToTxnRequestTransaction()
		rt.TransactionalID, rt.ProducerID, rt.ProducerEpoch, rt.VerifyOnly = "v", tx.pid, tx.epoch, true
		topic := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		topic.Topic, topic.Partitions = "a", []int32{0, 1}
		rt.Topics = append(rt.Topics, topic)
		req.Transactions = append(req.Transactions, rt)
	}
	resp := e.c.AddPartitionsToTxn(context.Background(), req)
	codes := func(i int) []int16 {
		var out []int16
		for _, p := range resp.Transactions[i].Topics[0].Partitions {
			out = append(out, p.ErrorCode)
		}
		return out
	}
	if got := codes(0); got[0] != 0 || got[1] != kerr.TransactionAbortable.Code {
		t.Fatalf("verify: %v", got)
	}
	if got := codes(1); got[0] != kerr.ProducerFenced.Code || got[1] != kerr.ProducerFenced.Code {
		t.Fatalf("verify with another epoch: %v", got)
	}
	// The in-process question a partition leader on this broker asks
	// answers the same, partition by partition.
	parts := []storage.TopicPartition{tp("a", 0), tp("a", 1), tp("nope", 0)}
	got := make([]int16, len(parts))
	e.c.VerifyPartitions("v", pid, epoch, parts[:2], got[:2])
	if got[0] != 0 || got[1] != kerr.TransactionAbortable.Code {
		t.Fatalf("VerifyPartitions: %v", got[:2])
	}
	e.c.VerifyPartitions("v", pid, epoch+1, parts[:2], got[:2])
	if got[0] != kerr.ProducerFenced.Code || got[1] != kerr.ProducerFenced.Code {
		t.Fatalf("VerifyPartitions with another epoch: %v", got[:2])
	}
	clear(got)
	e.c.VerifyPartitions("v", pid, epoch, parts, got)
	if got[0] != kerr.OperationNotAttempted.Code || got[2] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("VerifyPartitions with an unknown topic: %v", got)
	}
	if got := e.describe("v"); got != "Ongoing pid=1001 epoch=0 a[0]" {
		t.Fatalf("verification changed the transaction: %s", got)
	}
}

// TestListTransactionsAndExpiry: filters by state, producer id, duration
// and pattern; an idle id expires with a tombstone.
func TestListTransactionsAndExpiry(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.IDExpiration = time.Minute })
	e.elect(1)
	pid, epoch, _ := e.init("orders-1", 60000)
	e.addOK("orders-1", pid, epoch, tp("a", 0))
	e.init("orders-2", 60000)
	e.init("payments", 60000)
	list := func(edit func(*kmsg.ListTransactionsRequest)) (ids []string, unknown []string, code int16) {
		req := kmsg.NewPtrListTransactionsRequest()
		req.Version, req.DurationFilterMillis = 2, -1
		edit(req)
		resp := e.c.ListTransactions(context.Background(), req)
		for _, s := range resp.TransactionStates {
			ids = append(ids, s.TransactionalID+":"+s.TransactionState)
		}
		return ids, resp.UnknownStateFilters, resp.ErrorCode
	}
	if ids, _, _ := list(func(*kmsg.ListTransactionsRequest) {}); strings.Join(ids, " ") != "orders-1:Ongoing orders-2:Empty payments:Empty" {
		t.Fatalf("all: %v", ids)
	}
	if ids, unknown, _ := list(func(r *kmsg.ListTransactionsRequest) { r.StateFilters = []string{"Ongoing", "Bogus"} }); len(ids) != 1 || unknown[0] != "Bogus" {
		t.Fatalf("by state: %v %v", ids, unknown)
	}
	if ids, _, _ := list(func(r *kmsg.ListTransactionsRequest) { r.ProducerIDFilters = []int64{pid} }); len(ids) != 1 {
		t.Fatalf("by producer id: %v", ids)
	}
	if ids, _, _ := list(func(r *kmsg.ListTransactionsRequest) { r.TransactionalIDPattern = kmsg.StringPtr("orders-.*") }); len(ids) != 2 {
		t.Fatalf("by pattern: %v", ids)
	}
	if _, _, code := list(func(r *kmsg.ListTransactionsRequest) { r.TransactionalIDPattern = kmsg.StringPtr("(") }); code != kerr.InvalidRegularExpression.Code {
		t.Fatalf("bad pattern: %s", codeName(code))
	}
	e.clk.Advance(2 * time.Minute)
	// As Kafka's filter: ids without a transaction have a start of -1.
	e.init("fresh", 60000)
	e.addOK("fresh", 1004, 0, tp("a", 1))
	if ids, _, _ := list(func(r *kmsg.ListTransactionsRequest) {
		r.DurationFilterMillis, r.StateFilters = 60000, []string{"Ongoing"}
	}); strings.Join(ids, " ") != "orders-1:Ongoing" {
		t.Fatalf("ongoing for longer than a minute: %v", ids)
	}
	e.c.expireIDs()
	if ids, _, _ := list(func(*kmsg.ListTransactionsRequest) {}); strings.Join(ids, " ") != "fresh:Ongoing orders-1:Ongoing" {
		t.Fatalf("after expiry: %v", ids)
	}
	if got := e.log.states(t, e.c.PartitionFor("payments"), "payments"); got[len(got)-1] != "Dead" {
		t.Fatalf("payments log: %v", got)
	}
	if pid2, _, code := e.init("payments", 60000); code != 0 || pid2 == 0 {
		t.Fatalf("an expired id used again: %d %s", pid2, codeName(code))
	}
}
