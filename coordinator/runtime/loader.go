package runtime

import (
	"context"
	"fmt"

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
// chunk batch by batch and hands every record to the shard's replay. A
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
	// records of a batch it rejects are skipped (the group coordinator
	// skips transactional batches, which it does not support yet). Nil
	// replays every data batch. Control batches (transaction markers)
	// are always skipped.
	Accept func(b record.Batch) bool
}

// Load reads partition from its log start to its log end offset and calls
// replay with each record of the batches it reads, in log order. A
// record's Key and Value may alias the buffer Read returned or a
// decompression buffer; replay copies what it keeps beyond that buffer's
// life.
//
// Batches ending before where a Read was asked to start (Read starts at
// the batch holding that offset) and batches starting at or past the log
// end offset are not replayed. Load returns nil once it read up to the log
// end offset reported by the last Read, and an error, naming Topic, the
// partition and the offset, when a Read fails, a chunk does not parse, a
// batch's records cannot be opened or decoded, replay fails (Load stops
// there), or a Read makes no progress. It checks ctx before each Read and
// stops with ctx's error once ctx is done (CoordinatorLoaderImpl's
// isRunning), so a shard unloaded while it loads stops reading; Read may
// also return ctx's error.
func (l *Loader) Load(ctx context.Context, partition int32, replay func(rec record.Record) error) error {
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
			if b.IsControl() || (l.Accept != nil && !l.Accept(b)) {
				continue
			}
			if err := l.replayBatch(dec, b, replay); err != nil {
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

// replayBatch hands each record of b to replay.
func (l *Loader) replayBatch(dec *record.Decompressor, b record.Batch, replay func(record.Record) error) error {
	rr, closeRecords, err := dec.OpenRecords(b, l.MaxBatchBytes)
	if err != nil {
		return err
	}
	defer closeRecords()
	for rr.Remaining() > 0 {
		rec, err := rr.Next(true)
		if err != nil {
			return err
		}
		if err := replay(rec); err != nil {
			return err
		}
	}
	return nil
}
