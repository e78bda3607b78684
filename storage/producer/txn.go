package producer

import (
	"cmp"
	"fmt"
	"slices"
)

// TxnMetadata is a transaction the manager tracks for the last stable
// offset (Kafka's TxnMetadata): ongoing while LastOffset is -1, then
// completed but not yet replicated until the high watermark passes
// LastOffset.
type TxnMetadata struct {
	ProducerID  int64
	FirstOffset int64
	// LastOffset is the offset of the COMMIT/ABORT marker, -1 while ongoing.
	LastOffset int64
}

func (t TxnMetadata) String() string {
	return fmt.Sprintf("pid=%d first=%d last=%d", t.ProducerID, t.FirstOffset, t.LastOffset)
}

// CompletedTxn is a transaction ended by a marker in an append (Kafka's
// CompletedTxn); aborted ones go to the segment's transaction index.
type CompletedTxn struct {
	ProducerID int64
	// FirstOffset is the transaction's first data offset.
	FirstOffset int64
	// LastOffset is the offset of the marker.
	LastOffset int64
	IsAborted  bool
}

func (c CompletedTxn) String() string {
	outcome := "commit"
	if c.IsAborted {
		outcome = "abort"
	}
	return fmt.Sprintf("pid=%d first=%d last=%d %s", c.ProducerID, c.FirstOffset, c.LastOffset, outcome)
}

// CommittedTxn is what Update.Commit reports per completed transaction: the
// last stable offset to store with it in the transaction index (AbortedTxn's
// lastStableOffset), computed before the transaction is marked complete.
type CommittedTxn struct {
	Txn              CompletedTxn
	LastStableOffset int64
}

// txnList is a list of transactions sorted by first offset, standing in for
// Kafka's TreeMap<Long, TxnMetadata>. A partition has at most one open
// transaction per producer, so a sorted slice is small and cheap.
type txnList []TxnMetadata

func (l txnList) search(firstOffset int64) (int, bool) {
	return slices.BinarySearchFunc(l, firstOffset, func(t TxnMetadata, off int64) int {
		return cmp.Compare(t.FirstOffset, off)
	})
}

// put inserts or replaces the transaction starting at t.FirstOffset.
func (l *txnList) put(t TxnMetadata) {
	i, found := l.search(t.FirstOffset)
	if found {
		(*l)[i] = t
		return
	}
	*l = slices.Insert(*l, i, t)
}

// remove deletes and returns the transaction starting at firstOffset.
func (l *txnList) remove(firstOffset int64) (TxnMetadata, bool) {
	i, found := l.search(firstOffset)
	if !found {
		return TxnMetadata{}, false
	}
	t := (*l)[i]
	*l = slices.Delete(*l, i, i+1)
	return t, true
}

func (l txnList) first() (TxnMetadata, bool) {
	if len(l) == 0 {
		return TxnMetadata{}, false
	}
	return l[0], true
}
