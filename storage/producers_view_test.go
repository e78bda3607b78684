package storage

import (
	"errors"
	"slices"
	"testing"

	"github.com/strait-io/strait/storage/producer"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// ActiveProducers reports each producer as DescribeProducers shows it: an
// idempotent one, a transactional one with its open transaction's first
// offset, and the same after its marker (no open transaction, the marker's
// coordinator epoch). A failed or closed log answers its error instead.
func TestActiveProducers(t *testing.T) {
	efs := vfs.WithErrors(vfs.NewMem(), nil)
	e := newTestEnv(t)
	o := e.options(false)
	o.FS = efs
	l, _ := e.open(o)
	now := e.clock.Now().UnixMilli()
	appendBatch := func(b []byte, origin record.AppendOrigin) {
		t.Helper()
		if _, err := l.AppendAsLeader(b, 3, origin); err != nil {
			t.Fatal(err)
		}
	}
	appendBatch(e.batch(record.BatchSpec{ProducerID: 9, ProducerEpoch: 1, BaseSequence: 0}, 2, 0), record.OriginClient)
	appendBatch(e.batch(record.BatchSpec{ProducerID: 4, ProducerEpoch: 2, BaseSequence: 0, Transactional: true}, 3, 0), record.OriginClient)
	appendBatch(e.batch(record.BatchSpec{ProducerID: 4, ProducerEpoch: 2, BaseSequence: 3, Transactional: true}, 1, 0), record.OriginClient)

	got, err := l.ActiveProducers()
	want := []producer.ProducerView{
		{ProducerID: 4, ProducerEpoch: 2, LastSequence: 3, LastTimestamp: now, CoordinatorEpoch: -1, CurrentTxnStartOffset: 2},
		{ProducerID: 9, ProducerEpoch: 1, LastSequence: 1, LastTimestamp: now, CoordinatorEpoch: -1, CurrentTxnStartOffset: -1},
	}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("open transaction:\n got %+v %v\nwant %+v", got, err, want)
	}

	e.clock.Advance(5)
	appendBatch(record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: 4, ProducerEpoch: 2, Timestamp: now + 5}, true, 7), record.OriginCoordinator)
	got, err = l.ActiveProducers()
	want[0].CoordinatorEpoch, want[0].CurrentTxnStartOffset, want[0].LastTimestamp = 7, -1, now+5
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("after the commit marker:\n got %+v %v\nwant %+v", got, err, want)
	}

	efs.SetInjector(vfs.OnOp(vfs.OpWrite, 0))
	if _, err := l.AppendAsLeader(e.batch(record.BatchSpec{}, 1, 0), 3, record.OriginClient); err == nil {
		t.Fatal("append on a failing disk succeeded")
	}
	efs.SetInjector(nil)
	var se *StorageError
	if got, err := l.ActiveProducers(); !errors.As(err, &se) || got != nil {
		t.Fatalf("failed log: %+v %v, want a *StorageError", got, err)
	}
	l.Close()

	// A closed log answers ErrLogClosed.
	e2 := newTestEnv(t)
	l2, _ := e2.open(e2.options(false))
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l2.ActiveProducers(); !errors.Is(err, ErrLogClosed) {
		t.Fatalf("closed log: %v, want ErrLogClosed", err)
	}
}
