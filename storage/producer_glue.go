package storage

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/index"
	"github.com/strait-io/strait/storage/producer"
	"github.com/strait-io/strait/storage/record"
)

// controlRecordLimit bounds what a control batch may decompress to.
const controlRecordLimit = 1 << 20

// controlInfo decodes what producer state needs from a control batch: its
// type and, for commit/abort markers, the coordinator epoch.
func (l *Log) controlInfo(b record.Batch) (producer.ControlInfo, error) {
	if !b.IsControl() || b.RecordCount() == 0 {
		// A control batch the cleaner emptied has no record to decode;
		// producer state skips it.
		return producer.ControlInfo{}, nil
	}
	rr, done, err := l.decomp.OpenRecords(b, controlRecordLimit)
	if err != nil {
		return producer.ControlInfo{}, err
	}
	defer done()
	rec, err := rr.Next(true)
	if err != nil {
		return producer.ControlInfo{}, err
	}
	typ, err := record.ParseControlKey(rec.Key)
	if err != nil {
		return producer.ControlInfo{}, err
	}
	ci := producer.ControlInfo{Type: typ}
	if typ == kmsg.ControlRecordKeyTypeAbort || typ == kmsg.ControlRecordKeyTypeCommit {
		m, err := record.ParseEndTxnMarker(rec.Value)
		if err != nil {
			return producer.ControlInfo{}, err
		}
		ci.CoordinatorEpoch = m.CoordinatorEpoch
	}
	return ci, nil
}

// abortedFrom turns committed transactions into .txnindex entries; only
// aborted ones are indexed (Kafka's LogSegment.updateTxnIndex).
func abortedFrom(results []producer.CommittedTxn) []index.AbortedTxn {
	var out []index.AbortedTxn
	for _, r := range results {
		if r.Txn.IsAborted {
			out = append(out, index.AbortedTxn{
				ProducerID:       r.Txn.ProducerID,
				FirstOffset:      r.Txn.FirstOffset,
				LastOffset:       r.Txn.LastOffset,
				LastStableOffset: r.LastStableOffset,
			})
		}
	}
	return out
}

// replayBatch applies one batch already in the log to producer state, as a
// follower append would, and returns the aborted transactions it closed.
// Recovery and producer-state rebuilds use it, so MIRROR_PID_RESET and
// markers are honoured exactly as on the live append path.
func (l *Log) replayBatch(b record.Batch) ([]index.AbortedTxn, error) {
	ci, err := l.controlInfo(b)
	if err != nil {
		return nil, err
	}
	u := l.producers.NewUpdate(record.OriginReplication)
	if _, err := u.Append(b, ci); err != nil {
		return nil, err
	}
	return abortedFrom(u.Commit(b.NextOffset())), nil
}

// rebuildProducerState brings producer state to target: reload the newest
// snapshot at or below it, then replay the batches after the snapshot
// (Kafka's UnifiedLog.rebuildProducerState). Transaction indexes are not
// touched: the batches replayed were indexed when first written.
func (l *Log) rebuildProducerState(target int64) error {
	if err := l.producers.TruncateAndReload(l.logStartOffset.Load(), target, l.clock.Now()); err != nil {
		return err
	}
	from := max(l.producers.MapEndOffset(), l.logStartOffset.Load())
	if from < target {
		err := l.forEachBatch(from, target, func(b record.Batch) error {
			_, err := l.replayBatch(b)
			return err
		})
		if err != nil {
			return err
		}
	}
	l.producers.UpdateMapEndOffset(target)
	l.refreshFirstUnstable()
	return nil
}

// refreshFirstUnstable republishes the first unstable offset for LSO reads.
func (l *Log) refreshFirstUnstable() {
	if off, ok := l.producers.FirstUnstableOffset(); ok {
		l.firstUnstable.Store(off)
	} else {
		l.firstUnstable.Store(-1)
	}
	l.lsoPos.Store(nil)
}

// RemoveExpiredProducers drops producers idle longer than
// producer.id.expiration.ms (Kafka's removeExpiredProducers task).
func (l *Log) RemoveExpiredProducers() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return err
	}
	l.producers.RemoveExpiredProducers(l.clock.Now())
	return nil
}
