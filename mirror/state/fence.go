package state

import (
	"fmt"
	"slices"

	"github.com/strait-io/strait/mirror/partition"
)

// Write is one mirror partition state to store.
type Write struct {
	Key Key
	// Record is the state to store. Its StateEpoch is ignored: the stored
	// state epoch is always the previous one plus one. LeaderEpoch −1 skips
	// the leader-epoch check and keeps the stored leader epoch.
	Record partition.Record
	// ExpectedStateEpoch is the state epoch the writer last read (0 for no
	// record: partition.EmptyRecord); −1 skips the check.
	ExpectedStateEpoch int32
}

// WriteResult is the outcome of one Write.
type WriteResult struct {
	// StateEpoch is the state epoch stored, −1 if the write failed.
	StateEpoch int32
	// Err is nil, or a *kerr.Error (wrapped with a message): see errors.go.
	// FENCED_LEADER_EPOCH and INVALID_CLUSTER_MIRROR_STATES also wrap
	// partition.ErrFenced.
	Err error
}

// fenceInput is what fence decides on besides the stored record.
type fenceInput struct {
	w Write
	// derivePrev: the write does not carry PrevState (WriteMirrorStates v0
	// has no such field), so the coordinator derives it from the record
	// being replaced, as the state machine does.
	derivePrev bool
	// currentLeaderEpoch is the partition's leader epoch in this broker's
	// metadata, if known.
	currentLeaderEpoch int32
	currentKnown       bool
}

// fence decides one write against the stored record (found false: none,
// which reads as partition.EmptyRecord, state epoch 0). It returns the
// record to store, or an error code and message. The checks, in order, so
// that a zombie is told it is fenced whatever else is wrong:
//
//  1. the target state is one the machine persists (not UNKNOWN, not a
//     value this version does not know): INVALID_CLUSTER_MIRROR_STATES;
//  2. leader epoch (unless −1): older than the record's, or than the
//     partition's current epoch in metadata → FENCED_LEADER_EPOCH; newer
//     than the metadata's → UNKNOWN_LEADER_EPOCH (this broker lags);
//  3. state epoch (unless −1): not the stored one →
//     INVALID_CLUSTER_MIRROR_STATES (optimistic concurrency, digest §2.2);
//  4. partition.ValidTransition(stored, target), the digest's v3 table as
//     the machine uses it → INVALID_CLUSTER_MIRROR_STATES.
//
// The stored state epoch becomes the previous one plus one.
func fence(stored partition.Record, found bool, in fenceInput) (partition.Record, int16, string) {
	if !found {
		stored = partition.EmptyRecord()
	}
	w := in.w
	rec := w.Record
	if !persistedState(rec.State) {
		return partition.Record{}, codeInvalidClusterMirrorStates, fmt.Sprintf("state %s cannot be written", rec.State)
	}
	if !persistedState(rec.PrevState) && !in.derivePrev && rec.PrevState != partition.StateUnknown {
		return partition.Record{}, codeInvalidRequest, fmt.Sprintf("invalid previous state %s", rec.PrevState)
	}
	switch le := rec.LeaderEpoch; {
	case le < -1:
		return partition.Record{}, codeInvalidRequest, fmt.Sprintf("invalid leader epoch %d", le)
	case le == -1:
		rec.LeaderEpoch = stored.LeaderEpoch
	case le < stored.LeaderEpoch:
		return partition.Record{}, codeFencedLeaderEpoch,
			fmt.Sprintf("leader epoch %d is older than leader epoch %d of the stored state", le, stored.LeaderEpoch)
	case in.currentKnown && le < in.currentLeaderEpoch:
		return partition.Record{}, codeFencedLeaderEpoch,
			fmt.Sprintf("leader epoch %d is older than the partition's leader epoch %d", le, in.currentLeaderEpoch)
	case in.currentKnown && le > in.currentLeaderEpoch:
		return partition.Record{}, codeUnknownLeaderEpoch,
			fmt.Sprintf("leader epoch %d is newer than the partition's leader epoch %d known to the coordinator", le, in.currentLeaderEpoch)
	}
	switch se := w.ExpectedStateEpoch; {
	case se < -1:
		return partition.Record{}, codeInvalidRequest, fmt.Sprintf("invalid state epoch %d", se)
	case se != -1 && se != stored.StateEpoch:
		return partition.Record{}, codeInvalidClusterMirrorStates,
			fmt.Sprintf("expected state epoch %d, stored state epoch is %d (%s)", se, stored.StateEpoch, stored.State)
	}
	if !partition.ValidTransition(stored.State, rec.State) {
		return partition.Record{}, codeInvalidClusterMirrorStates,
			fmt.Sprintf("invalid transition from %s to %s", stored.State, rec.State)
	}
	if in.derivePrev {
		rec.PrevState = derivePrevState(stored, rec.State)
	}
	rec.StateEpoch = stored.StateEpoch + 1
	return rec, 0, ""
}

// derivePrevState is the PrevState the state machine writes when it moves
// a record from stored to state to (partition's Machine.transition and
// recordLME): the state left, except that a rewrite of the same state
// (STOPPING recording the LME) and STOPPING entered from FAILED keep the
// stored PrevState, which tells a stop whether the log was aligned, and a
// retry of a log that failed from MIRRORING (FAILED → PREPARING → FAILED …,
// and a STOPPING entered from any of them) keeps MIRRORING, which tells
// the retry to keep the log and the stop to trust it.
func derivePrevState(stored partition.Record, to partition.State) partition.State {
	if to == stored.State || (to == partition.StateStopping && stored.State == partition.StateFailed) {
		return stored.PrevState
	}
	if (to == partition.StatePreparing || to == partition.StateFailed || to == partition.StateStopping) && partition.RetryOfAligned(stored) {
		return partition.StateMirroring
	}
	return stored.State
}

// persistedState reports whether s is a state the machine writes.
func persistedState(s partition.State) bool {
	return s != partition.StateUnknown && slices.Contains(partition.States(), s)
}
