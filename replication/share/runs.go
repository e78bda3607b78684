package share

import (
	"sort"
	"time"
)

// run is a stretch of consecutive in-flight offsets that share one state:
// Kafka's InFlightBatch, or one entry of its per-offset state once a batch
// is split. A share partition's runs are sorted and contiguous, covering
// its in-flight window [start, end) exactly; runs with equal attributes
// are merged, so a window acknowledged in order stays one or two runs.
type run struct {
	first, last int64
	state       RecordState
	deliveries  int16
	member      string    // the holder while Acquired
	session     uint64    // the holder's share session it was acquired in
	deadline    time.Time // the acquisition lock's expiry while Acquired
	pend        pending
}

// pending is a state change waiting for its write to the persister
// (Kafka's ongoing state transition): the record keeps its state and its
// holder until write seq succeeds, and nothing else may change it
// meanwhile. seq 0 is none.
type pending struct {
	seq uint64
	to  RecordState
}

func (r *run) size() int64 { return r.last - r.first + 1 }

// sameAs reports whether r and o differ only in their offsets.
func (r *run) sameAs(o *run) bool {
	return r.state == o.state && r.deliveries == o.deliveries && r.member == o.member && r.session == o.session &&
		r.deadline.Equal(o.deadline) && r.pend == o.pend
}

// acquirable reports whether r may be handed to a member.
func (r *run) acquirable() bool { return r.state == Available && r.pend.seq == 0 }

// runs is the sorted, contiguous run list of a share partition.
type runs []run

// index is the position of the run holding off, or len(rs) when off is
// past the last run (rs[i].last >= off for the returned i).
func (rs runs) index(off int64) int {
	return sort.Search(len(rs), func(i int) bool { return rs[i].last >= off })
}

// splitAt makes off the first offset of a run when a run holds it and
// does not start there.
func (rs *runs) splitAt(off int64) {
	i := rs.index(off)
	if i == len(*rs) || (*rs)[i].first >= off {
		return
	}
	r := (*rs)[i]
	left, right := r, r
	left.last, right.first = off-1, off
	*rs = append(*rs, run{})
	copy((*rs)[i+2:], (*rs)[i+1:])
	(*rs)[i], (*rs)[i+1] = left, right
}

// span isolates the runs covering [first, last] (clipped to the runs) and
// returns their index range [i, j).
func (rs *runs) span(first, last int64) (int, int) {
	rs.splitAt(first)
	rs.splitAt(last + 1)
	return rs.index(first), rs.index(last + 1)
}

// coalesce merges neighbours that differ only in their offsets.
func (rs *runs) coalesce() {
	out := (*rs)[:0]
	for _, r := range *rs {
		if n := len(out); n > 0 && out[n-1].last+1 == r.first && out[n-1].sameAs(&r) {
			out[n-1].last = r.last
			continue
		}
		out = append(out, r)
	}
	clear((*rs)[len(out):])
	*rs = out
}

// dropBelow removes every offset below off.
func (rs *runs) dropBelow(off int64) {
	rs.splitAt(off)
	i := rs.index(off)
	n := copy(*rs, (*rs)[i:])
	clear((*rs)[n:])
	*rs = (*rs)[:n]
}
