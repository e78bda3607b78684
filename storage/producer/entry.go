package producer

import (
	"slices"

	"github.com/strait-io/strait/storage/record"
)

// NumBatchesToRetain is how many of a producer's latest batches are kept for
// duplicate detection: the producer's max.in.flight.requests.per.connection
// may be at most 5 with idempotence (ProducerStateEntry.NUM_BATCHES_TO_RETAIN).
const NumBatchesToRetain = 5

// noTxn is CurrentTxnFirstOffset when the producer has no ongoing
// transaction; it is also how a snapshot encodes "none".
const noTxn int64 = -1

// Entry is the state of one producer id (Kafka's ProducerStateEntry).
type Entry struct {
	ProducerID    int64
	ProducerEpoch int16
	// CoordinatorEpoch is the epoch of the transaction coordinator that
	// wrote the producer's last marker, -1 before any; markers from older
	// coordinators are fenced.
	CoordinatorEpoch int32
	// LastTimestamp is the max timestamp of the producer's last batch or
	// marker; expiry counts from it.
	LastTimestamp int64
	// CurrentTxnFirstOffset is the first offset of the producer's ongoing
	// transaction, or -1.
	CurrentTxnFirstOffset int64
	// Batches are the retained batches, oldest first, at most
	// NumBatchesToRetain, all of ProducerEpoch.
	Batches []BatchMetadata
}

func emptyEntry(pid int64) Entry {
	return Entry{
		ProducerID:            pid,
		ProducerEpoch:         record.NoProducerEpoch,
		CoordinatorEpoch:      -1,
		LastTimestamp:         record.NoTimestamp,
		CurrentTxnFirstOffset: noTxn,
	}
}

// IsEmpty reports whether no batch is retained.
func (e *Entry) IsEmpty() bool { return len(e.Batches) == 0 }

// HasOngoingTxn reports whether the producer has an open transaction.
func (e *Entry) HasOngoingTxn() bool { return e.CurrentTxnFirstOffset >= 0 }

// FirstSeq is the first sequence of the oldest retained batch, or -1.
func (e *Entry) FirstSeq() int32 {
	if e.IsEmpty() {
		return record.NoSequence
	}
	return e.Batches[0].FirstSeq()
}

// LastSeq is the last sequence of the newest batch, or -1.
func (e *Entry) LastSeq() int32 {
	if e.IsEmpty() {
		return record.NoSequence
	}
	return e.Batches[len(e.Batches)-1].LastSeq
}

// LastDataOffset is the last offset of the newest batch, or -1.
func (e *Entry) LastDataOffset() int64 {
	if e.IsEmpty() {
		return -1
	}
	return e.Batches[len(e.Batches)-1].LastOffset
}

// LastOffsetDelta is the offset delta of the newest batch, or 0.
func (e *Entry) LastOffsetDelta() int32 {
	if e.IsEmpty() {
		return 0
	}
	return e.Batches[len(e.Batches)-1].OffsetDelta
}

// FindDuplicateBatch returns the retained batch with b's exact sequence
// range, if b is of the producer's current epoch
// (ProducerStateEntry.findDuplicateBatch).
func (e *Entry) FindDuplicateBatch(b record.Batch) (BatchMetadata, bool) {
	if b.ProducerEpoch() != e.ProducerEpoch {
		return BatchMetadata{}, false
	}
	first, last := b.BaseSequence(), b.LastSequence()
	for _, m := range e.Batches {
		if m.FirstSeq() == first && m.LastSeq == last {
			return m, true
		}
	}
	return BatchMetadata{}, false
}

// Clone returns a deep copy.
func (e *Entry) Clone() Entry {
	c := *e
	c.Batches = slices.Clone(e.Batches)
	return c
}

// withoutBatches is Kafka's withProducerIdAndBatchMetadata(pid, empty): the
// starting point of a ProducerAppendInfo's updated entry.
func (e *Entry) withoutBatches() Entry {
	c := *e
	c.Batches = nil
	return c
}

func (e *Entry) addBatch(epoch int16, lastSeq int32, lastOffset int64, offsetDelta int32, ts int64) {
	e.maybeUpdateProducerEpoch(epoch)
	e.addBatchMetadata(BatchMetadata{LastSeq: lastSeq, LastOffset: lastOffset, OffsetDelta: offsetDelta, Timestamp: ts})
	e.LastTimestamp = ts
}

// maybeUpdateProducerEpoch drops the retained batches when the epoch
// changes: sequences restart with a new epoch, so old batches can no longer
// be duplicates.
func (e *Entry) maybeUpdateProducerEpoch(epoch int16) {
	if e.ProducerEpoch != epoch {
		e.Batches = e.Batches[:0]
		e.ProducerEpoch = epoch
	}
}

func (e *Entry) addBatchMetadata(m BatchMetadata) {
	if len(e.Batches) == NumBatchesToRetain {
		e.Batches = append(e.Batches[:0], e.Batches[1:]...)
	}
	e.Batches = append(e.Batches, m)
}

// endTxn applies a COMMIT/ABORT marker: Kafka's update(epoch,
// coordinatorEpoch, timestamp) with no batches and no transaction.
func (e *Entry) endTxn(epoch int16, coordinatorEpoch int32, ts int64) {
	e.maybeUpdateProducerEpoch(epoch)
	e.CoordinatorEpoch = coordinatorEpoch
	e.CurrentTxnFirstOffset = noTxn
	e.LastTimestamp = ts
}

// mergeFrom applies an Update's entry to the committed one
// (ProducerStateEntry.update(nextEntry)): next holds only the batches
// appended by that Update.
func (e *Entry) mergeFrom(next *Entry) {
	e.maybeUpdateProducerEpoch(next.ProducerEpoch)
	for _, m := range next.Batches {
		e.addBatchMetadata(m)
	}
	e.CoordinatorEpoch = next.CoordinatorEpoch
	e.CurrentTxnFirstOffset = next.CurrentTxnFirstOffset
	e.LastTimestamp = next.LastTimestamp
}
