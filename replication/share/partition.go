package share

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// PartitionConfig bounds one share partition; the manager fills it from
// the broker's group.share.* configs and the group's overrides.
type PartitionConfig struct {
	// DeliveryCountLimit is group.share.delivery.count.limit: a record
	// delivered this many times is archived when released or when its
	// lock expires, instead of becoming available again.
	DeliveryCountLimit int16
	// MaxInFlight is group.share.partition.max.record.locks: no new
	// records are acquired while the in-flight window [SPSO, SPEO] holds
	// this many (records already in it may still be re-acquired).
	MaxInFlight int64
}

// SharePartition is one share group's state of one topic partition on its
// leader (Kafka's SharePartition), as a pure state machine: every method
// takes the time and the log contents it needs and returns what changed.
// It is not safe for concurrent use.
type SharePartition struct {
	cfg         PartitionConfig
	leaderEpoch int32
	stateEpoch  int32

	// start is the share-partition start offset (SPSO): every record
	// below it is done with. end is one past the share-partition end
	// offset: the next offset never acquired. runs cover [start, end).
	start, end int64
	runs       runs

	// dirty says the durable view (start, states other than held locks,
	// delivery counts of archived records) changed without a write
	// carrying it yet: a lock expiry archived a record, the log start
	// offset moved, a failed write left the stored state unknown.
	dirty bool
	// writing says a write is out (BeginWrite without EndWrite).
	writing bool
	// nextSeq numbers the write that will carry the changes staged now.
	nextSeq uint64
}

// Recover builds a share partition from the state its persister returned
// (Kafka's SharePartition.maybeInitialize). resetOffset is where
// share.auto.offset.reset puts the start of a partition whose stored
// start offset is -1 (initialized without one), and logStart the log's
// start offset now: records below it are gone and archived.
//
// Stored batches below the start offset are ignored, offsets between
// batches come back available as never delivered, and records stored as
// acquired come back available: their holder's lock died with the
// previous leader. A record whose delivery count reached the limit comes
// back archived.
func Recover(cfg PartitionConfig, leaderEpoch int32, st PersistedState, resetOffset, logStart int64) *SharePartition {
	sp := &SharePartition{cfg: cfg, leaderEpoch: leaderEpoch, stateEpoch: st.StateEpoch, nextSeq: 1}
	sp.start = st.StartOffset
	if sp.start < 0 {
		// The first leader to read the state pins where the group
		// starts, so a failover does not move it (Kafka writes it with
		// the first acknowledgement; we write it at once).
		sp.start, sp.dirty = max(resetOffset, 0), true
	}
	sp.end = sp.start
	batches := slices.Clone(st.Batches)
	slices.SortStableFunc(batches, func(a, b StateBatch) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	for _, b := range batches {
		first := max(b.FirstOffset, sp.end)
		if b.LastOffset < first {
			continue // below the start, overlapping, or malformed
		}
		if first > sp.end {
			sp.runs = append(sp.runs, run{first: sp.end, last: first - 1, state: Available})
		}
		r := run{first: first, last: b.LastOffset, state: RecordState(b.DeliveryState), deliveries: max(b.DeliveryCount, 0)}
		switch r.state {
		case Acknowledged, Archived:
		default:
			r.state = Available
			if r.deliveries >= cfg.DeliveryCountLimit {
				// Delivered the limit: as if the last holder's
				// lock had expired. The change is written.
				r.state, sp.dirty = Archived, true
			}
		}
		sp.runs = append(sp.runs, r)
		sp.end = b.LastOffset + 1
	}
	sp.runs.coalesce()
	if sp.advanceStart() {
		sp.dirty = true
	}
	sp.MoveStart(logStart)
	return sp
}

// LeaderEpoch is the leader epoch the partition was loaded in.
func (sp *SharePartition) LeaderEpoch() int32 { return sp.leaderEpoch }

// StateEpoch is the state epoch read from the persister.
func (sp *SharePartition) StateEpoch() int32 { return sp.stateEpoch }

// StartOffset is the share-partition start offset (SPSO).
func (sp *SharePartition) StartOffset() int64 { return sp.start }

// EndOffset is one past the share-partition end offset: the first offset
// never acquired.
func (sp *SharePartition) EndOffset() int64 { return sp.end }

// InFlight is the number of offsets in the in-flight window.
func (sp *SharePartition) InFlight() int64 { return sp.end - sp.start }

// Dirty reports whether the durable state changed without a write started
// to carry it.
func (sp *SharePartition) Dirty() bool { return sp.dirty }

// FetchOffset is where the next read of the log starts (Kafka's
// nextFetchOffset): the first available record in the window, else the
// end of the window.
func (sp *SharePartition) FetchOffset() int64 {
	for i := range sp.runs {
		if sp.runs[i].acquirable() {
			return sp.runs[i].first
		}
	}
	return sp.end
}

// CanAcquire reports whether a fetch may acquire anything (Kafka's
// canAcquireRecords): records in the window are available again, or the
// window holds fewer than MaxInFlight offsets.
func (sp *SharePartition) CanAcquire() bool {
	return sp.FetchOffset() < sp.end || sp.end-sp.start < sp.cfg.MaxInFlight
}

// NextDeadline is the earliest acquisition lock expiry, false when no
// record is held.
func (sp *SharePartition) NextDeadline() (time.Time, bool) {
	var t time.Time
	for i := range sp.runs {
		r := &sp.runs[i]
		if r.state == Acquired && r.pend.seq == 0 && (t.IsZero() || r.deadline.Before(t)) {
			t = r.deadline
		}
	}
	return t, !t.IsZero()
}

// MoveStart moves the start offset up to logStart when the log's start
// moved past it (retention, DeleteRecords: Kafka's updateCacheAndOffsets):
// the records below are gone, whatever their state.
func (sp *SharePartition) MoveStart(logStart int64) {
	if logStart <= sp.start {
		return
	}
	sp.runs.dropBelow(logStart)
	sp.start = logStart
	sp.end = max(sp.end, logStart)
	sp.advanceStart()
	sp.dirty = true
}

// advanceStart moves the start past the done records at the front of the
// window (Kafka's maybeUpdateCachedStateAndOffsets) and reports whether it
// moved.
func (sp *SharePartition) advanceStart() bool {
	i := 0
	for i < len(sp.runs) && sp.runs[i].state.terminal() && sp.runs[i].pend.seq == 0 {
		i++
	}
	if i == 0 {
		return false
	}
	if i == len(sp.runs) {
		sp.start = sp.end
	} else {
		sp.start = sp.runs[i].first
	}
	n := copy(sp.runs, sp.runs[i:])
	clear(sp.runs[n:])
	sp.runs = sp.runs[:n]
	return true
}

// released is the state a held record takes when it is given back by a
// lock expiry or a RELEASE acknowledgement: available again, or archived
// once delivered DeliveryCountLimit times.
func (sp *SharePartition) released(r *run) RecordState {
	if r.deliveries >= sp.cfg.DeliveryCountLimit {
		return Archived
	}
	return Available
}

// String prints the partition for tests and debug logs:
// "start=5 end=9 [5-6 ACKNOWLEDGED d1] [7-8 ACQUIRED d2 m=a]".
func (sp *SharePartition) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "start=%d end=%d", sp.start, sp.end)
	for i := range sp.runs {
		r := &sp.runs[i]
		fmt.Fprintf(&b, " [%d-%d %s d%d", r.first, r.last, r.state, r.deliveries)
		if r.member != "" {
			fmt.Fprintf(&b, " m=%s", r.member)
		}
		if r.pend.seq != 0 {
			fmt.Fprintf(&b, " ->%s@%d", r.pend.to, r.pend.seq)
		}
		b.WriteString("]")
	}
	return b.String()
}
