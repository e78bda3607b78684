package partition

import (
	"fmt"

	"github.com/strait-io/strait/raftmeta/mirrorstate"
)

// State is a mirror partition's state (raftmeta/mirrorstate.State, whose
// values are persisted in __mirror_state as an int8): the metadata layer's
// controller validates the admin RPCs against the same states, and it may
// not import this package (DESIGN.md §2), so the enum lives in its leaf.
type State = mirrorstate.State

// The states; see mirrorstate for what each means.
const (
	StateUnknown   = mirrorstate.StateUnknown
	StatePreparing = mirrorstate.StatePreparing
	StateMirroring = mirrorstate.StateMirroring
	StatePausing   = mirrorstate.StatePausing
	StatePaused    = mirrorstate.StatePaused
	StateStopping  = mirrorstate.StateStopping
	StateStopped   = mirrorstate.StateStopped
	StateFailed    = mirrorstate.StateFailed
)

// States lists every state the machine uses, in lifecycle order.
func States() []State {
	return []State{StateUnknown, StatePreparing, StateMirroring, StatePausing, StatePaused, StateStopping, StateStopped, StateFailed}
}

// ParseState is the inverse of State.String for the states the machine
// uses.
func ParseState(s string) (State, error) {
	for _, st := range States() {
		if st.String() == s {
			return st, nil
		}
	}
	return StateUnknown, fmt.Errorf("%w: mirror partition state %q", ErrInvalidEvent, s)
}

func knownState(s State) bool {
	switch s {
	case StateUnknown, StatePreparing, StateMirroring, StatePausing, StatePaused, StateStopping, StateStopped, StateFailed:
		return true
	}
	return false
}

// Record is one mirror partition's value in __mirror_state: the digest's
// "Gen B" value (§4.1), the fields of WriteMirrorStates v0. Keys are
// mirrorName:topicId:partition; the driver adds them.
type Record struct {
	State State
	// StateEpoch is incremented by every write; a write names the state
	// epoch it expects and the coordinator rejects it if another write came
	// first (optimistic concurrency, digest §2.2 WriteMirrorStates).
	StateEpoch int32
	// LeaderEpoch is the leader epoch of the broker that wrote the record;
	// the coordinator rejects writes from an older leader.
	LeaderEpoch int32
	// LastMirrorEpoch is the LME, recorded by STOPPING: every batch with an
	// epoch ≤ LME is identical on both clusters. −1 when unknown.
	LastMirrorEpoch int32
	// LastMirrorOffset is the stop offset (the log end offset when the stop
	// removed the fetcher: every mirrored record lies below it, the ABORT
	// markers and MIRROR_PID_RESET the stop writes lie at and above it), or
	// the log end offset a pause left; −1 when not recorded. In STOPPING,
	// ≥ 0 means the LME has been recorded.
	LastMirrorOffset int64
	// ErrorMessage says why the partition is FAILED.
	ErrorMessage string
	// RetryAttempt counts consecutive failures (1 for the first); −1 for a
	// non-retryable failure (v4's NON_RETRYABLE_ATTEMPT).
	RetryAttempt int32
	// PrevState is the state the record's state was entered from. STOPPING
	// entered from FAILED keeps FAILED's PrevState: it tells the stop whether
	// the log was aligned with the source (see lmeTrusted). A partition that
	// failed from MIRRORING keeps MIRRORING through its retries (FAILED →
	// PREPARING → FAILED …), and into a STOPPING entered from one of them:
	// it tells the retry to keep the log (see RetryOfAligned) and the stop
	// to trust it.
	PrevState State
}

// EmptyRecord is what ReadMirrorState returns when __mirror_state has no
// record for the partition (v4's MirrorPartition.EMPTY).
func EmptyRecord() Record {
	return Record{State: StateUnknown, LeaderEpoch: -1, LastMirrorEpoch: -1, LastMirrorOffset: -1, PrevState: StateUnknown}
}

func (r Record) String() string {
	s := fmt.Sprintf("%s se=%d le=%d prev=%s lme=%d lmo=%d attempt=%d", r.State, r.StateEpoch, r.LeaderEpoch, r.PrevState,
		r.LastMirrorEpoch, r.LastMirrorOffset, r.RetryAttempt)
	if r.ErrorMessage != "" {
		s += fmt.Sprintf(" error=%q", r.ErrorMessage)
	}
	return s
}

// validFrom lists, per target state, the states a persisted transition may
// come from. It is the digest's v3 isValidTransition table (§3.3) with
// these differences, each needed for the machine to be total over what
// metadata can say:
//   - PREPARING → PAUSING: a pause that arrives before alignment finishes
//     lets alignment (and the ISR wait) finish, then pauses, so PAUSED always
//     holds an aligned log and resume never needs to truncate.
//   - UNKNOWN → STOPPING: a stop with no record still runs the full stop
//     (epoch bump, PID reset) before the topic becomes writable.
//   - FAILED only from PREPARING and MIRRORING (v4's diagram): PAUSING and
//     STOPPING retry in place instead, so a stop always completes.
//   - STOPPING → STOPPING records the LME before the stop writes to the log
//     (ABORT markers, MIRROR_PID_RESET).
//
// v3 also lets every state be rewritten to itself; the machine only ever
// rewrites STOPPING, so the table allows only that.
func validFrom(to State) []State {
	switch to {
	case StatePreparing:
		return []State{StateUnknown, StateStopped, StateFailed}
	case StateMirroring:
		return []State{StatePreparing, StatePaused}
	case StatePausing:
		return []State{StateMirroring, StatePreparing}
	case StatePaused:
		return []State{StatePausing}
	case StateStopping:
		return []State{StateUnknown, StatePreparing, StateMirroring, StatePausing, StatePaused, StateFailed, StateStopping}
	case StateStopped:
		return []State{StateStopping}
	case StateFailed:
		return []State{StatePreparing, StateMirroring}
	}
	return nil
}

// ValidTransition reports whether a record in state from may be replaced by
// one in state to. The coordinator can check it on WriteMirrorStates
// (INVALID_CLUSTER_MIRROR_STATES otherwise); the machine never emits a write
// that fails it.
func ValidTransition(from, to State) bool {
	for _, s := range validFrom(to) {
		if s == from {
			return true
		}
	}
	return false
}
