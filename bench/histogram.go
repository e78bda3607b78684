package bench

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// histSubBits is the number of significant bits a bucket keeps below a
// value's top bit: values below 2^(histSubBits+1) are recorded exactly and
// larger ones within a relative error of 2^-histSubBits (under 0.8%), the
// log-linear layout of HdrHistogram with 2 significant decimal digits.
const histSubBits = 7

const (
	histSubCount = 1 << histSubBits
	// histBuckets covers every uint64 whose top bit is at most 63.
	histBuckets = (64 - histSubBits + 1) * histSubCount
)

// Histogram is an HDR-style log-bucketed histogram of non-negative int64
// values (latencies in nanoseconds here). Record is safe for concurrent use
// and allocation-free; readers may run concurrently with writers and see a
// count that is consistent to within the records in flight.
type Histogram struct {
	counts [histBuckets]atomic.Uint64
	n      atomic.Uint64
	sum    atomic.Uint64
	min    atomic.Int64 // math.MaxInt64 while empty
	max    atomic.Int64 // -1 while empty
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	h := new(Histogram)
	h.min.Store(math.MaxInt64)
	h.max.Store(-1)
	return h
}

// histIndex is the bucket holding v.
func histIndex(v uint64) int {
	if v < histSubCount {
		return int(v)
	}
	top := bits.Len64(v) - 1 // >= histSubBits
	shift := top - histSubBits
	return (shift+1)*histSubCount + int(v>>uint(shift)) - histSubCount
}

// histLowest is the smallest value that lands in bucket i.
func histLowest(i int) uint64 {
	if i < 2*histSubCount {
		return uint64(i)
	}
	shift := i/histSubCount - 1
	sub := uint64(i%histSubCount + histSubCount)
	return sub << uint(shift)
}

// histHighest is the largest value that lands in bucket i, HdrHistogram's
// highestEquivalentValue: what a quantile in that bucket reports.
func histHighest(i int) uint64 {
	if i < 2*histSubCount {
		return uint64(i)
	}
	shift := i/histSubCount - 1
	return histLowest(i) + (uint64(1) << uint(shift)) - 1
}

// HighestEquivalent is the value a quantile reports for a recorded v: the
// top of v's bucket.
func HighestEquivalent(v int64) int64 {
	if v < 0 {
		v = 0
	}
	return int64(histHighest(histIndex(uint64(v))))
}

// Record adds one value; negative values count as 0.
func (h *Histogram) Record(v int64) {
	if v < 0 {
		v = 0
	}
	h.counts[histIndex(uint64(v))].Add(1)
	h.n.Add(1)
	h.sum.Add(uint64(v))
	for cur := h.min.Load(); v < cur && !h.min.CompareAndSwap(cur, v); cur = h.min.Load() {
	}
	for cur := h.max.Load(); v > cur && !h.max.CompareAndSwap(cur, v); cur = h.max.Load() {
	}
}

// RecordDuration records d in nanoseconds.
func (h *Histogram) RecordDuration(d time.Duration) { h.Record(int64(d)) }

// Merge adds every value recorded in o to h.
func (h *Histogram) Merge(o *Histogram) {
	for i := range o.counts {
		if c := o.counts[i].Load(); c != 0 {
			h.counts[i].Add(c)
		}
	}
	h.n.Add(o.n.Load())
	h.sum.Add(o.sum.Load())
	if m := o.min.Load(); m != math.MaxInt64 {
		for cur := h.min.Load(); m < cur && !h.min.CompareAndSwap(cur, m); cur = h.min.Load() {
		}
	}
	if m := o.max.Load(); m >= 0 {
		for cur := h.max.Load(); m > cur && !h.max.CompareAndSwap(cur, m); cur = h.max.Load() {
		}
	}
}

// Count is the number of values recorded.
func (h *Histogram) Count() uint64 { return h.n.Load() }

// Min and Max are the exact extremes recorded, 0 when empty.
func (h *Histogram) Min() int64 {
	if h.n.Load() == 0 {
		return 0
	}
	return h.min.Load()
}

// Max is the largest value recorded, 0 when empty.
func (h *Histogram) Max() int64 {
	if h.n.Load() == 0 {
		return 0
	}
	return h.max.Load()
}

// Mean is the exact arithmetic mean, 0 when empty.
func (h *Histogram) Mean() float64 {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	return float64(h.sum.Load()) / float64(n)
}

// Quantile returns the value at quantile q in [0, 1] by nearest rank: the
// bucket holding the ceil(q*n)-th smallest value, reported as that bucket's
// highest equivalent value clamped to the exact min and max recorded (as
// HdrHistogram's getValueAtPercentile does). 0 when empty.
func (h *Histogram) Quantile(q float64) int64 {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n)))
	rank = max(rank, 1)
	rank = min(rank, n)
	var seen uint64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			v := int64(histHighest(i))
			return min(max(v, h.Min()), h.Max())
		}
	}
	// Only reachable while writers race the walk: n counted a value whose
	// bucket we passed before it landed.
	return h.Max()
}
