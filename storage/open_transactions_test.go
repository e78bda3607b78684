package storage

import (
	"errors"
	"slices"
	"testing"

	"github.com/strait-io/strait/storage/record"
)

// appendTxnBatch appends a transactional batch of n records from pid at
// pepoch as a follower would (a mirror copies a source's batches so).
func appendTxnBatch(t *testing.T, e *testEnv, l *Log, pid int64, pepoch int16, seq int32, n int, epoch int32) {
	t.Helper()
	buf := e.batch(record.BatchSpec{BaseOffset: l.LogEndOffset(), PartitionLeaderEpoch: epoch, ProducerID: pid, ProducerEpoch: pepoch,
		BaseSequence: seq, Transactional: true}, n, 0)
	if _, err := l.AppendAsFollower(buf); err != nil {
		t.Fatal(err)
	}
}

// appendMarker appends pid's COMMIT or ABORT marker as a follower would.
func appendMarker(t *testing.T, l *Log, pid int64, pepoch int16, commit bool, coordEpoch, epoch int32) {
	t.Helper()
	b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: pid, ProducerEpoch: pepoch, PartitionLeaderEpoch: epoch,
		Timestamp: 1_700_000_000_000}, commit, coordEpoch)
	b.SetBaseOffset(l.LogEndOffset())
	if _, err := l.AppendAsFollower(b); err != nil {
		t.Fatal(err)
	}
}

// The open transactions are listed with the epochs a closing marker must
// carry; AbortOpenTransactions aborts each of them with one marker, the
// aborted ranges go to the transaction index, the last stable offset
// passes them with the high watermark, and a second call writes nothing.
func TestAbortOpenTransactions(t *testing.T) {
	e := newTestEnv(t)
	l, _ := e.open(e.options(true))

	if got := l.OpenTransactions(); len(got) != 0 {
		t.Fatalf("empty log: open %v", got)
	}
	appendTxnBatch(t, e, l, 7, 2, 0, 3, 1) // [0,2] pid 7 opens at 0
	appendMarker(t, l, 7, 2, true, 4, 1)   // 3: committed by coordinator epoch 4
	appendTxnBatch(t, e, l, 7, 3, 0, 2, 1) // [4,5] pid 7 again, epoch 3
	appendTxnBatch(t, e, l, 9, 0, 0, 2, 1) // [6,7] pid 9, no marker yet
	plain := e.batch(record.BatchSpec{BaseOffset: 8, PartitionLeaderEpoch: 1}, 2, 0)
	if _, err := l.AppendAsFollower(plain); err != nil { // [8,9] plain records
		t.Fatal(err)
	}
	appendTxnBatch(t, e, l, 5, 1, 0, 1, 1) // 10: pid 5
	appendMarker(t, l, 5, 1, true, 0, 1)   // 11: committed after the open ones
	l.UpdateHighWatermark(l.LogEndOffset())

	want := []OpenTransaction{
		{ProducerID: 7, ProducerEpoch: 3, CoordinatorEpoch: 4, FirstOffset: 4},
		{ProducerID: 9, ProducerEpoch: 0, CoordinatorEpoch: -1, FirstOffset: 6},
	}
	if got := l.OpenTransactions(); !slices.Equal(got, want) {
		t.Fatalf("open %+v, want %+v", got, want)
	}
	if lso := l.LastStableOffset(); lso != 4 {
		t.Fatalf("LSO %d, want 4", lso)
	}

	aborted, info, err := l.AbortOpenTransactions(6)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(aborted, want) || info.FirstOffset != 12 || info.LastOffset != 13 || l.LogEndOffset() != 14 {
		t.Fatalf("aborted %+v, append %+v, LEO %d", aborted, info, l.LogEndOffset())
	}
	if got := l.OpenTransactions(); len(got) != 0 {
		t.Fatalf("after the abort: open %v", got)
	}
	// Completed but not yet replicated: the LSO waits for the high
	// watermark, then passes everything.
	if lso := l.LastStableOffset(); lso != 4 {
		t.Fatalf("LSO %d before the high watermark passed the markers, want 4", lso)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	if lso := l.LastStableOffset(); lso != 14 {
		t.Fatalf("LSO %d after the markers were replicated, want 14", lso)
	}
	markers := readAll(t, l, 12, FetchLogEnd)
	for i, b := range markers {
		if !b.IsControl() || !b.IsTransactional() || b.PartitionLeaderEpoch() != 6 || b.ProducerID() != want[i].ProducerID ||
			b.ProducerEpoch() != want[i].ProducerEpoch {
			t.Fatalf("marker %d: control %v txn %v epoch %d pid %d pepoch %d", i, b.IsControl(), b.IsTransactional(),
				b.PartitionLeaderEpoch(), b.ProducerID(), b.ProducerEpoch())
		}
	}
	// read_committed: both transactions are reported aborted, the
	// committed ones (pid 7's first, pid 5's) are not.
	fd, err := l.Read(0, 1<<20, FetchTxnCommitted, true)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, a := range fd.AbortedTxns {
		got = append(got, a.ProducerID, a.FirstOffset)
	}
	if !slices.Equal(got, []int64{7, 4, 9, 6}) {
		t.Fatalf("aborted transactions (pid, first offset) %v, want [7 4 9 6]", got)
	}

	// Nothing open: nothing written.
	aborted, info, err = l.AbortOpenTransactions(6)
	if err != nil || len(aborted) != 0 || info != (AppendInfo{}) || l.LogEndOffset() != 14 {
		t.Fatalf("second call: %v %+v %v, LEO %d", aborted, info, err, l.LogEndOffset())
	}

	// Reopened, the log rebuilds the same state from its markers.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, _ := e.open(e.options(false))
	defer l2.Close()
	if got := l2.OpenTransactions(); len(got) != 0 {
		t.Fatalf("after recovery: open %v", got)
	}
}

// A closed log aborts nothing and says so.
func TestAbortOpenTransactionsClosedLog(t *testing.T) {
	e := newTestEnv(t)
	l, _ := e.open(e.options(true))
	appendTxnBatch(t, e, l, 3, 0, 0, 1, 0)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.AbortOpenTransactions(1); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("closed log: %v", err)
	}
}
