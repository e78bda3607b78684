package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// txnOutcome is what a transactional producer was told of one of its
// transactions.
type txnOutcome int

const (
	// txnCommitted: EndTransaction(TryCommit) returned nil. Every record
	// must be visible to read_committed readers.
	txnCommitted txnOutcome = iota
	// txnAborted: never committed: aborted on purpose, aborted because a
	// produce failed, or a commit the coordinator refused for good (the
	// producer was fenced, its transaction had been aborted). No record
	// may be visible.
	txnAborted
	// txnUncertain: the commit failed without a definite answer (a
	// connection lost, a retriable error that outlived kgo's retries):
	// the coordinator may have written PrepareCommit before the answer
	// was lost, and then completes the commit. All or none of the
	// records may be visible, as Kafka promises (kgo's EndTransaction
	// documents the case); Jepsen calls such an operation :info.
	txnUncertain
)

func (o txnOutcome) String() string {
	return [...]string{"committed", "aborted", "uncertain"}[o]
}

// txn is one transaction as its producer saw it.
type txn struct {
	producer string // transactional id
	seq      int
	values   []string // unique: "<producer>-<seq>-<i>"
	outcome  txnOutcome
	why      string // the error that decided the outcome, "" when none
}

// txnLedger collects the producers' transactions and the errors they met.
type txnLedger struct {
	committedRecords atomic.Int64

	mu     sync.Mutex
	txns   []txn
	errors map[string]int // error text (with what returned it) -> times
}

func newTxnLedger() *txnLedger { return &txnLedger{errors: map[string]int{}} }

func (l *txnLedger) add(x txn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.txns = append(l.txns, x)
	if x.outcome == txnCommitted {
		l.committedRecords.Add(int64(len(x.values)))
	}
	if x.why != "" {
		l.errors[x.why]++
	}
}

func (l *txnLedger) note(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errors[what]++
}

func (l *txnLedger) snapshot() []txn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]txn(nil), l.txns...)
}

// failures summarises the errors met, most frequent first.
func (l *txnLedger) failures() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return summarizeErrors(l.errors)
}

// txnProducer runs transactions with one transactional id, each of 10-100
// records over 2-4 partitions of the chaos topic, committing four in five
// and aborting the others on purpose. Errors are handled as franz-go
// documents them: a failed produce or commit is followed by
// EndTransaction(TryAbort); a client kgo declares unusable (its next
// BeginTransaction fails) is replaced by a new one with the same
// transactional id, whose InitProducerId fences the old one.
type txnProducer struct {
	id        string
	rng       *rand.Rand // this producer's own: the schedule replays per seed
	newClient func() *kgo.Client
	led       *txnLedger
	cl        *kgo.Client
	replaced  int
	// stallEvery: one transaction in stallEvery (none if 0) hangs
	// between its produce and its end for longer than the producer's
	// transaction timeout, stallTimeout.
	stallEvery int
	stalls     int
	// doing is what the producer is doing (a string), for a test that
	// waits for it in vain.
	doing atomic.Value
}

// step notes what the producer starts doing.
func (p *txnProducer) step(format string, args ...any) { p.doing.Store(fmt.Sprintf(format, args...)) }

// run runs transactions until stop is closed, ending the current one
// first, or ctx ends.
func (p *txnProducer) run(ctx context.Context, stop <-chan struct{}) {
	p.cl = p.newClient()
	defer p.step("stopped")
	for seq := 0; ; seq++ {
		// A short pause between transactions keeps four producers from
		// starving the cluster (and the tests beside it) of CPU, and
		// varies where in a transaction a fault lands.
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-time.After(between(p.rng, 5*time.Millisecond, 30*time.Millisecond)):
		}
		p.transaction(ctx, seq)
	}
}

// transaction runs transaction seq.
func (p *txnProducer) transaction(ctx context.Context, seq int) {
	n := 10 + p.rng.IntN(91)
	parts := p.rng.Perm(chaosPartitions)[:2+p.rng.IntN(3)]
	commit := p.rng.IntN(5) != 0
	x := txn{producer: p.id, seq: seq}
	recs := make([]*kgo.Record, n)
	for i := range recs {
		v := fmt.Sprintf("%s-%d-%d", p.id, seq, i)
		x.values = append(x.values, v)
		recs[i] = &kgo.Record{Topic: chaosTopic, Partition: int32(parts[i%len(parts)]), Value: []byte(v)}
	}
	p.step("beginning transaction %d", seq)
	if err := p.cl.BeginTransaction(); err != nil {
		// kgo cannot go on with this client (a fatal producer id
		// error): a new one takes the id over.
		p.led.note("begin: " + err.Error())
		p.cl.Close()
		p.cl = p.newClient()
		p.replaced++
		if err := p.cl.BeginTransaction(); err != nil {
			p.led.note("begin with a new client: " + err.Error())
			return
		}
	}
	p.step("producing %d records of transaction %d", n, seq)
	produceErr := p.cl.ProduceSync(ctx, recs...).FirstErr()
	if p.stallEvery > 0 && p.rng.IntN(p.stallEvery) == 0 {
		// Hang past the transaction timeout: the coordinator aborts the
		// transaction and fences the producer (a bumped epoch), whose
		// commit is then refused.
		p.stalls++
		time.Sleep(stallTimeout + 2*time.Second)
	}
	switch {
	case produceErr != nil:
		x.outcome, x.why = txnAborted, "produce: "+produceErr.Error()
	case !commit:
		x.outcome = txnAborted
	default:
		p.step("committing transaction %d", seq)
		err := p.cl.EndTransaction(ctx, kgo.TryCommit)
		if err == nil {
			x.outcome = txnCommitted
			p.led.add(x)
			return
		}
		x.outcome, x.why = txnUncertain, "commit: "+err.Error()
		if refusedForGood(err) {
			x.outcome = txnAborted
		}
	}
	p.abort(ctx)
	p.led.add(x)
}

// abort ends the transaction with TryAbort, retrying while kgo answers
// with an error it documents as worth retrying: an outcome it could not
// confirm (a lost connection, a retriable error that outlived its
// retries) or TRANSACTION_ABORTABLE. On any other error the client is
// left as it is; its next BeginTransaction tells whether it can go on.
func (p *txnProducer) abort(ctx context.Context) {
	for range 3 {
		p.step("aborting a transaction")
		err := p.cl.EndTransaction(ctx, kgo.TryAbort)
		if err == nil {
			return
		}
		p.led.note("abort: " + err.Error())
		if refusedForGood(err) && !errors.Is(err, kerr.TransactionAbortable) {
			return
		}
	}
}

// refusedForGood reports whether a failed EndTransaction(TryCommit) means
// the transaction did not commit: kgo did not attempt it
// (OPERATION_NOT_ATTEMPTED, the producer id had failed), or the
// coordinator refused it with a non-retriable error (the producer was
// fenced, the transaction was aborted or no longer exists). Anything else
// leaves the outcome unknown.
func refusedForGood(err error) bool {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return false
	}
	return ke == kerr.OperationNotAttempted || !ke.Retriable && ke != kerr.UnknownServerError
}

// txnWorkload runs transactional producers until stopped.
type txnWorkload struct {
	producers []*txnProducer
	stop      chan struct{}
	wg        sync.WaitGroup
}

// startTxnWorkload starts n transactional producers ("txn-1" ... "txn-n")
// on the chaos topic, each with a random source drawn from the test's.
// The last one has a short transaction timeout and now and then hangs in
// a transaction until the coordinator aborts it.
func (e *env) startTxnWorkload(n int, led *txnLedger) *txnWorkload {
	w := &txnWorkload{stop: make(chan struct{})}
	for i := range n {
		id := fmt.Sprintf("txn-%d", i+1)
		timeout, stallEvery := txnTimeout, 0
		if i == n-1 {
			timeout, stallEvery = stallTimeout, 25
		}
		p := &txnProducer{id: id, rng: rand.New(rand.NewPCG(e.rng.Uint64(), e.rng.Uint64())), led: led, stallEvery: stallEvery,
			newClient: func() *kgo.Client {
				return e.c.Client(e.t, append(producerOpts(), kgo.TransactionalID(id), kgo.TransactionTimeout(timeout))...)
			}}
		w.producers = append(w.producers, p)
		w.wg.Go(func() { p.run(e.ctx, w.stop) })
	}
	return w
}

// txnTimeout is the producers' transaction.timeout.ms: long enough to
// ride out a failover, short enough that a transaction a failover left
// behind is aborted within the test. stallTimeout is the stalling
// producer's, which a failover may exceed too.
const (
	txnTimeout   = 15 * time.Second
	stallTimeout = 3 * time.Second
)

// Stop lets every producer end its transaction and waits for them.
func (w *txnWorkload) Stop(t testing.TB, timeout time.Duration) {
	t.Helper()
	close(w.stop)
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		var doing []string
		for _, p := range w.producers {
			doing = append(doing, fmt.Sprintf("%s: %v", p.id, p.doing.Load()))
		}
		t.Fatalf("transactional producers still running %v after being stopped: %s", timeout, strings.Join(doing, "; "))
	}
}

// replaced is how many clients were replaced because kgo gave up on
// them, and stalls how many transactions hung past their timeout.
func (w *txnWorkload) replaced() (replaced, stalls int) {
	for _, p := range w.producers {
		replaced += p.replaced
		stalls += p.stalls
	}
	return replaced, stalls
}
