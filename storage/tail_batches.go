package storage

import (
	"sync"

	"github.com/strait-io/strait/storage/record"
)

// tailBatchesCap is how many of a segment's newest batches tailBatches
// remembers: enough for the batches a producer appends while a follower's
// fetch is on the wire, small enough to search in a few steps.
const tailBatchesCap = 64

// tailBatch is where one appended batch lies in its segment.
type tailBatch struct {
	baseOffset, lastOffset int64
	pos                    int64
	size                   int32
}

// tailBatches remembers where a segment's most recently appended batches
// lie, so that reads at the log end (followers and tailing consumers, which
// fetch the offset after the last one they got) find their batch without
// reading batch headers from the file. Kafka's translateOffset reads the
// headers after the index's floor entry every time; on a small VM those
// pread calls were most of a leader's syscalls. The entries are the
// segment's last batches, consecutive and in order; truncation and
// recovery forget them, since a batch that is gone must not be found. The
// ring is allocated on the first append and dropped when the segment stops
// being the active one, so only active segments pay for it.
type tailBatches struct {
	mu   sync.Mutex
	ring []tailBatch // len tailBatchesCap once allocated
	head int         // index of the oldest entry
	n    int
}

// add records batches, appended back to back from pos after the newest
// batch remembered.
func (t *tailBatches) add(batches []record.Batch, pos int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ring == nil {
		t.ring = make([]tailBatch, tailBatchesCap)
	}
	for _, b := range batches {
		t.addLocked(tailBatch{baseOffset: b.BaseOffset(), lastOffset: b.LastOffset(), pos: pos, size: int32(len(b))})
		pos += int64(len(b))
	}
}

func (t *tailBatches) addLocked(b tailBatch) {
	if t.n > 0 {
		newest := t.ring[(t.head+t.n-1)%tailBatchesCap]
		if b.pos != newest.pos+int64(newest.size) || b.baseOffset <= newest.lastOffset {
			// Not the next batch: what is remembered no longer
			// describes the segment's tail.
			t.n = 0
		}
	}
	if t.n == tailBatchesCap {
		t.ring[t.head] = b
		t.head = (t.head + 1) % tailBatchesCap
		return
	}
	t.ring[(t.head+t.n)%tailBatchesCap] = b
	t.n++
}

// reset forgets every entry; release also frees the ring.
func (t *tailBatches) reset(release bool) {
	t.mu.Lock()
	t.head, t.n = 0, 0
	if release {
		t.ring = nil
	}
	t.mu.Unlock()
}

// find returns the first batch of the segment whose last offset is >=
// offset, when the remembered batches decide it: offset is at or after the
// oldest one's base offset (so no earlier batch can hold it) and at or
// before the newest one's last offset.
func (t *tailBatches) find(offset int64) (tailBatch, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == 0 {
		return tailBatch{}, false
	}
	oldest := t.ring[t.head]
	newest := t.ring[(t.head+t.n-1)%tailBatchesCap]
	if offset < oldest.baseOffset || offset > newest.lastOffset {
		return tailBatch{}, false
	}
	lo, hi := 0, t.n-1 // the answer is in [lo, hi]
	for lo < hi {
		mid := (lo + hi) / 2
		if t.ring[(t.head+mid)%tailBatchesCap].lastOffset >= offset {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return t.ring[(t.head+lo)%tailBatchesCap], true
}
