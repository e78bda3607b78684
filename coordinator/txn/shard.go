package txn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/coordinator/runtime"
	"github.com/strait-io/strait/storage/record"
)

// shard is one __transaction_state partition this broker leads: the
// metadata of the transactional ids it holds (Kafka's
// TransactionStateManager's per-partition cache, with its coordinator
// epoch). Every change of a Metadata happens under mu; appends run without
// it, the transition they carry marked pending meanwhile.
type shard struct {
	c     *Coordinator
	p     int32
	epoch int32 // the coordinator epoch: the partition's leader epoch

	ctx    context.Context // cancelled by Unload: appends and marker senders stop
	cancel context.CancelFunc

	mu     sync.Mutex
	loaded bool
	closed bool
	txns   map[string]*Metadata
	// changed, while requests wait in whileConcurrentLocked, is closed
	// when a transition of the shard finishes (changedLocked).
	changed chan struct{}
}

func newShard(c *Coordinator, p, epoch int32) *shard {
	s := &shard{c: c, p: p, epoch: epoch, txns: map[string]*Metadata{}}
	s.ctx, s.cancel = context.WithCancel(c.ctx)
	return s
}

func (s *shard) Epoch() int32 { return s.epoch }

func (s *shard) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *shard) Unload() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
}

// Run loads the partition, resumes the transactions it left prepared, and
// serves until Unload.
func (s *shard) Run() {
	if err := s.load(); err != nil {
		if s.ctx.Err() == nil {
			s.c.log.Error("loading transactions failed; the partition is not served", "partition", s.p, "err", err)
		}
		s.Unload()
		return
	}
	<-s.ctx.Done()
}

// load replays the partition (Kafka's loadTransactionMetadata: the last
// record of an id wins, a tombstone removes it) and then completes every
// transaction found prepared: its markers may not all have been written
// when the previous coordinator stopped.
func (s *shard) load() error {
	l := runtime.Loader{Log: s.c.cfg.Log, Topic: Topic, ReadBytes: s.c.cfg.LoadBufferSize, MaxBatchBytes: 64 << 20}
	txns := map[string]*Metadata{}
	err := l.Load(s.ctx, s.p, func(rec record.Record) error {
		var value []byte
		if rec.ValueLen >= 0 {
			value = rec.Value
		}
		id, m, err := decodeRecord(rec.Key, value)
		switch {
		case errors.Is(err, ErrUnknownKeyVersion):
			return nil
		case err != nil:
			return err
		case m == nil:
			delete(txns, id)
		default:
			txns[id] = m
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.ctx.Err()
	}
	s.txns, s.loaded = txns, true
	resumed := 0
	for id, m := range txns {
		if m.State == PrepareCommit || m.State == PrepareAbort {
			s.completeLocked(id, m)
			resumed++
		}
	}
	s.c.log.Info("loaded transactions", "partition", s.p, "coordinatorEpoch", s.epoch, "transactionalIds", len(txns),
		"completing", resumed)
	return nil
}

// write appends id's transition t and, once the log acknowledged it,
// completes it in memory; a failed append drops the pending transition.
// It returns the error to answer with (TransactionStateManager's
// appendTransactionToLog callback): the log's errors mapped to
// coordinator errors, NOT_COORDINATOR when the shard stopped serving
// meanwhile. After a PrepareCommit or PrepareAbort the markers are sent.
func (s *shard) write(id string, t Transit) *kerr.Error {
	err := s.appendTransit(id, t)
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.txns[id]
	defer s.changedLocked()
	if err != nil {
		if m != nil && !s.closed {
			m.Abandon()
		}
		return err
	}
	if s.closed || m == nil {
		return kerr.NotCoordinator
	}
	if cerr := m.Complete(t); cerr != nil {
		s.c.log.Error("completing a transaction state transition failed", "transactional_id", id, "err", cerr)
		return kerr.UnknownServerError
	}
	switch t.State {
	case Dead:
		delete(s.txns, id)
	case PrepareCommit, PrepareAbort:
		s.completeLocked(id, m)
	}
	return nil
}

// appendTransit appends one record of id's transition to the partition,
// bounded by the request timeout, and maps the log's errors as Kafka's
// appendTransactionToLog does.
func (s *shard) appendTransit(id string, t Transit) *kerr.Error {
	batch, err := coordinator.BuildBatch([]coordinator.KeyValue{{Key: encodeKey(id), Value: encodeValue(t)}}, s.c.nowMs())
	if err != nil {
		s.c.log.Error("building a transaction log record failed", "transactional_id", id, "err", err)
		return kerr.UnknownServerError
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.c.cfg.RequestTimeout)
	defer cancel()
	if _, err := s.c.cfg.Log.Append(ctx, s.p, batch); err != nil {
		return appendError(err)
	}
	return nil
}

// appendError is the coordinator error for a failed transaction log
// append (TransactionStateManager.appendTransactionToLog).
func appendError(err error) *kerr.Error {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		if errors.Is(err, context.Canceled) {
			return kerr.NotCoordinator // the shard stopped
		}
		return kerr.CoordinatorNotAvailable // timed out
	}
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
		return kerr.CoordinatorNotAvailable
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError, kerr.FencedLeaderEpoch:
		return kerr.NotCoordinator
	case kerr.MessageTooLarge, kerr.RecordListTooLarge:
		return kerr.UnknownServerError
	}
	return ke
}

// completeLocked prepares the completion of id's prepared commit or abort
// and starts writing its markers; once every partition has its marker the
// completion is appended. Until then the id answers
// CONCURRENT_TRANSACTIONS. mu is held.
func (s *shard) completeLocked(id string, m *Metadata) {
	t, err := m.PrepareComplete(s.c.nowMs())
	if err != nil {
		s.c.log.Error("preparing a transaction's completion failed", "transactional_id", id, "err", err)
		return
	}
	job := markerJob{id: id, producerID: m.ProducerID, epoch: m.ProducerEpoch, commit: m.State == PrepareCommit,
		partitions: sortedPartitions(m.Partitions), complete: t}
	s.c.goSend(func() { s.finish(job) })
}

// whileConcurrentLocked runs decide, with mu held, until it answers
// something other than CONCURRENT_TRANSACTIONS, trying again each time a
// transition of the shard finishes, for at most ConcurrentWait.
//
// Kafka answers CONCURRENT_TRANSACTIONS at once while a transactional
// id's transition is appended or its commit's markers are written, and the
// client retries after a backoff (the Java producer and franz-go wait
// 20 ms before retrying an AddPartitionsToTxn). A producer that starts
// its next transaction as soon as EndTxn returns, as every client does,
// meets its previous commit's markers nearly every time, and that backoff
// is most of a small transaction's time. Waiting here for the transition
// (a few milliseconds: markers to local leaders and one append) answers
// the request as the retry would have been answered, without the
// backoff. The client cannot tell, except that it is faster; past the
// bound it gets Kafka's answer.
func (s *shard) whileConcurrentLocked(ctx context.Context, decide func() *kerr.Error) *kerr.Error {
	e := decide()
	if e != kerr.ConcurrentTransactions || s.c.cfg.ConcurrentWait < 0 {
		return e
	}
	bound := time.NewTimer(s.c.cfg.ConcurrentWait)
	defer bound.Stop()
	for e == kerr.ConcurrentTransactions && s.awaitChangeLocked(ctx, bound.C) {
		e = decide()
	}
	return e
}

// awaitChangeLocked releases mu until a transition of the shard finishes,
// bound fires, ctx ends or the shard unloads, and reports whether a
// transition finished. mu is held again when it returns.
func (s *shard) awaitChangeLocked(ctx context.Context, bound <-chan time.Time) bool {
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	ch := s.changed
	s.mu.Unlock()
	defer s.mu.Lock()
	select {
	case <-ch:
		return true
	case <-bound:
	case <-ctx.Done():
	case <-s.ctx.Done():
	}
	return false
}

// changedLocked wakes the requests waiting in awaitChangeLocked. mu is
// held.
func (s *shard) changedLocked() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// String names the shard in logs.
func (s *shard) String() string { return fmt.Sprintf("%s-%d@%d", Topic, s.p, s.epoch) }
