package partition

import (
	"fmt"
	"strings"
	"time"
)

// Ref names one emitted effect: the leader epoch it was emitted under and a
// sequence number unique within the machine. Results and fetcher reports
// quote it; the driver fences on LeaderEpoch.
type Ref struct {
	LeaderEpoch int32
	Seq         uint64
}

func (r Ref) String() string { return fmt.Sprintf("#%d@e%d", r.Seq, r.LeaderEpoch) }

// EffectKind is what an effect asks the driver to do. Each kind says what
// its Result carries.
type EffectKind int8

const (
	// ReadMirrorState: read the partition's __mirror_state record
	// (ReadMirrorStates when the coordinator is remote). Result.Record.
	ReadMirrorState EffectKind = iota + 1
	// WriteMirrorState: store Effect.Record if the stored state epoch is
	// Effect.ExpectedStateEpoch and Effect.Record.LeaderEpoch is the
	// partition's current leader epoch; Record.StateEpoch is then
	// ExpectedStateEpoch+1. Otherwise fail with ErrFenced.
	WriteMirrorState
	// SetReadOnly / ClearReadOnly: make Produce, transactional writes and
	// DeleteRecords fail with READ_ONLY_TOPIC, or accept them again. Until
	// the machine emits one of them for a new leader epoch, the driver
	// should answer writes with a retriable error, not READ_ONLY_TOPIC.
	SetReadOnly
	ClearReadOnly
	// QueryLastMirroredEpoch: ask the source for the LME it recorded for
	// this partition (ReadMirrorStates against the source) and the source's
	// log start offset. Result.Epoch (−1: none or unsupported),
	// Result.LogStartOffset.
	QueryLastMirroredEpoch
	// TruncateFully: truncate the whole local log and restart it at
	// Effect.Offset (Log.TruncateFullyAndStartAt). Result.LogEndOffset,
	// Result.LatestEpoch.
	TruncateFully
	// TruncateAfterEpoch: truncate the local log at the start offset of the
	// first epoch after Effect.Epoch (the LME), i.e. to EndOffsetForEpoch(LME);
	// a no-op when no later epoch exists. Result.LogEndOffset,
	// Result.LatestEpoch.
	TruncateAfterEpoch
	// WaitForISRTruncation: answer once every ISR member (every replica when
	// Effect.AllReplicas, for mirror.support.unclean.leader.election) has
	// truncated to at most Effect.Offset and caught up to it (the seed's
	// Partition.checkIsrTruncationAndTransition).
	WaitForISRTruncation
	// AddFetcher: start the mirror fetcher for the partition at Effect.Offset
	// with LastFetchedEpoch Effect.Epoch; Offset −1 means the local log end
	// offset and its latest batch epoch. Its reports quote this Ref.
	AddFetcher
	// RemoveFetcher: stop the mirror fetcher (a no-op if none runs) and
	// report the local log end: Result.LogEndOffset, Result.LatestEpoch.
	// Emitted without Reply when leadership ends. Unlike every other effect
	// it is performed whatever its leader epoch: removing is always safe.
	RemoveFetcher
	// BumpLeaderEpoch: BumpLeaderEpochs to the controller with
	// minLeaderEpoch Effect.Epoch. The Result says the controller accepted
	// it; the machine then waits for BecomeLeader at an epoch ≥ Effect.Epoch.
	BumpLeaderEpoch
	// AbortOpenTransactions: close every transaction open in the local log
	// with an ABORT marker (the producer's epoch and coordinator epoch,
	// appended as leader in the Ref's epoch with the coordinator's origin,
	// as WriteTxnMarkers would) and answer once the whole ISR has the log
	// up to its end (acks=all), so the last stable offset has reached it.
	// The source's coordinator will never close them here, and truncating
	// to the last stable offset instead would delete every record after
	// the first open transaction, committed ones included. With nothing
	// open it appends nothing (a repeat after a partial run). The Result
	// carries nothing the machine uses: STOPPING records the LME and the
	// stop offset before it asks for this (see recordLME).
	AbortOpenTransactions
	// AppendMirrorPIDReset: append the MIRROR_PID_RESET control record
	// (type 7) as leader with acks from the whole ISR; answer when acked.
	AppendMirrorPIDReset
	// ScheduleRetry: answer (Result with no error) at Effect.At or later.
	ScheduleRetry
	// CheckExistingRecords: QueryLastMirroredEpoch for a start, which must
	// not silently delete records this cluster holds of its own. When the
	// local log holds records (its log end is past its log start) and the
	// source has no LME for the partition (−1: PREPARING would truncate
	// them all), fail with an error naming the partition and the records
	// unless the mirror allows it (the mirror config
	// mirror.truncate.existing). The KIP's first-time rule assumes a
	// destination partition that holds nothing yet; one that holds records
	// was written here (a topic that existed before it was mirrored, a
	// failed-over topic mirrored again in the same direction) or is this
	// cluster's own (a mirror whose source is this cluster). The machine
	// asks for it before a start leaves UNKNOWN or STOPPED, and in a
	// PREPARING that began from one of them; its error is retried in
	// place, so the partition waits, read-only, where it was: even an error
	// marked ErrFailed does not fail a PREPARING, since a FAILED partition
	// is retried without the check. Result.Epoch and Result.LogStartOffset
	// as for QueryLastMirroredEpoch.
	CheckExistingRecords
)

func (k EffectKind) String() string {
	switch k {
	case ReadMirrorState:
		return "read-state"
	case WriteMirrorState:
		return "write-state"
	case SetReadOnly:
		return "set-read-only"
	case ClearReadOnly:
		return "clear-read-only"
	case QueryLastMirroredEpoch:
		return "query-lme"
	case CheckExistingRecords:
		return "check-existing-records"
	case TruncateFully:
		return "truncate-fully"
	case TruncateAfterEpoch:
		return "truncate-after-epoch"
	case WaitForISRTruncation:
		return "wait-isr-truncation"
	case AddFetcher:
		return "add-fetcher"
	case RemoveFetcher:
		return "remove-fetcher"
	case BumpLeaderEpoch:
		return "bump-leader-epoch"
	case AbortOpenTransactions:
		return "abort-open-txns"
	case AppendMirrorPIDReset:
		return "append-pid-reset"
	case ScheduleRetry:
		return "schedule-retry"
	}
	return fmt.Sprintf("EffectKind(%d)", int8(k))
}

// cancellable kinds are waits and requests whose answer the machine may stop
// caring about when the desired state changes; the rest change local or
// persisted state and are always waited for.
func (k EffectKind) cancellable() bool {
	switch k {
	case QueryLastMirroredEpoch, CheckExistingRecords, WaitForISRTruncation, BumpLeaderEpoch, ScheduleRetry:
		return true
	}
	return false
}

// RetryReason says what a ScheduleRetry holds back.
type RetryReason int8

const (
	// RetryStep: the step whose effect failed is retried after a step
	// backoff.
	RetryStep RetryReason = iota + 1
	// RetryFailed: FAILED goes back to PREPARING.
	RetryFailed
)

func (r RetryReason) String() string {
	switch r {
	case RetryStep:
		return "step"
	case RetryFailed:
		return "failed"
	}
	return "RetryReason(?)"
}

// Effect is one thing the driver must do, in emission order: an effect may
// run asynchronously, but must not start before the partition's earlier
// effects have started. The machine never has more than one Reply effect
// outstanding.
type Effect struct {
	Kind EffectKind
	Ref  Ref
	// Reply: the machine waits for a Result quoting Ref. False only for the
	// RemoveFetcher that ends a leadership.
	Reply  bool
	Mirror string
	// Record and ExpectedStateEpoch: WriteMirrorState.
	Record             Record
	ExpectedStateEpoch int32
	// Epoch: the LME for TruncateAfterEpoch, the minimum for
	// BumpLeaderEpoch, the last fetched epoch for AddFetcher.
	Epoch int32
	// Offset: the start for TruncateFully, the truncation point for
	// WaitForISRTruncation, the fetch offset for AddFetcher.
	Offset      int64
	AllReplicas bool
	// At and Retry: ScheduleRetry.
	At    time.Time
	Retry RetryReason
}

// sameStep reports whether two effects ask for the same thing, ignoring
// their identity and the random part of a retry time.
func sameStep(a, b Effect) bool {
	return a.Kind == b.Kind && a.Mirror == b.Mirror && a.Record == b.Record && a.ExpectedStateEpoch == b.ExpectedStateEpoch &&
		a.Epoch == b.Epoch && a.Offset == b.Offset && a.AllReplicas == b.AllReplicas && a.Retry == b.Retry
}

// Format renders the effect with At relative to base (for tests and logs).
func (e Effect) Format(base time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", e.Ref, e.Kind)
	switch e.Kind {
	case WriteMirrorState:
		fmt.Fprintf(&b, " %s (expect se=%d)", e.Record, e.ExpectedStateEpoch)
	case QueryLastMirroredEpoch, CheckExistingRecords:
		fmt.Fprintf(&b, " mirror=%s", e.Mirror)
	case TruncateFully:
		fmt.Fprintf(&b, " start=%d", e.Offset)
	case TruncateAfterEpoch:
		fmt.Fprintf(&b, " lme=%d", e.Epoch)
	case WaitForISRTruncation:
		fmt.Fprintf(&b, " offset=%d", e.Offset)
		if e.AllReplicas {
			b.WriteString(" all-replicas")
		}
	case AddFetcher:
		fmt.Fprintf(&b, " mirror=%s offset=%d last-fetched-epoch=%d", e.Mirror, e.Offset, e.Epoch)
	case BumpLeaderEpoch:
		fmt.Fprintf(&b, " min=%d", e.Epoch)
	case ScheduleRetry:
		fmt.Fprintf(&b, " %s at=+%s", e.Retry, e.At.Sub(base))
	}
	if !e.Reply {
		b.WriteString(" (no reply)")
	}
	return b.String()
}

func (e Effect) String() string { return e.Format(time.Time{}) }
