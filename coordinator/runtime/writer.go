package runtime

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/clock"
)

// DefaultMaxCoalescedBytes bounds how many bytes of queued records the
// writer puts in one batch; a single larger write still goes out alone.
const DefaultMaxCoalescedBytes = 512 << 10

// ErrUnloaded fails the writes of a shard that was unloaded: those still
// queued (the shard's Unload passes it to FailQueued) and the one whose
// append the unload cancelled. It is NOT_LEADER_OR_FOLLOWER, what an
// append to a partition this broker no longer leads fails with, which the
// coordinators answer as NOT_COORDINATOR.
var ErrUnloaded error = kerr.NotLeaderForPartition

// LogWriter appends to the partitions of a coordinator's internal topic:
// the Append half of the group coordinator's OffsetsLog. The broker adapts
// the replica manager to it.
type LogWriter interface {
	// Append appends one batch built by the coordinator as the
	// partition's leader (AppendOrigin COORDINATOR: offsets and the leader
	// epoch are assigned by the log) and returns once the batch is
	// committed, that is acks=all: the high watermark passed it. Errors
	// should be *kerr.Error where Kafka has a code (NOT_LEADER_OR_FOLLOWER,
	// NOT_ENOUGH_REPLICAS, KAFKA_STORAGE_ERROR, REQUEST_TIMED_OUT ...).
	Append(ctx context.Context, partition int32, batch []byte) (lastOffset int64, err error)
}

// WriterConfig configures a Writer.
type WriterConfig struct {
	// Log is what the partition is appended to. Required.
	Log LogWriter
	// Partition is the shard's partition. Required.
	Partition int32
	// Lock is the shard's mutex, which guards the writer's queue: the
	// queueing methods are called with it held, and Run takes it around
	// each batch and runs done callbacks and the hooks below with it held.
	// Required.
	Lock sync.Locker
	// Clock stamps the batches; nil is the wall clock.
	Clock clock.Clock
	// Serving, called with Lock held before each batch is taken, returns
	// nil while the shard serves, and otherwise the error that every
	// queued write fails with instead of being written: a shard that is
	// reloading (after Diverged) must not write what was decided on the
	// memory being discarded. Nil always serves.
	Serving func() error
	// Diverged, if not nil, is called with Lock held when an append holding
	// an eager write failed while the shard was Serving, before the done
	// callbacks of the batch run: memory is ahead of the log (or the batch
	// may yet be committed: a timed-out append can be), so the shard must
	// stop serving reads of it (Serving then fails what is queued) and
	// reload its partition. The group coordinator marks itself loading and
	// asks the registry to Reload it.
	Diverged func(err error)
	// MaxBatchBytes bounds the plain writes coalesced into one batch; 0 is
	// DefaultMaxCoalescedBytes.
	MaxBatchBytes int
	// WriteTimeout, if positive, bounds each append; the write then fails
	// with the log's error (REQUEST_TIMED_OUT from the broker's log) and
	// may still become committed. Zero waits for as long as the shard
	// lives, as the group coordinator does.
	WriteTimeout time.Duration
}

// Writer appends a shard's records to its partition: the write half of
// Kafka's CoordinatorRuntime for a coordinator whose records take effect
// in memory when they are decided (the group coordinator's eager model)
// or once they are committed (the transaction coordinator's, which
// completes a state transition in the write's done callback).
//
// Writes are queued under the shard lock, so the log receives them in the
// order the shard decided on them, and one goroutine (Run) appends them
// one batch at a time with acks=all, coalescing the plain writes that
// queued up during the previous append into one batch (the runtime's
// write batching). A transactional write (AppendTransactional) and a
// transaction marker (AppendEndTxnMarker) are each a batch of their own,
// never coalesced with another producer's records or with plain ones, as
// CoordinatorRuntime flushes the current batch before and after a
// transactional write and before writing a marker; and since there is one
// queue, a marker lands in the log after everything the shard queued
// before it.
//
// A write's done callback runs with the shard lock held once its append is
// acknowledged (nil) or failed. A failed append of a batch holding an
// eager write calls Diverged. The Writer's queueing methods and Queued and
// Writing must be called with the shard lock held.
type Writer struct {
	cfg  WriterConfig
	wake chan struct{}

	// Guarded by cfg.Lock.
	queue   []*pendingWrite // waiting for the writer, in decision order
	writing bool            // Run has a batch out
}

// writeKind says what batch a queued write becomes.
type writeKind int8

const (
	writePlain         writeKind = iota // records coalesced with other plain writes
	writeTransactional                  // records in a transactional batch of their own
	writeMarker                         // a COMMIT or ABORT control batch
)

// pendingWrite is one queued write.
type pendingWrite struct {
	kind     writeKind
	records  []Record
	producer Producer // transactional writes and markers
	commit   bool     // markers
	coordEp  int32    // markers: the transaction coordinator's epoch
	size     int
	// eager marks records whose effect is already in memory: if their
	// append fails, memory is ahead of the log and the shard must reload.
	eager bool
	// done gets the offset the log gave the write's first record (-1 if
	// the append failed or wrote nothing) and the append's outcome.
	done func(firstOffset int64, err error)
}

// NewWriter returns a writer for cfg's partition. It writes nothing until
// Run.
func NewWriter(cfg WriterConfig) *Writer {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.MaxBatchBytes <= 0 {
		cfg.MaxBatchBytes = DefaultMaxCoalescedBytes
	}
	return &Writer{cfg: cfg, wake: make(chan struct{}, 1)}
}

// Append queues records for the log as a plain batch (no producer), to be
// coalesced with the plain writes queued next to it. eager says their
// effect is already in memory; done, if not nil, runs with the shard lock
// held once the append is acknowledged (err nil) or failed. A write of no
// records appends nothing: its done runs, with the outcome of the batch it
// was coalesced into, once the writes queued before it are written
// (Kafka's runtime completes an operation without records after the
// pending writes). Called with the shard lock held.
func (w *Writer) Append(recs []Record, eager bool, done func(err error)) {
	w.AppendAt(recs, eager, outcomeOnly(done))
}

// AppendAt queues records like Append; done also gets the offset the log
// gave the first of them, the next ones following it: Kafka's
// CoordinatorRuntime replays every record at its offset, and a shard that
// tracks where its records are (the share coordinator, to prune what
// later snapshots made redundant) learns it here. The offset is -1 when
// the append failed, or when the write has no records and its batch wrote
// nothing. Called with the shard lock held.
func (w *Writer) AppendAt(recs []Record, eager bool, done func(firstOffset int64, err error)) {
	w.enqueue(&pendingWrite{kind: writePlain, records: recs, size: recordsSize(recs), eager: eager, done: done})
}

// outcomeOnly adapts a done callback that wants only the outcome.
func outcomeOnly(done func(err error)) func(int64, error) {
	if done == nil {
		return nil
	}
	return func(_ int64, err error) { done(err) }
}

// AppendAndWait queues records like Append and returns a channel that
// receives the append's outcome. Called with the shard lock held; the
// caller waits after unlocking.
func (w *Writer) AppendAndWait(recs []Record, eager bool) <-chan error {
	ch := make(chan error, 1)
	w.Append(recs, eager, func(err error) { ch <- err })
	return ch
}

// AppendTransactional queues records written for producer p's transaction
// (a TxnOffsetCommit, KIP-447) as one transactional batch with p's id and
// epoch (BuildTransactionalBatch), written on its own; recs must not be
// empty. They take effect when the transaction's COMMIT marker is written
// or replayed, and are dropped by an ABORT. eager and done are as for
// Append. Called with the shard lock held.
func (w *Writer) AppendTransactional(p Producer, recs []Record, eager bool, done func(err error)) {
	w.enqueue(&pendingWrite{kind: writeTransactional, records: recs, producer: p, size: recordsSize(recs), eager: eager, done: outcomeOnly(done)})
}

// AppendEndTxnMarker queues the COMMIT (commit true) or ABORT marker of
// producer p's transaction, written by a transaction coordinator at
// coordinatorEpoch (BuildEndTxnMarker), as a control batch of its own
// after every write queued before it: how the group coordinator completes
// a transaction on its partition (CoordinatorRuntime.scheduleTransaction
// Completion). The log fences a marker from an older producer epoch
// (INVALID_PRODUCER_EPOCH) or an older coordinator epoch
// (TRANSACTION_COORDINATOR_FENCED); done gets that error. eager and done
// are as for Append. Called with the shard lock held.
func (w *Writer) AppendEndTxnMarker(p Producer, commit bool, coordinatorEpoch int32, eager bool, done func(err error)) {
	w.enqueue(&pendingWrite{kind: writeMarker, producer: p, commit: commit, coordEp: coordinatorEpoch, size: 64, eager: eager, done: outcomeOnly(done)})
}

func (w *Writer) enqueue(pw *pendingWrite) {
	w.queue = append(w.queue, pw)
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// recordsSize estimates the bytes recs take in a batch.
func recordsSize(recs []Record) int {
	size := 0
	for _, r := range recs {
		size += len(r.Key) + len(r.Value) + 16
	}
	return size
}

// FailQueued fails every queued write with err, without writing it; a
// batch already out is not affected. A shard's Unload calls it with
// ErrUnloaded. Called with the shard lock held.
func (w *Writer) FailQueued(err error) {
	queued := w.queue
	w.queue = nil
	for _, pw := range queued {
		if pw.done != nil {
			pw.done(-1, err)
		}
	}
}

// Queued is the number of writes waiting for the writer. Called with the
// shard lock held.
func (w *Writer) Queued() int { return len(w.queue) }

// Writing reports whether an append is out. Called with the shard lock
// held.
func (w *Writer) Writing() bool { return w.writing }

// Run appends queued writes until ctx is done, which the shard cancels
// when it is unloaded (an append in flight is then cancelled and fails
// with ErrUnloaded). A shard runs it on a goroutine of its own from when
// it is loaded.
func (w *Writer) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		}
		for ctx.Err() == nil {
			w.cfg.Lock.Lock()
			if w.cfg.Serving != nil {
				if err := w.cfg.Serving(); err != nil {
					// A failed append made the shard reload: what was
					// decided on the memory being discarded is not written.
					w.FailQueued(err)
				}
			}
			batch := w.takeQueued()
			w.writing = len(batch) > 0
			w.cfg.Lock.Unlock()
			if len(batch) == 0 {
				break
			}
			lastOffset, err := w.write(ctx, batch)
			w.cfg.Lock.Lock()
			if err != nil && w.cfg.Diverged != nil && anyEager(batch) && (w.cfg.Serving == nil || w.cfg.Serving() == nil) {
				w.cfg.Diverged(err)
			}
			next := firstOffset(batch, lastOffset, err)
			for _, pw := range batch {
				if pw.done != nil {
					pw.done(next, err)
				}
				if next >= 0 {
					next += int64(pw.recordCount())
				}
			}
			w.writing = false
			w.cfg.Lock.Unlock()
		}
	}
}

// firstOffset is the offset of the first record of batch, appended with
// lastOffset and err as its outcome; -1 if the append failed or wrote
// nothing. The records of a batch have consecutive offsets, in queue order.
func firstOffset(batch []*pendingWrite, lastOffset int64, err error) int64 {
	n := 0
	for _, pw := range batch {
		n += pw.recordCount()
	}
	if err != nil || n == 0 || lastOffset < 0 {
		return -1
	}
	return lastOffset - int64(n) + 1
}

// recordCount is how many records the write puts in its batch.
func (pw *pendingWrite) recordCount() int {
	if pw.kind == writeMarker {
		return 1
	}
	return len(pw.records)
}

func anyEager(batch []*pendingWrite) bool {
	for _, pw := range batch {
		if pw.eager {
			return true
		}
	}
	return false
}

// takeQueued removes the writes for the next batch from the queue: the
// first write, and the plain writes after it up to MaxBatchBytes if it is
// plain. Called with the shard lock held.
func (w *Writer) takeQueued() []*pendingWrite {
	n, size := 0, 0
	for n < len(w.queue) && (n == 0 || w.coalesces(w.queue[0], w.queue[n], size)) {
		size += w.queue[n].size
		n++
	}
	batch := w.queue[:n:n]
	w.queue = w.queue[n:]
	return batch
}

// coalesces reports whether next can join the batch that first opened,
// which holds size bytes.
func (w *Writer) coalesces(first, next *pendingWrite, size int) bool {
	return first.kind == writePlain && next.kind == writePlain && size+next.size <= w.cfg.MaxBatchBytes
}

// write appends one batch made of writes: the records of plain writes
// together, or the one transactional write or marker. It returns the
// offset of the batch's last record, -1 if it appended nothing.
func (w *Writer) write(ctx context.Context, writes []*pendingWrite) (int64, error) {
	b, err := w.build(writes)
	if err != nil || b == nil {
		return -1, err
	}
	actx := ctx
	if w.cfg.WriteTimeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, w.cfg.WriteTimeout)
		defer cancel()
	}
	last, err := w.cfg.Log.Append(actx, w.cfg.Partition, b)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return -1, ErrUnloaded
		}
		return -1, err
	}
	return last, nil
}

// build encodes writes as one batch, nil for plain writes without records.
func (w *Writer) build(writes []*pendingWrite) ([]byte, error) {
	nowMs := w.cfg.Clock.Now().UnixMilli()
	first := writes[0]
	switch first.kind {
	case writeTransactional:
		return BuildTransactionalBatch(first.producer, first.records, nowMs)
	case writeMarker:
		return BuildEndTxnMarker(first.producer, first.commit, first.coordEp, nowMs), nil
	}
	var recs []Record
	for _, pw := range writes {
		recs = append(recs, pw.records...)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	return BuildBatch(recs, nowMs)
}
