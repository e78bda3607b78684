package broker_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// etlTarget is one broker or a cluster, as the ETL test needs it.
type etlTarget interface {
	Client(t testing.TB, opts ...kgo.Opt) *kgo.Client
	Admin(t testing.TB, opts ...kgo.Opt) *kadm.Client
}

// etlTxnConfig lets a producer that dies inside its transaction be aborted
// by the coordinator within seconds (transaction.timeout.ms below) instead
// of the default 10 s scan.
var etlTxnConfig = []string{"transaction.abort.timed.out.transaction.cleanup.interval.ms=300"}

// etlStage is the members of one consume-transform-produce stage: they
// read `from` read_committed in group, write what they read to `to` in a
// transaction with their offsets (kgo's GroupTransactSession: Begin,
// produce, End = TxnOffsetCommit and EndTxn).
type etlStage struct {
	t           *testing.T
	target      etlTarget
	group       string
	from, to    string
	txns        atomic.Int64 // transactions committed
	errs        chan error
	wg          sync.WaitGroup
	victimKills atomic.Int64
}

// member runs one member until ctx ends. A victim dies inside its
// transaction number dieAt (counting from 1), after producing: it closes
// its client without ending the transaction, as a killed process leaves
// it, so the coordinator must abort it when it times out while the group
// hands its partitions to the others.
func (s *etlStage) member(ctx context.Context, id string, dieAt int) {
	s.wg.Go(func() {
		sess, err := kgo.NewGroupTransactSession(
			kgo.SeedBrokers(s.target.Client(s.t).OptValue(kgo.SeedBrokers).([]string)...),
			kgo.TransactionalID(id),
			kgo.TransactionTimeout(4*time.Second),
			kgo.ConsumerGroup(s.group),
			kgo.ConsumeTopics(s.from),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.RequireStableFetchOffsets(),
			kgo.SessionTimeout(10*time.Second),
			kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		)
		if err != nil {
			s.errs <- err
			return
		}
		defer sess.Close()
		n := 0
		for ctx.Err() == nil {
			pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			fs := sess.PollRecords(pctx, 50) // small transactions: many of them
			cancel()
			if err := fs.Err0(); err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				s.errs <- fmt.Errorf("%s: poll: %w", id, err)
				continue
			}
			if fs.NumRecords() == 0 {
				continue
			}
			if err := sess.Begin(); err != nil {
				s.errs <- fmt.Errorf("%s: begin: %w", id, err)
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				sess.Produce(ctx, &kgo.Record{Topic: s.to, Key: r.Key, Value: r.Value}, func(_ *kgo.Record, err error) {
					if err != nil && !errors.Is(err, kgo.ErrAborting) && ctx.Err() == nil {
						s.errs <- fmt.Errorf("%s: produce: %w", id, err)
					}
				})
			})
			n++
			if n == dieAt {
				_ = sess.Client().Flush(ctx) // its writes reach the log, uncommitted
				s.victimKills.Add(1)
				return // the deferred Close leaves the transaction open
			}
			committed, err := sess.End(ctx, kgo.TryCommit)
			switch {
			case err != nil && ctx.Err() == nil:
				s.errs <- fmt.Errorf("%s: end: %w", id, err)
			case committed:
				s.txns.Add(1)
			}
		}
	})
}

// produceInput writes n keyed records to topic in committed transactions
// of batch records.
func produceInput(t *testing.T, ctx context.Context, target etlTarget, topic string, n, batch int) {
	t.Helper()
	cl := target.Client(t, kgo.TransactionalID("etl-input"), kgo.DefaultProduceTopic(topic))
	for i := 0; i < n; i += batch {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for j := i; j < min(i+batch, n); j++ {
			recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "k%05d", j), Value: fmt.Appendf(nil, "v%05d", j)})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("input produce: %v", err)
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatalf("input commit: %v", err)
		}
	}
}

// readExactlyOnce reads topic read_committed until it holds n records,
// and counts the keys of 0..n-1 that are missing or appear more than once.
func readExactlyOnce(t *testing.T, ctx context.Context, target etlTarget, topic string, n int) (lost, dups int) {
	t.Helper()
	cl := target.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	seen := map[string]int{}
	total := 0
	for total < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s", total, n, topic)
		}
		fs.EachRecord(func(r *kgo.Record) {
			seen[string(r.Key)]++
			total++
		})
	}
	// Anything more arriving within a moment is a duplicate too.
	tctx, cancel := context.WithTimeout(ctx, time.Second)
	cl.PollFetches(tctx).EachRecord(func(r *kgo.Record) { seen[string(r.Key)]++ })
	cancel()
	for i := range n {
		switch c := seen[fmt.Sprintf("k%05d", i)]; {
		case c == 0:
			lost++
		case c > 1:
			dups += c - 1
		}
	}
	return lost, dups
}

// runETL chains two transactional stages over three topics, in → mid →
// out, three members in the first stage (one of them killed inside a
// transaction) and two in the second, and checks out holds every input
// record exactly once.
func runETL(t *testing.T, target etlTarget, rf int16) {
	const n, partitions = 2000, 4
	ctx := testCtx(t, 2*time.Minute)
	adm := target.Admin(t)
	for _, topic := range []string{"etl-in", "etl-mid", "etl-out"} {
		createReplicatedTopic(t, adm, topic, partitions, rf)
	}
	produceInput(t, ctx, target, "etl-in", n, 200)

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	errs := make(chan error, 100)
	first := &etlStage{t: t, target: target, group: "etl-g1", from: "etl-in", to: "etl-mid", errs: errs}
	second := &etlStage{t: t, target: target, group: "etl-g2", from: "etl-mid", to: "etl-out", errs: errs}
	first.member(runCtx, "etl1-victim", 2)
	first.member(runCtx, "etl1-a", -1)
	first.member(runCtx, "etl1-b", -1)
	second.member(runCtx, "etl2-a", -1)
	second.member(runCtx, "etl2-b", -1)

	done := make(chan struct{})
	var lost, dups int
	go func() {
		defer close(done)
		lost, dups = readExactlyOnce(t, ctx, target, "etl-out", n)
	}()
	select {
	case <-done:
	case err := <-errs:
		t.Fatalf("ETL member failed: %v", err)
	}
	stop()
	first.wg.Wait()
	second.wg.Wait()
	t.Logf("ETL of %d records: %d + %d transactions committed, %d member killed inside a transaction; lost %d, duplicates %d",
		n, first.txns.Load(), second.txns.Load(), first.victimKills.Load(), lost, dups)
	if first.victimKills.Load() != 1 {
		t.Fatal("the victim never died inside a transaction: the test proves nothing")
	}
	if lost != 0 || dups != 0 {
		t.Fatalf("lost %d, duplicates %d: not exactly once", lost, dups)
	}
	select {
	case err := <-errs:
		t.Fatalf("ETL member failed: %v", err)
	default:
	}
}

// TestTransactionalETL is franz-go's transactional ETL, unchanged client:
// GroupTransactSession members chained over three topics on one node, a
// member killed inside a transaction, output = input exactly once.
func TestTransactionalETL(t *testing.T) {
	runETL(t, brokertest.Start(t, brokertest.WithConfig(etlTxnConfig...)), 1)
}

// TestTransactionalETLCluster is the same against three nodes, every topic
// (and __transaction_state, __consumer_offsets) replicated three times.
func TestTransactionalETLCluster(t *testing.T) {
	c := brokertest.StartCluster(t, 3, brokertest.WithConfig(append([]string{
		"transaction.state.log.num.partitions=3", "min.insync.replicas=2"}, etlTxnConfig...)...))
	runETL(t, c, 3)
}
