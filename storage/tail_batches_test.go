package storage

import (
	"testing"

	"github.com/strait-io/strait/storage/record"
)

// addOne records one batch by its bounds, as add does for built batches.
func addOne(t *tailBatches, b tailBatch) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ring == nil {
		t.ring = make([]tailBatch, tailBatchesCap)
	}
	t.addLocked(b)
}

func TestTailBatchesFind(t *testing.T) {
	var tb tailBatches
	if _, ok := tb.find(0); ok {
		t.Fatal("an empty ring found a batch")
	}
	// Batches of 10 offsets and 100 bytes each: [0,9] at 0, [10,19] at
	// 100, ... Appending more than the capacity keeps the newest.
	total := tailBatchesCap + 10
	for i := range total {
		addOne(&tb, tailBatch{baseOffset: int64(10 * i), lastOffset: int64(10*i + 9), pos: int64(100 * i), size: 100})
	}
	oldest := int64(10 * (total - tailBatchesCap))
	for _, c := range []struct {
		offset  int64
		ok      bool
		wantPos int64
	}{
		{offset: oldest - 1, ok: false},
		{offset: 0, ok: false},
		{offset: oldest, ok: true, wantPos: 100 * (oldest / 10)},
		{offset: oldest + 9, ok: true, wantPos: 100 * (oldest / 10)},
		{offset: oldest + 10, ok: true, wantPos: 100 * (oldest/10 + 1)},
		{offset: int64(10*total - 1), ok: true, wantPos: int64(100 * (total - 1))},
		{offset: int64(10 * total), ok: false},
	} {
		b, ok := tb.find(c.offset)
		if ok != c.ok || (ok && b.pos != c.wantPos) {
			t.Errorf("find(%d) = %+v %v, want ok=%v pos %d", c.offset, b, ok, c.ok, c.wantPos)
		}
	}
}

func TestTailBatchesGapForgets(t *testing.T) {
	var tb tailBatches
	addOne(&tb, tailBatch{baseOffset: 0, lastOffset: 4, pos: 0, size: 50})
	addOne(&tb, tailBatch{baseOffset: 5, lastOffset: 9, pos: 50, size: 50})
	// A batch that does not follow the newest (as after a truncation the
	// ring was not told about) drops what came before it.
	addOne(&tb, tailBatch{baseOffset: 5, lastOffset: 7, pos: 50, size: 30})
	if _, ok := tb.find(0); ok {
		t.Fatal("found a batch from before the gap")
	}
	if b, ok := tb.find(6); !ok || b.lastOffset != 7 || b.size != 30 {
		t.Fatalf("find(6) = %+v %v, want the new batch [5,7]", b, ok)
	}
	tb.reset(false)
	if _, ok := tb.find(6); ok {
		t.Fatal("found a batch after reset")
	}
	addOne(&tb, tailBatch{baseOffset: 8, lastOffset: 9, pos: 80, size: 20})
	tb.reset(true)
	if _, ok := tb.find(9); ok || tb.ring != nil {
		t.Fatalf("after a release: ring %v, found %v", tb.ring != nil, ok)
	}
}

// TestTailBatchesFromAppends checks the ring against the batches a log
// appends: add takes them back to back from a position, and an inactive
// segment frees its ring.
func TestTailBatchesFromAppends(t *testing.T) {
	e := newTestEnv(t)
	o := e.options(true)
	o.Config.SegmentBytes = 4 << 10
	l, _ := e.open(o)
	defer l.Close()
	for range 20 {
		if _, err := l.AppendAsLeader(e.batch(record.BatchSpec{}, 5, 100), 1, record.OriginClient); err != nil {
			t.Fatal(err)
		}
	}
	segs := l.segs()
	if len(segs) < 2 {
		t.Fatalf("%d segments, want a roll", len(segs))
	}
	for _, s := range segs[:len(segs)-1] {
		if s.tail.ring != nil {
			t.Errorf("inactive segment %d keeps its ring", s.baseOffset)
		}
	}
	active := segs[len(segs)-1]
	var hdr [record.HeaderSize]byte
	for off := active.baseOffset; off < l.LogEndOffset(); off++ {
		b, ok := active.tail.find(off)
		if !ok {
			t.Fatalf("offset %d of the active segment not remembered", off)
		}
		h, err := active.batchHeaderAt(b.pos, hdr[:])
		if err != nil {
			t.Fatal(err)
		}
		if h.BaseOffset() != b.baseOffset || h.LastOffset() != b.lastOffset || h.Size() != int(b.size) || off < b.baseOffset || off > b.lastOffset {
			t.Fatalf("offset %d: remembered %+v, file has [%d,%d] size %d", off, b, h.BaseOffset(), h.LastOffset(), h.Size())
		}
	}
}
