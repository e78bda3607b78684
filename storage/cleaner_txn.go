package storage

import (
	"container/heap"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/index"
	"github.com/strait-io/strait/storage/record"
)

// cleanedTxnMetadata follows transactions while the cleaner walks the log
// (Kafka's CleanedTransactionMetadata): it tells which data batches belong
// to aborted transactions, and so can go, and when a COMMIT or ABORT marker
// can go. A marker is kept while any batch of its transaction is still in
// the log; an ABORT marker that is kept is indexed in the cleaned segment's
// transaction index.
type cleanedTxnMetadata struct {
	ongoingCommitted map[int64]bool
	ongoingAborted   map[int64]*abortedTxnMetadata
	aborted          abortedTxnHeap // not yet reached, by first offset
	ctrl             func(b record.Batch) (kmsg.ControlRecordKeyType, bool, error)
	// cleanedIndex receives the aborted transactions whose marker is kept;
	// nil while only building the offset map.
	cleanedIndex *index.TxnIndex
}

type abortedTxnMetadata struct {
	txn index.AbortedTxn
	// observed is set once a batch of the transaction was seen.
	observed bool
}

func newCleanedTxnMetadata(ctrl func(b record.Batch) (kmsg.ControlRecordKeyType, bool, error)) *cleanedTxnMetadata {
	return &cleanedTxnMetadata{
		ongoingCommitted: map[int64]bool{},
		ongoingAborted:   map[int64]*abortedTxnMetadata{},
		ctrl:             ctrl,
	}
}

// addAborted queues aborted transactions from a transaction index.
func (t *cleanedTxnMetadata) addAborted(txns []index.AbortedTxn) {
	for _, a := range txns {
		heap.Push(&t.aborted, a)
	}
}

func (t *cleanedTxnMetadata) consumeAbortedUpTo(offset int64) {
	for len(t.aborted) > 0 && t.aborted[0].FirstOffset <= offset {
		a := heap.Pop(&t.aborted).(index.AbortedTxn)
		if _, ok := t.ongoingAborted[a.ProducerID]; !ok {
			t.ongoingAborted[a.ProducerID] = &abortedTxnMetadata{txn: a}
		}
	}
}

// onControlBatch reports whether the control batch may be discarded
// (onControlBatchRead): an ABORT marker once no batch of its transaction
// was seen, a COMMIT marker likewise; other control records never.
func (t *cleanedTxnMetadata) onControlBatch(b record.Batch) (bool, error) {
	t.consumeAbortedUpTo(b.LastOffset())
	typ, ok, err := t.ctrl(b)
	if err != nil {
		return false, err
	}
	if !ok {
		return true, nil // an emptied control batch: already cleaned
	}
	pid := b.ProducerID()
	switch typ {
	case kmsg.ControlRecordKeyTypeAbort:
		a, ok := t.ongoingAborted[pid]
		delete(t.ongoingAborted, pid)
		if ok && a.observed {
			if t.cleanedIndex != nil {
				if err := t.cleanedIndex.Append(a.txn); err != nil {
					return false, err
				}
			}
			return false, nil
		}
		return true, nil
	case kmsg.ControlRecordKeyTypeCommit:
		seen := t.ongoingCommitted[pid]
		delete(t.ongoingCommitted, pid)
		return !seen, nil
	default:
		return false, nil
	}
}

// onDataBatch reports whether the batch belongs to an aborted transaction
// (onBatchRead).
func (t *cleanedTxnMetadata) onDataBatch(b record.Batch) bool {
	t.consumeAbortedUpTo(b.LastOffset())
	if !b.IsTransactional() {
		return false
	}
	if a, ok := t.ongoingAborted[b.ProducerID()]; ok {
		a.observed = true
		return true
	}
	t.ongoingCommitted[b.ProducerID()] = true
	return false
}

// abortedTxnHeap is a min-heap by first offset.
type abortedTxnHeap []index.AbortedTxn

func (h abortedTxnHeap) Len() int           { return len(h) }
func (h abortedTxnHeap) Less(i, j int) bool { return h[i].FirstOffset < h[j].FirstOffset }
func (h abortedTxnHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *abortedTxnHeap) Push(x any)        { *h = append(*h, x.(index.AbortedTxn)) }
func (h *abortedTxnHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
