package bench

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// WorkloadProduceTxn names the transactional produce workload's results.
const WorkloadProduceTxn = "produce-txn"

// DefaultTxnRecords is the records of one transaction of --transactional.
const DefaultTxnRecords = 100

// validateTxn checks the settings a transactional run cannot take: kgo's
// transactional producer is idempotent, so acks=all (Kafka requires it
// too), and a rate would pace records that a transaction batches anyway.
func (c *ProduceConfig) validateTxn() error {
	if c.TxnRecords == 0 {
		return nil
	}
	if c.Acks != "all" && c.Acks != "-1" {
		return fmt.Errorf("bench: a transactional producer needs acks=all, not acks=%s", c.Acks)
	}
	if c.Rate > 0 {
		return errors.New("bench: a transactional run takes no rate")
	}
	return nil
}

// txnOpts are the options making producer client i transactional, none
// for a plain run. Each client has its own transactional.id: one id has
// one transaction open at a time.
func (c *ProduceConfig) txnOpts(i int) []kgo.Opt {
	if c.TxnRecords == 0 {
		return nil
	}
	prefix := c.TxnIDPrefix
	if prefix == "" {
		prefix = c.Topic
	}
	return []kgo.Opt{kgo.TransactionalID(fmt.Sprintf("%s-txn-%d", prefix, i))}
}

// txnLoop claims TxnRecords record numbers at a time and sends each claim
// as one transaction until the run ends. A transaction that fails counts
// its records failed and ends the client's loop, as an application would
// restart its producer.
func (st *produceState) txnLoop(ctx context.Context, cl *kgo.Client, cfg *ProduceConfig, pool *valuePool, limit int64, start time.Time) {
	size := int64(cfg.TxnRecords)
	for ctx.Err() == nil {
		if cfg.Duration > 0 && time.Since(start) >= cfg.Duration {
			return
		}
		first := st.claimed.Add(size) - size
		if limit > 0 && first >= limit {
			return
		}
		n := size
		if limit > 0 {
			n = min(n, limit-first)
		}
		if err := st.txn(ctx, cl, pool, first, n); err != nil {
			st.failN(n, err)
			return
		}
	}
}

// txn sends records first to first+n-1 in one transaction: begin,
// produce, flush (kgo's EndTransaction does not flush), commit; or abort
// when a record failed. Its records count once it committed.
func (st *produceState) txn(ctx context.Context, cl *kgo.Client, pool *valuePool, first, n int64) error {
	began := time.Now()
	if err := cl.BeginTransaction(); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	var acked, bytes atomic.Int64
	var failed atomic.Pointer[error]
	for i := first; i < first+n; i++ {
		v := pool.value(i)
		sent := time.Now()
		cl.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.CompareAndSwap(nil, &err)
				return
			}
			st.hist.RecordDuration(time.Since(sent))
			acked.Add(1)
			bytes.Add(int64(len(v)))
		})
	}
	err := cl.Flush(ctx)
	if p := failed.Load(); p != nil {
		err = *p
	}
	end := kgo.TryCommit
	if err != nil {
		end = kgo.TryAbort
	}
	if eerr := cl.EndTransaction(ctx, end); eerr != nil && err == nil {
		err = fmt.Errorf("commit: %w", eerr)
	}
	if err != nil {
		return err
	}
	st.txnHist.RecordDuration(time.Since(began))
	st.txns.Add(1)
	st.acked.Add(acked.Load())
	st.bytes.Add(bytes.Load())
	return nil
}
