package storage

import (
	"bytes"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/record"
)

// A follower (or the mirror) appends what one fetch returned, which may be
// larger than a small segment.bytes: the set is appended over several
// segments, byte for byte at its offsets, with producer state, the
// transaction index and the producer snapshots of the rolls right, so a
// recovery from the snapshots sees the same producers. Only a single batch
// larger than a segment is refused (RECORD_LIST_TOO_LARGE), with nothing
// appended.
func TestAppendAsFollowerSpansSegments(t *testing.T) {
	e := newTestEnv(t)
	e.cfg.SegmentBytes, e.cfg.IndexIntervalBytes = 700, 0
	l, _ := e.open(e.options(true))

	// An idempotent producer's 8 batches, then a transaction of 2 batches
	// and its ABORT marker: about 2.8 KB in one fetched set.
	var set []byte
	next := int64(0)
	add := func(b []byte) {
		record.Batch(b).SetBaseOffset(next)
		record.Batch(b).SetPartitionLeaderEpoch(3)
		next = record.Batch(b).NextOffset()
		set = append(set, b...)
	}
	for i := range 8 {
		add(e.batch(record.BatchSpec{ProducerID: 7, BaseSequence: int32(5 * i)}, 5, 40))
	}
	txnFirst := next
	for i := range 2 {
		add(e.batch(record.BatchSpec{ProducerID: 9, BaseSequence: int32(3 * i), Transactional: true}, 3, 40))
	}
	add(record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: 9, Timestamp: e.clock.Now().UnixMilli()}, false, 0))
	if len(set) <= 3*int(e.cfg.SegmentBytes) {
		t.Fatalf("the set is %d bytes, want more than 3 segments of %d", len(set), e.cfg.SegmentBytes)
	}

	info, err := l.AppendAsFollower(bytes.Clone(set))
	if err != nil {
		t.Fatalf("append of %d bytes with segment.bytes %d: %v", len(set), e.cfg.SegmentBytes, err)
	}
	if info.FirstOffset != 0 || info.LastOffset != next-1 || info.Bytes != len(set) || info.NumRecords != 8*5+2*3+1 {
		t.Fatalf("append info %+v, want offsets [0, %d], %d bytes, 47 records", info, next-1, len(set))
	}
	segs := l.segs()
	if len(segs) < 4 {
		t.Fatalf("%d segments, want at least 4", len(segs))
	}
	for _, s := range segs {
		if s.Size() > int64(e.cfg.SegmentBytes) {
			t.Fatalf("segment %d is %d bytes, over segment.bytes %d", s.baseOffset, s.Size(), e.cfg.SegmentBytes)
		}
	}
	l.MaybeIncrementHighWatermark(l.LogEndOffset())
	checkLog := func(l *Log, when string) {
		t.Helper()
		var got []byte
		for _, b := range readAll(t, l, 0, FetchLogEnd) {
			got = append(got, b...)
		}
		if !bytes.Equal(got, set) {
			t.Fatalf("%s: the log holds %d bytes that differ from the %d appended", when, len(got), len(set))
		}
		ps, err := l.ActiveProducers()
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 2 || ps[0].ProducerID != 7 || ps[0].LastSequence != 39 || ps[1].ProducerID != 9 || ps[1].CurrentTxnStartOffset != -1 {
			t.Fatalf("%s: producers %+v, want 7 at sequence 39 and 9 with no transaction open", when, ps)
		}
		fd, err := l.Read(txnFirst, 1<<20, FetchTxnCommitted, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(fd.AbortedTxns) != 1 || fd.AbortedTxns[0].ProducerID != 9 || fd.AbortedTxns[0].FirstOffset != txnFirst {
			t.Fatalf("%s: aborted transactions %+v, want producer 9's from %d", when, fd.AbortedTxns, txnFirst)
		}
	}
	checkLog(l, "after the append")

	// Recovery rebuilds producer state from the rolls' snapshots.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, _ = e.open(e.options(false))
	l.MaybeIncrementHighWatermark(l.LogEndOffset()) // kept by the replica manager, not the log
	checkLog(l, "after recovery")

	// A batch no segment can hold.
	big := e.batch(record.BatchSpec{}, 3, 600)
	record.Batch(big).SetBaseOffset(l.LogEndOffset())
	leo := l.LogEndOffset()
	_, err = l.AppendAsFollower(big)
	if !errors.Is(err, kerr.RecordListTooLarge) || l.LogEndOffset() != leo {
		t.Fatalf("append of a %d-byte batch: %v, log end %d (was %d); want RECORD_LIST_TOO_LARGE and nothing appended", len(big), err, l.LogEndOffset(), leo)
	}
	l.Close()
}
