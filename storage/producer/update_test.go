package producer

import (
	"encoding/binary"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

func newTestManager(t *testing.T) *Manager {
	t.Helper()
	m, err := NewManager(vfs.NewMem(), "/p", DefaultConfig(), clock.NewManual(time.UnixMilli(0)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestUpdateLifecycle(t *testing.T) {
	m := newTestManager(t)
	appendBatches(t, m, record.OriginClient, dataBatch(t, 1, 0, 0, 1, 0, false, 1))
	u := m.NewUpdate(record.OriginClient)
	if _, err := u.Append(dataBatch(t, 1, 0, 1, 1, 1, false, 1), ControlInfo{}); err != nil {
		t.Fatal(err)
	}
	_, err := u.Append(dataBatch(t, 1, 0, 5, 1, 2, false, 1), ControlInfo{})
	var re *record.Error
	if !errors.As(err, &re) || re.Code != kerr.OutOfOrderSequenceNumber || !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("err = %v, want OUT_OF_ORDER_SEQUENCE_NUMBER record.Error", err)
	}
	// The Update is dead: further appends fail and Commit applies nothing.
	if _, err := u.Append(dataBatch(t, 1, 0, 2, 1, 2, false, 1), ControlInfo{}); !errors.Is(err, ErrUpdateFailed) || !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("append after failure: %v", err)
	}
	if got := u.Commit(3); got != nil {
		t.Fatalf("commit of failed update returned %v", got)
	}
	if e, _ := m.Entry(1); m.MapEndOffset() != 1 || len(e.Batches) != 1 || e.LastSeq() != 0 {
		t.Fatalf("failed update changed state: map end %d, entry %+v", m.MapEndOffset(), e)
	}

	u = m.NewUpdate(record.OriginClient)
	if _, err := u.Append(dataBatch(t, 1, 0, 1, 1, 1, true, 1), ControlInfo{}); err != nil {
		t.Fatal(err)
	}
	u.Commit(2)
	if _, err := u.Append(dataBatch(t, 1, 0, 2, 1, 2, true, 1), ControlInfo{}); !errors.Is(err, ErrUpdateDone) {
		t.Fatalf("append after commit: %v", err)
	}
	if got := u.Commit(5); got != nil || m.MapEndOffset() != 2 {
		t.Fatalf("second commit: %v, map end %d", got, m.MapEndOffset())
	}
	if e, ok := m.Entry(1); !ok || e.CurrentTxnFirstOffset != 1 || e.LastSeq() != 1 || len(e.Batches) != 2 {
		t.Fatalf("entry %+v, %v", e, ok)
	}
	if off, ok := m.FirstUnstableOffset(); !ok || off != 1 {
		t.Fatalf("first unstable %d, %v", off, ok)
	}
}

func TestAppendReturnsCompletedTxn(t *testing.T) {
	m := newTestManager(t)
	appendBatches(t, m, record.OriginClient, dataBatch(t, 4, 2, 0, 3, 10, true, 1))
	u := m.NewUpdate(record.OriginCoordinator)
	mk := markerBatch(4, 2, false, 6, 13, 2)
	c, err := u.Append(mk, controlInfo(t, mk))
	if err != nil {
		t.Fatal(err)
	}
	want := CompletedTxn{ProducerID: 4, FirstOffset: 10, LastOffset: 13, IsAborted: true}
	if c == nil || *c != want {
		t.Fatalf("completed %v, want %v", c, want)
	}
	got := u.Commit(14)
	if len(got) != 1 || got[0] != (CommittedTxn{Txn: want, LastStableOffset: 14}) {
		t.Fatalf("committed %v", got)
	}
	// A second marker for the same (now closed) transaction completes nothing.
	u = m.NewUpdate(record.OriginCoordinator)
	mk = markerBatch(4, 2, true, 6, 14, 3)
	if c, err := u.Append(mk, controlInfo(t, mk)); err != nil || c != nil {
		t.Fatalf("repeated marker: %v, %v", c, err)
	}
}

func TestControlBatchesWithoutMarkerType(t *testing.T) {
	m := newTestManager(t)
	// A producer's control batch that is not COMMIT/ABORT is invalid.
	mk := markerBatch(1, 0, true, 0, 0, 1)
	u := m.NewUpdate(record.OriginReplication)
	_, err := u.Append(mk, ControlInfo{Type: kmsg.ControlRecordKeyTypeSnapshotHeader})
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("err = %v, want INVALID_RECORD", err)
	}
	// A control batch without a producer id that is not a reset is ignored.
	u = m.NewUpdate(record.OriginReplication)
	ctl := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: -1, ProducerEpoch: -1}, true, 0)
	if c, err := u.Append(ctl, ControlInfo{Type: kmsg.ControlRecordKeyTypeKraftVersion}); err != nil || c != nil {
		t.Fatalf("ignored control batch: %v, %v", c, err)
	}
	u.Commit(1)
	if m.ProducerIDCount() != 0 || m.MapEndOffset() != 1 {
		t.Fatalf("state after ignored batch: %d producers, map end %d", m.ProducerIDCount(), m.MapEndOffset())
	}
}

// TestEmptyControlBatch: the cleaner can empty a marker's batch; it then
// completes nothing, even for a producer with an open transaction.
func TestEmptyControlBatch(t *testing.T) {
	m := newTestManager(t)
	appendBatches(t, m, record.OriginClient, dataBatch(t, 1, 0, 0, 1, 0, true, 1))
	mk := markerBatch(1, 0, false, 0, 1, 2)
	empty := record.Batch(append([]byte(nil), mk[:record.HeaderSize]...))
	binary.BigEndian.PutUint32(empty[8:], uint32(record.HeaderSize-record.LogOverhead))
	binary.BigEndian.PutUint32(empty[57:], 0)
	empty.SetCRC()
	if !empty.IsControl() || empty.RecordCount() != 0 {
		t.Fatal("bad test batch")
	}
	u := m.NewUpdate(record.OriginReplication)
	if c, err := u.Append(empty, ControlInfo{}); err != nil || c != nil {
		t.Fatalf("empty control batch: %v, %v", c, err)
	}
	if got := u.Commit(2); got != nil {
		t.Fatalf("committed %v", got)
	}
	if txns := m.OngoingTxns(); len(txns) != 1 || txns[0].FirstOffset != 0 {
		t.Fatalf("ongoing %v", txns)
	}
}

func TestSequenceArithmetic(t *testing.T) {
	for _, tc := range []struct {
		seq, dec, want int32
	}{
		{10, 4, 6},
		{0, 0, 0},
		{1, 3, math.MaxInt32 - 1},
		{0, 1, math.MaxInt32},
		{-1, 0, math.MaxInt32}, // Kafka's result for NoSequence
	} {
		if got := decrementSequence(tc.seq, tc.dec); got != tc.want {
			t.Errorf("decrementSequence(%d, %d) = %d, want %d", tc.seq, tc.dec, got, tc.want)
		}
		if tc.seq >= 0 {
			if back := record.IncrementSequence(tc.want, tc.dec); back != tc.seq {
				t.Errorf("IncrementSequence(%d, %d) = %d, want %d", tc.want, tc.dec, back, tc.seq)
			}
		}
	}
	for _, tc := range []struct {
		last, next int32
		want       bool
	}{
		{4, 5, true},
		{4, 6, false},
		{4, 4, false},
		{-1, 0, true},
		{math.MaxInt32, 0, true},
		{math.MaxInt32, math.MinInt32, false},
		{math.MaxInt32 - 1, math.MaxInt32, true},
	} {
		if got := inSequence(tc.last, tc.next); got != tc.want {
			t.Errorf("inSequence(%d, %d) = %v", tc.last, tc.next, got)
		}
	}
}

func TestConfig(t *testing.T) {
	if got := DefaultConfig().ProducerIDExpiration; got != 86400000*time.Millisecond {
		t.Fatalf("default expiration %v", got)
	}
	for _, d := range []time.Duration{0, -time.Second, time.Microsecond} {
		if _, err := NewManager(vfs.NewMem(), "/p", Config{ProducerIDExpiration: d}, clock.Real{}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("expiration %v: err = %v", d, err)
		}
	}
	// A missing directory has no snapshots.
	m, err := NewManager(vfs.NewMem(), "/missing", DefaultConfig(), clock.Real{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.LatestSnapshotOffset(); ok {
		t.Fatal("snapshot in a missing directory")
	}
}

func TestProducersView(t *testing.T) {
	m := newTestManager(t)
	appendBatches(t, m, record.OriginClient,
		dataBatch(t, 9, 1, 0, 4, 0, false, 70),
		dataBatch(t, 2, 3, 5, 1, 4, true, 80))
	mk := markerBatch(9, 1, true, 11, 5, 90)
	appendBatches(t, m, record.OriginCoordinator, mk)
	got := m.Producers()
	want := []ProducerView{
		{ProducerID: 2, ProducerEpoch: 3, LastSequence: 5, LastTimestamp: 80, CoordinatorEpoch: -1, CurrentTxnStartOffset: 4},
		{ProducerID: 9, ProducerEpoch: 1, LastSequence: 3, LastTimestamp: 90, CoordinatorEpoch: 11, CurrentTxnStartOffset: -1},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("producers\n%+v\nwant\n%+v", got, want)
	}
	// Entry returns a copy.
	e, _ := m.Entry(9)
	e.Batches[0].LastSeq = 100
	if e2, _ := m.Entry(9); e2.Batches[0].LastSeq != 3 {
		t.Fatal("Entry shares its batches with the manager")
	}
}

// TestConcurrentReads runs the read methods against a stream of appends;
// with -race it checks the locking.
func TestConcurrentReads(t *testing.T) {
	m := newTestManager(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				m.FirstUnstableOffset()
				m.Producers()
				m.Entry(1)
				m.OngoingTxns()
				m.MapEndOffset()
			}
		}()
	}
	off := int64(0)
	for i := range 300 {
		pid := int64(i%4 + 1)
		b := dataBatch(t, pid, 0, int32(i/4), 1, off, pid == 1, int64(i))
		off++
		batches := []record.Batch{b}
		if pid == 1 && i%8 == 0 {
			batches = append(batches, markerBatch(1, 0, true, 0, off, int64(i)))
			off++
		}
		u := m.NewUpdate(record.OriginReplication)
		for _, b := range batches {
			if _, err := u.Append(b, controlInfo(t, b)); err != nil {
				t.Fatal(err)
			}
		}
		u.Commit(off)
		m.OnHighWatermarkUpdated(off)
		if i%50 == 0 {
			m.RemoveExpiredProducers(time.UnixMilli(int64(i)))
		}
	}
	close(stop)
	wg.Wait()
	if m.MapEndOffset() != off {
		t.Fatalf("map end %d, want %d", m.MapEndOffset(), off)
	}
}

func TestSmallAccessors(t *testing.T) {
	m := newTestManager(t)
	if !m.IsEmpty() {
		t.Fatal("new manager not empty")
	}
	if _, ok := m.FirstUndecidedOffset(); ok {
		t.Fatal("undecided offset without transactions")
	}
	appendBatches(t, m, record.OriginClient,
		dataBatch(t, 1, 0, 0, 2, 0, false, 1),
		dataBatch(t, 1, 0, 2, 3, 2, false, 1),
		dataBatch(t, 2, 0, 0, 1, 5, true, 1))
	appendBatches(t, m, record.OriginCoordinator, markerBatch(2, 0, true, 0, 6, 1))
	e, _ := m.Entry(1)
	if e.FirstSeq() != 0 || e.LastSeq() != 4 || e.LastDataOffset() != 4 || e.LastOffsetDelta() != 2 || e.IsEmpty() {
		t.Fatalf("entry accessors: %+v", e)
	}
	if _, ok := m.FirstUndecidedOffset(); ok {
		t.Fatal("undecided offset after the marker")
	}
	if off, ok := m.FirstUnstableOffset(); !ok || off != 5 {
		t.Fatalf("first unstable %d, %v", off, ok)
	}
	m.OnHighWatermarkUpdated(7)
	if m.IsEmpty() {
		t.Fatal("manager with producers is empty")
	}
	appendBatches(t, m, record.OriginClient, dataBatch(t, 3, 0, 0, 1, 7, true, 1))
	if off, ok := m.FirstUndecidedOffset(); !ok || off != 7 {
		t.Fatalf("first undecided %d, %v", off, ok)
	}
	if err := m.fsys.MkdirAll("/p"); err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{10, 20} {
		m.UpdateMapEndOffset(off)
		if err := m.TakeSnapshot(); err != nil {
			t.Fatal(err)
		}
	}
	if o, ok := m.OldestSnapshotOffset(); !ok || o != 10 {
		t.Fatalf("oldest snapshot %d, %v", o, ok)
	}
	if o, ok := m.LatestSnapshotOffset(); !ok || o != 20 {
		t.Fatalf("latest snapshot %d, %v", o, ok)
	}
	if m.Config() != DefaultConfig() {
		t.Fatalf("config %+v", m.Config())
	}
}
