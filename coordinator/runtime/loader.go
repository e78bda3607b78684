package runtime

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
)

// LogReader reads the partitions of a coordinator's internal topic for
// loading: the Read half of the group coordinator's OffsetsLog and of the
// __mirror_state coordinator's Log.
type LogReader interface {
	// Read returns whole batches starting at the batch that holds from (a
	// from below the log start offset reads from the log start), up to
	// about maxBytes but at least one batch if there is one, and never
	// past the log end offset. nextOffset is where the next Read should
	// start; logEndOffset is the partition's log end offset.
	Read(ctx context.Context, partition int32, from int64, maxBytes int32) (data []byte, nextOffset int64, logEndOffset int64, err error)
}

// Loader replays a partition of an internal topic, from its log start to
// its log end offset, record by record: Kafka's CoordinatorLoaderImpl,
// which reads the log in chunks (FetchIsolation.LOG_END), walks each
// chunk batch by batch and hands every data record to the shard's replay
// and every COMMIT/ABORT marker to its replayEndTransactionMarker. A
// Loader holds no state between loads; the zero value is not usable (Log,
// Topic, ReadBytes and MaxBatchBytes are required).
type Loader struct {
	// Log is what the partition is read from.
	Log LogReader
	// Topic names the internal topic in errors.
	Topic string
	// ReadBytes is the maxBytes of each Read (Kafka's
	// loadBufferSize): the size of a chunk.
	ReadBytes int32
	// MaxBatchBytes bounds what a compressed batch may decompress to.
	MaxBatchBytes int64
	// Accept, if not nil, is asked about each data batch (not a control
	// batch) of the partition before its records are replayed; the
	// records of a batch it rejects are skipped. Nil replays every data
	// batch.
	Accept func(b record.Batch) bool
}

// BatchContext is what a replayed record's batch says about who wrote it:
// Kafka's loader passes batch.producerId and batch.producerEpoch with
// every record, which is how the group coordinator tells a transactional
// offset commit (pending until its marker) from a plain one.
type BatchContext struct {
	// BaseOffset and LastOffset are the offsets of the batch's first and
	// last record.
	BaseOffset int64
	LastOffset int64
	// ProducerID and ProducerEpoch are the batch's producer fields:
	// record.NoProducerID and record.NoProducerEpoch for the batches a
	// coordinator writes for itself.
	ProducerID    int64
	ProducerEpoch int16
	// Transactional is the batch's transactional attribute.
	Transactional bool
}

// EndTxnMarker is a COMMIT or ABORT control record read while loading: the
// end of producer ProducerID's transaction in the partition (Kafka's
// replayEndTransactionMarker with its TransactionResult).
type EndTxnMarker struct {
	// Offset is the marker's offset in the partition.
	Offset        int64
	ProducerID    int64
	ProducerEpoch int16
	// Commit is true for a COMMIT marker, false for an ABORT.
	Commit bool
}

// Playback is what Replay hands a partition's contents to: Kafka's
// CoordinatorPlayback (replay and replayEndTransactionMarker).
type Playback struct {
	// Record is called with each data record, at its offset, with its
	// batch's context, in log order. Required. rec's Key and Value may
	// alias the buffer Read returned or a decompression buffer; Record
	// copies what it keeps beyond the call.
	Record func(b BatchContext, offset int64, rec record.Record) error
	// EndTxnMarker, if not nil, is called with each COMMIT or ABORT marker
	// in log order with the data records (after the transaction's records,
	// before whatever the log holds after the marker). Control records of
	// other types (LEADER_CHANGE, snapshot and KRaft records, KIP-1279's
	// MIRROR_PID_RESET) are skipped, as Kafka's loader skips them. Nil
	// skips every control batch without reading it.
	EndTxnMarker func(m EndTxnMarker) error
}

// Load reads partition from its log start to its log end offset and calls
// replay with each data record, in log order, skipping every control
// batch: Replay for a shard that needs neither the records' batch context
// nor transaction markers (the __mirror_state coordinator).
func (l *Loader) Load(ctx context.Context, partition int32, replay func(rec record.Record) error) error {
	return l.Replay(ctx, partition, Playback{
		Record: func(_ BatchContext, _ int64, rec record.Record) error { return replay(rec) },
	})
}

// Replay reads partition from its log start to its log end offset and
// hands its data records and transaction markers to p, in log order.
//
// Batches ending before where a Read was asked to start (Read starts at
// the batch holding that offset) and batches starting at or past the log
// end offset are not replayed. Replay returns nil once it read up to the
// log end offset reported by the last Read, and an error, naming Topic,
// the partition and the offset, when a Read fails, a chunk does not
// parse, a batch's records cannot be opened or decoded, a control record's
// key does not parse, p fails (Replay stops there), or a Read makes no
// progress. It checks ctx before each Read and stops with ctx's error once
// ctx is done (CoordinatorLoaderImpl's isRunning), so a shard unloaded
// while it loads stops reading; Read may also return ctx's error.
func (l *Loader) Replay(ctx context.Context, partition int32, p Playback) error {
	dec := record.NewDecompressor()
	var from int64
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("loading %s-%d stopped at offset %d: %w", l.Topic, partition, from, err)
		}
		data, next, end, err := l.Log.Read(ctx, partition, from, l.ReadBytes)
		if err != nil {
			return fmt.Errorf("reading %s-%d at offset %d: %w", l.Topic, partition, from, err)
		}
		it := record.NewIter(data)
		for b, ok := it.Next(); ok; b, ok = it.Next() {
			if b.LastOffset() < from {
				continue // Read starts at the batch holding from
			}
			if b.BaseOffset() >= end {
				break
			}
			if err := l.replayBatch(dec, b, p); err != nil {
				return fmt.Errorf("replaying %s-%d batch at offset %d: %w", l.Topic, partition, b.BaseOffset(), err)
			}
		}
		if err := it.Err(); err != nil {
			return fmt.Errorf("reading %s-%d at offset %d: %w", l.Topic, partition, from, err)
		}
		if next >= end {
			return nil
		}
		if next <= from {
			return fmt.Errorf("reading %s-%d made no progress at offset %d (log end offset %d)", l.Topic, partition, from, end)
		}
		from = next
	}
}

// replayBatch hands b's data records, or its transaction markers, to p.
func (l *Loader) replayBatch(dec *record.Decompressor, b record.Batch, p Playback) error {
	control := b.IsControl()
	switch {
	case control && p.EndTxnMarker == nil:
		return nil
	case !control && l.Accept != nil && !l.Accept(b):
		return nil
	}
	rr, closeRecords, err := dec.OpenRecords(b, l.MaxBatchBytes)
	if err != nil {
		return err
	}
	defer closeRecords()
	bc := BatchContext{
		BaseOffset:    b.BaseOffset(),
		LastOffset:    b.LastOffset(),
		ProducerID:    b.ProducerID(),
		ProducerEpoch: b.ProducerEpoch(),
		Transactional: b.IsTransactional(),
	}
	for rr.Remaining() > 0 {
		rec, err := rr.Next(true)
		if err != nil {
			return err
		}
		offset := bc.BaseOffset + int64(rec.OffsetDelta)
		if control {
			err = replayControl(bc, offset, rec, p.EndTxnMarker)
		} else {
			err = p.Record(bc, offset, rec)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// replayControl hands a COMMIT or ABORT control record to marker and skips
// the other types. Every record of a control batch is read, as Kafka's
// loader does, though a control batch holds one.
func replayControl(bc BatchContext, offset int64, rec record.Record, marker func(EndTxnMarker) error) error {
	typ, err := record.ParseControlKey(rec.Key)
	if err != nil {
		return fmt.Errorf("control record at offset %d: %w", offset, err)
	}
	switch typ {
	case kmsg.ControlRecordKeyTypeCommit, kmsg.ControlRecordKeyTypeAbort:
		return marker(EndTxnMarker{
			Offset:        offset,
			ProducerID:    bc.ProducerID,
			ProducerEpoch: bc.ProducerEpoch,
			Commit:        typ == kmsg.ControlRecordKeyTypeCommit,
		})
	}
	return nil
}
