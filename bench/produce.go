package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ProduceConfig is one produce workload: ProducerConfig's clients send
// records until Records, Bytes or Duration is reached (the first set, in that
// order), at Rate records a second or as fast as the broker acknowledges.
// It follows Kafka's tools/ProducerPerformance: latency runs from the send
// call (which blocks while buffer.memory is full) to the acknowledgement, and
// MB/s divides by 2^20.
type ProduceConfig struct {
	ProducerConfig

	Records  int64
	Bytes    int64 // rounded up to whole records
	Duration time.Duration
	// Rate is records per second over all producers; 0 is max throughput.
	// With a rate, latency is measured from when a record was due, not when
	// Produce was called, so a broker that stalls the producer is charged
	// for the records it kept waiting (HdrHistogram's coordinated-omission
	// correction).
	Rate float64
	// TxnRecords, when > 0, makes the workload transactional: each
	// producer client has a transactional.id of its own and sends its
	// records in transactions of TxnRecords records each (begin, produce,
	// flush, commit), the loop of an application using transactions, as
	// Kafka's ProducerPerformance runs with --transactional-id (which
	// bounds a transaction by time, we by records). Only committed records
	// count; it needs acks=all and no Rate.
	TxnRecords int
	// TxnIDPrefix prefixes the transactional.ids; "" is the topic's name.
	TxnIDPrefix string

	Label     string // names the broker in the Result
	BrokerPID int    // non-zero: measure the broker's CPU and memory
	// NodePIDs are the processes of a cluster under test, each measured
	// into Result.NodeCosts.
	NodePIDs []int
	Proc     *ProcReader
	Progress io.Writer // nil: no progress line
	// Profile, when set, fetches the broker's profiles over the workload.
	Profile *Profiler

	workload string // "produce" unless a wrapper names its phase
	// valueFn, when set, builds record n's value (e2e stamps the send
	// time into it); the default reuses the value pool's bytes.
	valueFn func(pool *valuePool, n int64, sent time.Time) []byte
	// place, when set, gives record n its topic and partition (kgo's
	// ManualPartitioner); the topics must exist. Unset, every record goes
	// to Topic, created when missing, partitioned by kgo's default.
	place func(n int64, r *kgo.Record)
}

// limit is the record count to stop at, 0 for a duration-bounded run.
func (c *ProduceConfig) limit() int64 {
	switch {
	case c.Records > 0:
		return c.Records
	case c.Bytes > 0 && c.RecordSize > 0:
		return (c.Bytes + int64(c.RecordSize) - 1) / int64(c.RecordSize)
	case c.Bytes > 0:
		return c.Bytes
	}
	return 0
}

// RunProduce runs the workload against the broker at cfg.Bootstrap, creating
// the topic when it is missing. The Result is filled even when an error is
// returned for failed records or a cancelled ctx.
func RunProduce(ctx context.Context, cfg ProduceConfig) (Result, error) {
	cfg.fill()
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	if cfg.Records < 0 || cfg.Bytes < 0 || cfg.Duration < 0 || cfg.Rate < 0 || cfg.TxnRecords < 0 {
		return Result{}, errors.New("bench: negative records, bytes, duration, rate or transaction size")
	}
	if err := cfg.validateTxn(); err != nil {
		return Result{}, err
	}
	limit := cfg.limit()
	if limit == 0 && cfg.Duration == 0 {
		return Result{}, errors.New("bench: produce needs records, bytes or a duration")
	}
	if cfg.workload == "" {
		cfg.workload = "produce"
		if cfg.TxnRecords > 0 {
			cfg.workload = WorkloadProduceTxn
		}
	}
	if cfg.place == nil {
		if _, err := EnsureTopic(ctx, cfg.seeds(), cfg.Topic, cfg.Partitions, cfg.ReplicationFactor); err != nil {
			return Result{}, err
		}
	}
	clients := make([]*kgo.Client, 0, cfg.Producers)
	defer func() {
		for _, cl := range clients {
			cl.Close()
		}
	}()
	for i := range cfg.Producers {
		opts := append(cfg.producerOpts(), cfg.txnOpts(i)...)
		if cfg.place != nil {
			opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return Result{}, fmt.Errorf("bench: producer client: %w", err)
		}
		clients = append(clients, cl)
	}
	pool := newValuePool(cfg.Seed, cfg.RecordSize)

	// Before the cost meters: its first request makes the broker GC.
	prof := cfg.Profile.start(ctx, cfg.workload, cfg.Label)
	defer prof.stopWindows()
	cost, err := startCost(cfg.Proc, cfg.BrokerPID)
	if err != nil {
		return Result{}, err
	}
	nodes, err := startCosts(cfg.Proc, cfg.NodePIDs)
	if err != nil {
		return Result{}, err
	}
	var st produceState
	st.hist = NewHistogram()
	st.txnHist = NewHistogram()
	mon := startMonitor(cfg.Progress, append(costMeters{cost}, nodes...), func(el time.Duration) string {
		return rateLine(cfg.Label, cfg.workload, el, st.acked.Load(), st.bytes.Load()) +
			"  p99 " + fmtDur(time.Duration(st.hist.Quantile(0.99)))
	})

	start := time.Now()
	var wg sync.WaitGroup
	for _, cl := range clients {
		if cfg.TxnRecords > 0 {
			wg.Go(func() { st.txnLoop(ctx, cl, &cfg, pool, limit, start) })
			continue
		}
		wg.Go(func() { st.produceLoop(ctx, cl, &cfg, pool, limit, start) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	mon.end()

	res := st.result(cfg.workload, cfg.Label)
	res.finish(elapsed)
	if res.Cost, err = cost.finish(res.Bytes); err != nil {
		return res, err
	}
	if res.NodeCosts, err = nodes.finish(res.Bytes); err != nil {
		return res, err
	}
	if res.Profiles, err = prof.finish(ctx); err != nil {
		return res, err
	}
	return res, st.err(ctx)
}

// produceState is shared by the producer goroutines of one run.
type produceState struct {
	claimed atomic.Int64 // records handed out to producers
	acked   atomic.Int64
	bytes   atomic.Int64
	failed  atomic.Int64
	first   atomic.Pointer[error]
	hist    *Histogram

	// Transactional runs: committed transactions, and each one's time
	// from BeginTransaction to the commit's answer.
	txns    atomic.Int64
	txnHist *Histogram
}

// produceLoop claims record numbers until the run ends, paces them when a
// rate is set, and flushes. Claiming from one counter makes --records and
// --rate totals over all producers.
func (st *produceState) produceLoop(ctx context.Context, cl *kgo.Client, cfg *ProduceConfig, pool *valuePool, limit int64, start time.Time) {
	var interval time.Duration
	if cfg.Rate > 0 {
		interval = time.Duration(float64(time.Second) / cfg.Rate)
	}
	for ctx.Err() == nil {
		// With a rate, the schedule decides which records fall in the
		// run (below), so a producer running late still sends them all.
		if cfg.Duration > 0 && interval == 0 && time.Since(start) >= cfg.Duration {
			break
		}
		n := st.claimed.Add(1) - 1
		if limit > 0 && n >= limit {
			break
		}
		sent := time.Now()
		if interval > 0 {
			offset := time.Duration(n) * interval
			if cfg.Duration > 0 && offset >= cfg.Duration {
				// Due after the end: a run of d at rate r sends d*r.
				break
			}
			due := start.Add(offset)
			if !sleepUntil(ctx, due) {
				break
			}
			sent = due
		}
		v := pool.value(n)
		if cfg.valueFn != nil {
			v = cfg.valueFn(pool, n, sent)
		}
		rec := &kgo.Record{Value: v}
		if cfg.place != nil {
			cfg.place(n, rec)
		}
		cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
			if err != nil {
				st.fail(err)
				return
			}
			st.hist.RecordDuration(time.Since(sent))
			st.acked.Add(1)
			st.bytes.Add(int64(len(v)))
		})
	}
	// Flush fails only when ctx ends; st.err reports that, and the records
	// it strands fail through their promises.
	_ = cl.Flush(ctx)
}

func (st *produceState) fail(err error) { st.failN(1, err) }

// failN counts n records failed by err.
func (st *produceState) failN(n int64, err error) {
	st.failed.Add(n)
	st.first.CompareAndSwap(nil, &err)
}

func (st *produceState) result(workload, label string) Result {
	r := Result{
		Workload: workload,
		Broker:   label,
		Records:  st.acked.Load(),
		Bytes:    st.bytes.Load(),
		Errors:   st.failed.Load(),
		Latency:  summarize(st.hist),
	}
	if n := st.txns.Load(); n > 0 {
		r.Transactions = n
		r.TxnLatency = summarize(st.txnHist)
	}
	if p := st.first.Load(); p != nil {
		r.FirstError = (*p).Error()
	}
	return r
}

func (st *produceState) err(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bench: produce: %w", err)
	}
	if p := st.first.Load(); p != nil {
		return fmt.Errorf("bench: produce: %d records failed, first: %w", st.failed.Load(), *p)
	}
	return nil
}

// sleepUntil waits for t or ctx, reporting whether t came first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}
