package storage

import "testing"

func TestTailBatchesFind(t *testing.T) {
	var tb tailBatches
	if _, ok := tb.find(0); ok {
		t.Fatal("an empty ring found a batch")
	}
	// Batches of 10 offsets and 100 bytes each: [0,9] at 0, [10,19] at
	// 100, ... Appending more than the capacity keeps the newest.
	total := tailBatchesCap + 10
	for i := range total {
		tb.add(tailBatch{baseOffset: int64(10 * i), lastOffset: int64(10*i + 9), pos: int64(100 * i), size: 100})
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
	tb.add(tailBatch{baseOffset: 0, lastOffset: 4, pos: 0, size: 50})
	tb.add(tailBatch{baseOffset: 5, lastOffset: 9, pos: 50, size: 50})
	// A batch that does not follow the newest (as after a truncation the
	// ring was not told about) drops what came before it.
	tb.add(tailBatch{baseOffset: 5, lastOffset: 7, pos: 50, size: 30})
	if _, ok := tb.find(0); ok {
		t.Fatal("found a batch from before the gap")
	}
	if b, ok := tb.find(6); !ok || b.lastOffset != 7 || b.size != 30 {
		t.Fatalf("find(6) = %+v %v, want the new batch [5,7]", b, ok)
	}
	tb.reset()
	if _, ok := tb.find(6); ok {
		t.Fatal("found a batch after reset")
	}
}
