package share

import (
	"sort"
	"time"
)

// LogBatch is one record batch of the log as acquisition sees it.
type LogBatch struct {
	First, Last int64
	// Aborted marks a data batch of an aborted transaction read for a
	// read_committed group: its records are archived, never delivered
	// (Kafka's maybeFilterAbortedTransactionalAcquiredRecords).
	Aborted bool
}

// AcquireRequest is one member's acquisition from what a read of the log
// returned.
type AcquireRequest struct {
	Member string
	// Session numbers the member's share session the records are
	// acquired in: closing it gives back what it acquired, never what a
	// later session of the same member did (ReleaseMember).
	Session uint64
	Now     time.Time
	// Lock is the acquisition lock duration (share.record.lock.duration.ms).
	Lock time.Duration
	// MaxRecords bounds the records acquired: exactly in RecordLimit
	// mode, up to the end of a log batch in BatchOptimized mode.
	MaxRecords int
	Mode       AcquireMode
	// BatchSize splits newly acquired records into acquired ranges of
	// about this many records at log batch boundaries (ShareFetch v1
	// BatchSize; BatchOptimized mode only). 0 does not split.
	BatchSize int
	// From is where the read started (FetchOffset), Batches the batches
	// it returned, in offset order: the first holds From or starts after
	// it, and then no record is at offsets [From, Batches[0].First).
	From    int64
	Batches []LogBatch
}

// AcquiredRange is a run of records acquired for a member with one
// delivery count (ShareFetchResponse AcquiredRecords).
type AcquiredRange struct {
	First, Last   int64
	DeliveryCount int16
}

// Acquire locks records for req.Member (Kafka's SharePartition.acquire):
// first the available records of the window that the batches cover, then
// records past the window, which extend it, within MaxInFlight. A record
// delivered DeliveryCountLimit times is archived instead, and so are
// offsets the read shows to hold no record (before the first batch). It
// returns the acquired ranges, in offset order.
func (sp *SharePartition) Acquire(req AcquireRequest) []AcquiredRange {
	if req.MaxRecords <= 0 || len(req.Batches) == 0 {
		return nil
	}
	a := acquisition{sp: sp, req: &req}
	a.aborted = abortedSpans(req.Batches)
	lo := max(req.Batches[0].First, sp.start)
	hi := req.Batches[len(req.Batches)-1].Last
	if hi < lo {
		return nil
	}
	if gapEnd := min(lo, sp.end) - 1; req.From <= gapEnd {
		a.archiveGap(max(req.From, sp.start), gapEnd)
	}
	if lo < sp.end {
		a.reacquire(lo, min(hi, sp.end-1))
	}
	if hi >= sp.end && a.count < int64(req.MaxRecords) {
		a.extend(lo, hi)
	}
	sp.runs.coalesce()
	if sp.advanceStart() {
		sp.dirty = true
	}
	return a.out
}

// acquisition is one Acquire call's progress.
type acquisition struct {
	sp      *SharePartition
	req     *AcquireRequest
	aborted []span
	count   int64
	out     []AcquiredRange
}

type span struct{ first, last int64 }

// abortedSpans are the offsets of aborted batches, merged.
func abortedSpans(bs []LogBatch) []span {
	var out []span
	for _, b := range bs {
		if !b.Aborted {
			continue
		}
		if n := len(out); n > 0 && out[n-1].last+1 >= b.First {
			out[n-1].last = max(out[n-1].last, b.Last)
			continue
		}
		out = append(out, span{b.First, b.Last})
	}
	return out
}

// pieces calls fn for the parts of [first, last] inside and outside the
// aborted spans, in order.
func (a *acquisition) pieces(first, last int64, fn func(first, last int64, aborted bool)) {
	for _, s := range a.aborted {
		if s.last < first || first > last {
			continue
		}
		if s.first > last {
			break
		}
		if s.first > first {
			fn(first, s.first-1, false)
		}
		fn(max(first, s.first), min(last, s.last), true)
		first = s.last + 1
	}
	if first <= last {
		fn(first, last, false)
	}
}

// batchEnd is the last offset of the read batch holding off, or off when
// none does (a gap between batches).
func (a *acquisition) batchEnd(off int64) int64 {
	bs := a.req.Batches
	i := sort.Search(len(bs), func(i int) bool { return bs[i].Last >= off })
	if i < len(bs) && bs[i].First <= off {
		return bs[i].Last
	}
	return off
}

// limit cuts [first, last] to what MaxRecords still allows.
func (a *acquisition) limit(first, last, remaining int64) int64 {
	if last-first+1 <= remaining {
		return last
	}
	cut := first + remaining - 1
	if a.req.Mode == BatchOptimized {
		cut = min(max(cut, a.batchEnd(cut)), last)
	}
	return cut
}

// reacquire acquires the available records of the window in [lo, hi].
func (a *acquisition) reacquire(lo, hi int64) {
	sp, maxRecords := a.sp, int64(a.req.MaxRecords)
	i := sp.runs.index(lo)
	for i < len(sp.runs) && sp.runs[i].first <= hi && a.count < maxRecords {
		r := sp.runs[i]
		if !r.acquirable() {
			i++
			continue
		}
		first := max(r.first, lo)
		last := a.limit(first, min(r.last, hi), maxRecords-a.count)
		a.pieces(first, last, func(pf, pl int64, aborted bool) {
			j, k := sp.runs.span(pf, pl)
			for ; j < k; j++ {
				a.lock(&sp.runs[j], aborted, false)
			}
		})
		i = sp.runs.index(last + 1)
	}
}

// archiveGap archives the available offsets of [first, last], which hold
// no record: a read from an available offset found the next batch further
// on (compaction removed the records since they were acquired). Kafka
// hands such offsets out for the client to acknowledge as gaps; a released
// or expired gap offset would then be stuck, never read again.
func (a *acquisition) archiveGap(first, last int64) {
	sp := a.sp
	if first > last {
		return
	}
	i, j := sp.runs.span(first, last)
	for ; i < j; i++ {
		if r := &sp.runs[i]; r.acquirable() {
			r.state, sp.dirty = Archived, true
		}
	}
}

// extend acquires records past the window, up to hi.
func (a *acquisition) extend(lo, hi int64) {
	sp := a.sp
	if lo > sp.end {
		// The log holds no records at [end, lo): compacted away.
		if len(sp.runs) == 0 {
			// An empty window moves past them, as Kafka's
			// acquireNewBatchRecords starts the cache at the
			// first batch read.
			sp.start = lo
		} else {
			sp.runs = append(sp.runs, run{first: sp.end, last: lo - 1, state: Archived})
			sp.dirty = true
		}
		sp.end = lo
	}
	first := sp.end
	remaining := min(int64(a.req.MaxRecords)-a.count, sp.cfg.MaxInFlight-(sp.end-sp.start))
	if remaining <= 0 {
		return
	}
	last := a.limit(first, hi, remaining)
	a.pieces(first, last, func(pf, pl int64, aborted bool) {
		sp.runs = append(sp.runs, run{first: pf, last: pl, state: Available})
		a.lock(&sp.runs[len(sp.runs)-1], aborted, true)
	})
	sp.end = last + 1
}

// lock acquires r for the member, or archives it: an aborted batch's
// records, or a record already delivered DeliveryCountLimit times.
func (a *acquisition) lock(r *run, aborted, fresh bool) {
	sp := a.sp
	if aborted || r.deliveries >= sp.cfg.DeliveryCountLimit {
		if fresh {
			r.deliveries = 1
		}
		r.state, sp.dirty = Archived, true
		return
	}
	r.state = Acquired
	r.deliveries++
	r.member, r.session = a.req.Member, a.req.Session
	r.deadline = a.req.Now.Add(a.req.Lock)
	a.count += r.size()
	if fresh && a.req.Mode == BatchOptimized && a.req.BatchSize > 0 {
		a.emitSplit(r.first, r.last, r.deliveries)
		return
	}
	a.emit(r.first, r.last, r.deliveries)
}

// emit appends an acquired range, merged with the one before it when they
// touch and share a delivery count.
func (a *acquisition) emit(first, last int64, deliveries int16) {
	if n := len(a.out); n > 0 && a.out[n-1].Last+1 == first && a.out[n-1].DeliveryCount == deliveries {
		a.out[n-1].Last = last
		return
	}
	a.out = append(a.out, AcquiredRange{First: first, Last: last, DeliveryCount: deliveries})
}

// emitSplit appends [first, last] cut at the first log batch boundary
// after every BatchSize records (Kafka 4.1 acquires new records in
// in-flight batches of about BatchSize, at batch boundaries).
func (a *acquisition) emitSplit(first, last int64, deliveries int16) {
	size := int64(a.req.BatchSize)
	from := first
	for _, b := range a.req.Batches {
		if b.Last < from {
			continue
		}
		if b.Last >= last {
			break
		}
		if b.Last-from+1 >= size {
			a.out = append(a.out, AcquiredRange{First: from, Last: b.Last, DeliveryCount: deliveries})
			from = b.Last + 1
		}
	}
	a.out = append(a.out, AcquiredRange{First: from, Last: last, DeliveryCount: deliveries})
}
