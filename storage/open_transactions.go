package storage

import (
	"cmp"
	"slices"

	"github.com/strait-io/strait/storage/record"
)

// OpenTransaction is a transaction whose data is in the log and that no
// COMMIT or ABORT marker has closed yet: its first offset holds the last
// stable offset back. The epochs are what a marker closing it must carry to
// pass the producer-state fences (ProducerAppendInfo.appendEndTxnMarker:
// a producer epoch and a coordinator epoch at least the producer's).
type OpenTransaction struct {
	ProducerID    int64
	ProducerEpoch int16
	// CoordinatorEpoch is the coordinator epoch of the producer's last
	// marker, -1 when none was written yet.
	CoordinatorEpoch int32
	// FirstOffset is the offset of the transaction's first batch.
	FirstOffset int64
}

// OpenTransactions lists the log's open transactions by first offset (the
// ongoing transactions of Kafka's ProducerStateManager, with the producer
// entry's epochs). A producer has at most one.
func (l *Log) OpenTransactions() []OpenTransaction {
	var out []OpenTransaction
	for _, p := range l.producers.Producers() {
		if p.CurrentTxnStartOffset < 0 {
			continue
		}
		out = append(out, OpenTransaction{ProducerID: p.ProducerID, ProducerEpoch: p.ProducerEpoch,
			CoordinatorEpoch: p.CoordinatorEpoch, FirstOffset: p.CurrentTxnStartOffset})
	}
	slices.SortFunc(out, func(a, b OpenTransaction) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	return out
}

// AbortOpenTransactions closes every open transaction with an ABORT marker
// (record.EndTxnMarkerBatch, one control batch per transaction, carrying
// the producer's epoch and coordinator epoch), appended as leader in
// leaderEpoch with the coordinator's origin, as WriteTxnMarkers would. It
// returns the transactions it aborted and the append (zero when none was
// open: nothing is written). The aborted transactions go to the
// transaction index, and the last stable offset passes them once the high
// watermark passes their markers.
//
// It is the KIP-1279 failover's answer to transactions a stopped mirror
// left open (their source coordinator will never write here again): abort
// them rather than truncate the log to the last stable offset, which would
// also delete every later record, committed ones included. The list and
// the append are two steps: the caller keeps other writers out (a mirror
// partition is read-only and its fetcher removed). Were a transaction to
// start in between it would stay open, and a producer that wrote with a
// newer epoch in between would make the append fail with
// INVALID_PRODUCER_EPOCH and append nothing; calling again settles both.
func (l *Log) AbortOpenTransactions(leaderEpoch int32) ([]OpenTransaction, AppendInfo, error) {
	open := l.OpenTransactions()
	if len(open) == 0 {
		return nil, AppendInfo{}, l.check()
	}
	now := l.clock.Now().UnixMilli()
	var buf []byte
	for _, t := range open {
		buf = append(buf, record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch,
			PartitionLeaderEpoch: leaderEpoch, Timestamp: now}, false, t.CoordinatorEpoch)...)
	}
	info, err := l.AppendAsLeader(buf, leaderEpoch, record.OriginCoordinator)
	if err != nil {
		return nil, AppendInfo{}, err
	}
	return open, info, nil
}
