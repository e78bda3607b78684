package producer

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
)

// appendInfo validates one producer's batches within an Update and collects
// the resulting state (Kafka's ProducerAppendInfo). current is the committed
// entry when the Update started (or an empty one) and is never modified;
// updated starts as current without its batches and receives this Update's
// batches, so Commit can merge it the way ProducerStateEntry.update does.
type appendInfo struct {
	pid     int64
	origin  record.AppendOrigin
	current *Entry
	updated Entry
}

func newAppendInfo(pid int64, current *Entry, origin record.AppendOrigin) *appendInfo {
	return &appendInfo{pid: pid, origin: origin, current: current, updated: current.withoutBatches()}
}

// appendDataBatch validates and records a data batch. It reports whether the
// batch began a transaction.
func (a *appendInfo) appendDataBatch(b record.Batch) (startedTxn bool, err error) {
	epoch, firstSeq, firstOffset := b.ProducerEpoch(), b.BaseSequence(), b.BaseOffset()
	if err := a.checkProducerEpoch(epoch, firstOffset); err != nil {
		return false, err
	}
	// Sequences are checked only for client produce: the coordinator writes
	// sequence-less batches and replicas trust what the leader accepted.
	if a.origin == record.OriginClient {
		if err := a.checkSequence(epoch, firstSeq, firstOffset); err != nil {
			return false, err
		}
	}
	a.updated.addBatch(epoch, b.LastSequence(), b.LastOffset(), int32(b.LastOffset()-firstOffset), b.MaxTimestamp())

	switch txn := a.updated.HasOngoingTxn(); {
	case txn && !b.IsTransactional():
		return false, record.Errorf(kerr.InvalidTxnState,
			"expected transactional write from producer %d at offset %d", a.pid, firstOffset)
	case !txn && b.IsTransactional():
		a.updated.CurrentTxnFirstOffset = firstOffset
		return true, nil
	}
	return false, nil
}

// appendEndTxnMarker validates and records a COMMIT or ABORT marker
// (ProducerAppendInfo.appendEndTxnMarker). A marker for a producer with no
// open transaction is accepted and completes nothing: the coordinator writes
// markers to every partition it registered, whether or not data arrived.
func (a *appendInfo) appendEndTxnMarker(b record.Batch, ctrl ControlInfo) (*CompletedTxn, error) {
	epoch, offset := b.ProducerEpoch(), b.BaseOffset()
	if err := a.checkProducerEpoch(epoch, offset); err != nil {
		return nil, err
	}
	if err := a.checkCoordinatorEpoch(ctrl.CoordinatorEpoch, offset); err != nil {
		return nil, err
	}
	var completed *CompletedTxn
	if a.updated.HasOngoingTxn() {
		completed = &CompletedTxn{
			ProducerID:  a.pid,
			FirstOffset: a.updated.CurrentTxnFirstOffset,
			LastOffset:  offset,
			IsAborted:   ctrl.Type == kmsg.ControlRecordKeyTypeAbort,
		}
	}
	// The marker batch holds one record, so its max timestamp is the
	// record's timestamp, which Kafka uses here.
	a.updated.endTxn(epoch, ctrl.CoordinatorEpoch, b.MaxTimestamp())
	return completed, nil
}

// checkProducerEpoch fences writes from an older epoch. Replicas log and
// accept them: the leader already decided, and a follower must not diverge
// from its log (Kafka logs a warning; we have no logger here).
func (a *appendInfo) checkProducerEpoch(epoch int16, offset int64) error {
	if epoch >= a.updated.ProducerEpoch || a.origin == record.OriginReplication {
		return nil
	}
	// Kafka 2.7+ answers INVALID_PRODUCER_EPOCH rather than the fatal
	// PRODUCER_FENCED, so the client can abort its transaction and retry.
	return record.Errorf(kerr.InvalidProducerEpoch,
		"epoch of producer %d at offset %d is %d, which is smaller than the last seen epoch %d",
		a.pid, offset, epoch, a.updated.ProducerEpoch)
}

// checkSequence follows ProducerAppendInfo.checkSequence without the
// KIP-890 verification state.
func (a *appendInfo) checkSequence(epoch int16, firstSeq int32, offset int64) error {
	if epoch != a.updated.ProducerEpoch {
		// A new epoch restarts sequences at 0. An unknown producer (no epoch
		// yet) may start anywhere: its earlier batches may have been removed
		// by retention or DeleteRecords (KIP-360).
		if firstSeq != 0 && a.updated.ProducerEpoch != record.NoProducerEpoch {
			return record.Errorf(kerr.OutOfOrderSequenceNumber,
				"invalid sequence number for new epoch of producer %d at offset %d: %d (request epoch), %d (seq. number), %d (current producer epoch)",
				a.pid, offset, epoch, firstSeq, a.updated.ProducerEpoch)
		}
		return nil
	}
	var lastSeq int32
	switch {
	case !a.updated.IsEmpty():
		lastSeq = a.updated.LastSeq()
	case epoch == a.current.ProducerEpoch:
		lastSeq = a.current.LastSeq()
	default:
		lastSeq = record.NoSequence
	}
	// With no committed epoch the producer is unknown to this partition and
	// any sequence is accepted, as above.
	if a.current.ProducerEpoch == record.NoProducerEpoch || inSequence(lastSeq, firstSeq) {
		return nil
	}
	return record.Errorf(kerr.OutOfOrderSequenceNumber,
		"out of order sequence number for producer %d at offset %d: %d (incoming seq. number), %d (current end sequence number)",
		a.pid, offset, firstSeq, lastSeq)
}

// checkCoordinatorEpoch fences markers from a coordinator older than the one
// that wrote this producer's previous marker.
func (a *appendInfo) checkCoordinatorEpoch(coordinatorEpoch int32, offset int64) error {
	if a.updated.CoordinatorEpoch <= coordinatorEpoch || a.origin == record.OriginReplication {
		return nil
	}
	return record.Errorf(kerr.TransactionCoordinatorFenced,
		"invalid coordinator epoch for producer %d at offset %d: %d (zombie), %d (current)",
		a.pid, offset, coordinatorEpoch, a.updated.CoordinatorEpoch)
}
