package share

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// AckBatch is one acknowledgement batch of a ShareFetch or ShareAcknowledge
// request: one type for every offset of [First, Last], or one type per
// offset.
type AckBatch struct {
	First, Last int64
	Types       []AckType
}

// Acknowledge applies a member's acknowledgements (Kafka's
// SharePartition.acknowledge), all or none: an error leaves the partition
// as it was. Offsets below the start offset are skipped: they are done
// with already. Every other offset must be in the window
// (INVALID_REQUEST) and held by member (INVALID_RECORD_STATE).
//
// RENEW restarts the lock at once: a renewal is not persisted. The other
// types are staged: the records keep their state and holder until the
// write that carries them succeeds (EndWrite), and the returned seq names
// that write; 0 when nothing was staged.
func (sp *SharePartition) Acknowledge(now time.Time, member string, lock time.Duration, batches []AckBatch) (uint64, *kerr.Error) {
	work := slices.Clone(sp.runs)
	staged := false
	for _, b := range batches {
		if err := checkAckBatch(b); err != nil {
			return 0, err
		}
		if b.Last < sp.start {
			continue
		}
		if len(work) == 0 {
			// Nothing is in flight (Kafka: no cached batch at or
			// below the first offset).
			return 0, kerr.InvalidRecordState
		}
		if b.First >= sp.end || b.Last >= sp.end {
			return 0, kerr.InvalidRequest // past the acquired records
		}
		for off := max(b.First, sp.start); off <= b.Last; {
			typ, segEnd := b.Types[0], b.Last
			if len(b.Types) > 1 {
				typ, segEnd = b.Types[off-b.First], off
				for segEnd < b.Last && b.Types[segEnd+1-b.First] == typ {
					segEnd++
				}
			}
			i, j := work.span(off, segEnd)
			for ; i < j; i++ {
				r := &work[i]
				if r.state != Acquired || r.pend.seq != 0 || r.member != member {
					return 0, kerr.InvalidRecordState
				}
				switch typ {
				case AckRenew:
					r.deadline = now.Add(lock)
				case AckAccept:
					r.pend = pending{seq: sp.nextSeq, to: Acknowledged}
				case AckRelease:
					r.pend = pending{seq: sp.nextSeq, to: sp.released(r)}
				default: // AckReject, AckGap
					r.pend = pending{seq: sp.nextSeq, to: Archived}
				}
				staged = staged || typ != AckRenew
			}
			off = segEnd + 1
		}
	}
	work.coalesce()
	sp.runs = work
	if !staged {
		return 0, nil
	}
	return sp.nextSeq, nil
}

// checkAckBatch is the shape check of one batch; the manager checks the
// order of the batches and which types the request version allows
// (Kafka's KafkaApis.validateAcknowledgementBatches).
func checkAckBatch(b AckBatch) *kerr.Error {
	if b.First > b.Last || len(b.Types) == 0 || (len(b.Types) > 1 && int64(len(b.Types)) != b.Last-b.First+1) {
		return kerr.InvalidRequest
	}
	for _, t := range b.Types {
		if t < AckGap || t > AckRenew {
			return kerr.InvalidRequest
		}
	}
	return nil
}

// ReleaseMember gives back the records member holds that it acquired in
// share session upTo or an earlier one (sessions are numbered in the
// order they open; math.MaxUint64 for every one), except those waiting for
// a write: Kafka's releaseAcquiredRecords, when the member closed its
// share session, its connection closed, or it left the group. Kafka
// releases by member alone; the bound keeps a closed session's release,
// which may run late, from taking what the member's next session already
// acquired when it reconnected at once.
//
// As Kafka does (DeliveryCountOps.DECREASE), the records become available
// with their delivery count lowered by one: they were acquired but may
// never have reached the client, so this delivery does not count, and none
// is archived for it. The lowered counts are written. It reports whether
// anything changed.
func (sp *SharePartition) ReleaseMember(member string, upTo uint64) bool {
	changed := sp.giveBack(func(r *run) bool { return r.member == member && r.session <= upTo }, func(r *run) RecordState {
		r.deliveries = max(r.deliveries-1, 0)
		return Available
	})
	if changed {
		sp.dirty = true
	}
	return changed
}

// ExpireLocks gives back the records whose acquisition lock expired by now
// (Kafka's AcquisitionLockTimerTask): available again with their delivery
// count, or archived once delivered DeliveryCountLimit times. Their new
// state is written, as Kafka writes it on a lock timeout, so the delivery
// counts outlive a failover: a consumer that keeps dying on a record
// still exhausts its deliveries. It reports whether anything changed.
func (sp *SharePartition) ExpireLocks(now time.Time) bool {
	changed := sp.giveBack(func(r *run) bool { return !r.deadline.After(now) }, sp.released)
	if changed {
		sp.dirty = true
	}
	return changed
}

// giveBack gives back the held records match selects, except those
// waiting for a write, in the state to returns.
func (sp *SharePartition) giveBack(match func(r *run) bool, to func(r *run) RecordState) bool {
	changed := false
	for i := range sp.runs {
		r := &sp.runs[i]
		if r.state != Acquired || r.pend.seq != 0 || !match(r) {
			continue
		}
		r.state = to(r)
		r.member, r.session, r.deadline = "", 0, time.Time{}
		if r.state == Archived {
			sp.dirty = true
		}
		changed = true
	}
	if changed {
		sp.runs.coalesce()
		if sp.advanceStart() {
			sp.dirty = true
		}
	}
	return changed
}
