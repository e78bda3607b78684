package txn

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

// endV2 is an EndTxn v5 (KIP-890 part 2): its code and the producer id
// and epoch it answers.
func (e *env) endV2(id string, pid int64, epoch int16, commit bool) (int16, int64, int16) {
	req := kmsg.NewPtrEndTxnRequest()
	req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = 5, id, pid, epoch, commit
	r := e.c.EndTxn(context.Background(), req)
	return r.ErrorCode, r.ProducerID, r.ProducerEpoch
}

// addV2 adds partitions as a partition leader does for a Produce v12 under
// transaction.version 2, and returns the first error code (0: added).
func (e *env) addV2(id string, pid int64, epoch int16, tps ...storage.TopicPartition) int16 {
	codes := make([]int16, len(tps))
	e.c.AddPartitions(context.Background(), id, pid, epoch, tps, codes)
	for _, c := range codes {
		if c != 0 {
			return c
		}
	}
	return 0
}

// TestTransactionVersion2EndBumpsTheEpoch: KIP-890 part 2. Partitions
// added by their leaders make the transaction a version 2 one, whose
// EndTxn v5 bumps the epoch: the markers carry the new epoch, the answer
// hands it to the producer, a retry (at the old epoch) is recognised, the
// old epoch is fenced, and an abort with no transaction ongoing is valid
// and bumps the epoch again.
func TestTransactionVersion2EndBumpsTheEpoch(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ConcurrentWait = time.Minute })
	e.elect(4)
	pid, epoch, _ := e.init("app", 60000)
	if code := e.addV2("app", pid, epoch, tp("a", 0), tp("b", 1)); code != 0 {
		t.Fatalf("add: %s", codeName(code))
	}
	code, gotPID, gotEpoch := e.endV2("app", pid, epoch, true)
	if code != 0 || gotPID != pid || gotEpoch != epoch+1 {
		t.Fatalf("EndTxn v5: %s pid %d epoch %d, want pid %d epoch %d", codeName(code), gotPID, gotEpoch, pid, epoch+1)
	}
	e.waitFor("CompleteCommit", func() bool { return strings.HasPrefix(e.describe("app"), "CompleteCommit") })
	for _, c := range e.markers.calls() {
		if c.pid != pid || c.epoch != epoch+1 || !c.commit {
			t.Fatalf("marker %+v, want producer %d at the bumped epoch %d", c, pid, epoch+1)
		}
	}
	// The retry of the end whose answer was lost, at the old epoch.
	if code, p, ep := e.endV2("app", pid, epoch, true); code != 0 || p != pid || ep != epoch+1 {
		t.Fatalf("EndTxn v5 retry: %s pid %d epoch %d", codeName(code), p, ep)
	}
	if code, _, _ := e.endV2("app", pid, epoch, false); code != kerr.InvalidTxnState.Code {
		t.Fatalf("abort retrying a commit: %s", codeName(code))
	}
	// The old epoch is fenced; a commit with nothing ongoing is invalid.
	if code := e.addV2("app", pid, epoch, tp("a", 1)); code != kerr.ProducerFenced.Code {
		t.Fatalf("add at the ended epoch: %s", codeName(code))
	}
	if code, _, _ := e.endV2("app", pid, epoch+1, true); code != kerr.InvalidTxnState.Code {
		t.Fatalf("commit with no transaction: %s", codeName(code))
	}
	// An abort with nothing ongoing bumps the epoch and writes no marker.
	before := len(e.markers.calls())
	if code, p, ep := e.endV2("app", pid, epoch+1, false); code != 0 || p != pid || ep != epoch+2 {
		t.Fatalf("empty abort: %s pid %d epoch %d", codeName(code), p, ep)
	}
	e.waitFor("CompleteAbort", func() bool { return strings.HasPrefix(e.describe("app"), "CompleteAbort") })
	if n := len(e.markers.calls()); n != before {
		t.Fatalf("the empty abort wrote %d markers", n-before)
	}
	// The next transaction, at the epoch the abort answered.
	if code := e.addV2("app", pid, epoch+2, tp("a", 1)); code != 0 {
		t.Fatalf("add at the new epoch: %s", codeName(code))
	}
	if got := e.describe("app"); got != "Ongoing pid=1001 epoch=2 a[1]" {
		t.Fatalf("describe: %s", got)
	}
	p := e.c.PartitionFor("app")
	if got := strings.Join(e.log.states(t, p, "app"), " "); got !=
		"Empty Ongoing PrepareCommit CompleteCommit PrepareAbort CompleteAbort Ongoing" {
		t.Fatalf("log: %s", got)
	}
	// A reloaded coordinator knows the transaction is a version 2 one.
	e.elect(5)
	if code, p, ep := e.endV2("app", pid, epoch+2, true); code != 0 || p != pid || ep != epoch+3 {
		t.Fatalf("EndTxn v5 after a reload: %s pid %d epoch %d", codeName(code), p, ep)
	}
}

// last is the last epoch of a producer id (epochExhausted).
const last = lastProducerEpoch

// lastEpochTransaction initializes id's producer, moves it to the last
// epoch of its producer id and starts a transaction version 2 transaction
// there; it returns the producer id.
func (e *env) lastEpochTransaction(id string) int64 {
	e.t.Helper()
	pid, _, _ := e.init(id, 60000)
	s, _ := e.c.shardOf(id)
	s.mu.Lock()
	s.txns[id].ProducerEpoch = last
	s.mu.Unlock()
	if code := e.addV2(id, pid, last, tp("a", 0)); code != 0 {
		e.t.Fatalf("add: %s", codeName(code))
	}
	return pid
}

// TestTransactionVersion2RotatesTheProducerID: once the epochs of a
// producer id are exhausted, the end moves the transactional id to a new
// producer id at epoch 0 (KIP-890 part 2). The markers are written with
// the old id at the last epoch; the answer, and its retry, hand out the
// new one; a write of the new id before the markers are written waits for
// them.
func TestTransactionVersion2RotatesTheProducerID(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ConcurrentWait = time.Minute })
	e.elect(2)
	pid := e.lastEpochTransaction("app")
	gate := make(chan struct{})
	e.markers.mu.Lock()
	e.markers.gate = gate
	e.markers.mu.Unlock()
	code, next, nextEpoch := e.endV2("app", pid, last, true)
	if code != 0 || next == pid || next < 0 || nextEpoch != 0 {
		t.Fatalf("EndTxn v5 at the last epoch: %s pid %d epoch %d", codeName(code), next, nextEpoch)
	}
	added := make(chan int16, 1)
	go func() { added <- e.addV2("app", next, 0, tp("a", 1)) }()
	select {
	case c := <-added:
		t.Fatalf("the new producer id was answered %s while the markers were held", codeName(c))
	case <-time.After(100 * time.Millisecond):
	}
	close(gate)
	if c := <-added; c != 0 {
		t.Fatalf("the new producer id's add after the markers: %s", codeName(c))
	}
	calls := e.markers.calls()
	if !slices.ContainsFunc(calls, func(c markerCall) bool { return c.pid == pid && c.epoch == last+1 }) || len(calls) != 1 {
		t.Fatalf("markers %+v, want producer %d at epoch %d", calls, pid, last+1)
	}
	if got := e.describe("app"); got != "Ongoing pid="+strconv.FormatInt(next, 10)+" epoch=0 a[1]" {
		t.Fatalf("describe: %s", got)
	}
	// The old id's retry of the end is recognised, and answered the new id.
	if code, p, ep := e.endV2("app", next, 0, false); code != 0 || p != next || ep != 1 {
		t.Fatalf("abort at the new id: %s pid %d epoch %d", codeName(code), p, ep)
	}
	e.waitFor("CompleteAbort", func() bool { return strings.HasPrefix(e.describe("app"), "CompleteAbort") })
	if code, _, _ := e.endV2("app", pid, last, true); code != kerr.ProducerFenced.Code && code != kerr.InvalidProducerIDMapping.Code {
		t.Fatalf("the old id's retry after the new id ended a transaction: %s", codeName(code))
	}
}

// TestTransactionVersion2EndRetryAfterRotation: the retry of the end that
// rotated the producer id, at the old id and its last epoch, answers the
// new id.
func TestTransactionVersion2EndRetryAfterRotation(t *testing.T) {
	e := newEnv(t)
	e.elect(2)
	pid := e.lastEpochTransaction("app")
	_, next, _ := e.endV2("app", pid, last, false)
	e.waitFor("CompleteAbort", func() bool { return strings.HasPrefix(e.describe("app"), "CompleteAbort") })
	if code, p, ep := e.endV2("app", pid, last, false); code != 0 || p != next || ep != 0 {
		t.Fatalf("retry at the old id: %s pid %d epoch %d, want pid %d epoch 0", codeName(code), p, ep, next)
	}
	// The producer's InitProducerId with its last id and epoch (KIP-360)
	// is recognised too.
	req := kmsg.NewPtrInitProducerIDRequest()
	id := "app"
	req.Version, req.TransactionalID, req.TransactionTimeoutMillis = 4, &id, 60000
	req.ProducerID, req.ProducerEpoch = pid, last
	if r := e.c.InitProducerID(context.Background(), req); r.ErrorCode != 0 || r.ProducerID != next || r.ProducerEpoch != 0 {
		t.Fatalf("InitProducerId with the old id: %s pid %d epoch %d", codeName(r.ErrorCode), r.ProducerID, r.ProducerEpoch)
	}
}

// TestClassicEndKeepsTheEpoch: a transaction whose partitions the client
// added itself (the classic protocol) ends at its epoch even with EndTxn
// v5's retry rules around.
func TestClassicEndKeepsTheEpoch(t *testing.T) {
	e := newEnv(t)
	e.elect(2)
	pid, epoch, _ := e.init("app", 60000)
	e.addOK("app", pid, epoch, tp("a", 0))
	if code := e.end("app", pid, epoch, true); code != 0 {
		t.Fatalf("EndTxn v3: %s", codeName(code))
	}
	e.waitFor("CompleteCommit", func() bool { return strings.HasPrefix(e.describe("app"), "CompleteCommit") })
	for _, c := range e.markers.calls() {
		if c.epoch != epoch {
			t.Fatalf("classic marker at epoch %d, want %d", c.epoch, epoch)
		}
	}
	if got := e.describe("app"); got != "CompleteCommit pid=1001 epoch=0" {
		t.Fatalf("describe: %s", got)
	}
}

// TestClassicEndOfAnAddedTransaction: the client's transaction version is
// the EndTxn's (Kafka's prepareAbortOrCommit): a transaction whose
// partitions a leader added but that ends with EndTxn v3 keeps its epoch,
// and the retry of that end, at the same epoch, answers NONE.
func TestClassicEndOfAnAddedTransaction(t *testing.T) {
	e := newEnv(t)
	e.elect(2)
	pid, epoch, _ := e.init("app", 60000)
	if code := e.addV2("app", pid, epoch, tp("a", 0)); code != 0 {
		t.Fatalf("add: %s", codeName(code))
	}
	if code := e.end("app", pid, epoch, true); code != 0 {
		t.Fatalf("EndTxn v3: %s", codeName(code))
	}
	e.waitFor("CompleteCommit", func() bool { return strings.HasPrefix(e.describe("app"), "CompleteCommit") })
	if code := e.end("app", pid, epoch, true); code != 0 {
		t.Fatalf("EndTxn v3 retry: %s", codeName(code))
	}
	if got := e.describe("app"); got != "CompleteCommit pid=1001 epoch=0" {
		t.Fatalf("describe: %s", got)
	}
}
