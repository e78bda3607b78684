package mirrorstate

import "fmt"

// State is a mirror partition's state, persisted in __mirror_state as an
// int8. The values are the newest enum found in the KIP-1279 prototypes
// (digest §3.1 "v4": LOG_ALIGNMENT 0, EPOCH_FENCING 1, ULE_RECOVERY 2,
// MIRRORING 3, PAUSING 4, PAUSED 5, STOPPING 6, STOPPED 7, FAILED 8,
// UNKNOWN −1) so a record means the same thing to a newer reader. The seed's
// PREPARING is v4's LOG_ALIGNMENT (the KIP's LOG_TRUNCATION). Values 1 and 2
// are reserved: this machine keeps DLE ≥ SLE inside MIRRORING (an epoch bump
// while the fetcher waits) instead of an EPOCH_FENCING state, and does not
// implement unclean-election recovery.
type State int8

const (
	// StateUnknown: no record (the partition was never mirrored, or its
	// record was deleted). Not persisted by the machine.
	StateUnknown State = -1
	// StatePreparing: align the local log with the source (LME truncation)
	// and wait for the ISR to follow.
	StatePreparing State = 0
	// StateMirroring: the mirror fetcher copies the source partition.
	StateMirroring State = 3
	// StatePausing: the fetcher is being removed; still read-only.
	StatePausing State = 4
	// StatePaused: no fetcher, still read-only; resume continues from the
	// local log end offset.
	StatePaused State = 5
	// StateStopping: failover in progress (remove fetcher, bump epoch,
	// record the LME, abort open transactions, MIRROR_PID_RESET).
	StateStopping State = 6
	// StateStopped: no longer mirrored; the topic is writable.
	StateStopped State = 7
	// StateFailed: an error stopped this partition (and only this one);
	// retried with backoff unless the error is non-retryable.
	StateFailed State = 8
)

func (s State) String() string {
	switch s {
	case StateUnknown:
		return "UNKNOWN"
	case StatePreparing:
		return "PREPARING"
	case StateMirroring:
		return "MIRRORING"
	case StatePausing:
		return "PAUSING"
	case StatePaused:
		return "PAUSED"
	case StateStopping:
		return "STOPPING"
	case StateStopped:
		return "STOPPED"
	case StateFailed:
		return "FAILED"
	case 1:
		return "EPOCH_FENCING"
	case 2:
		return "ULE_RECOVERY"
	}
	return fmt.Sprintf("State(%d)", int8(s))
}

// ReadOnly reports whether a partition in state s rejects Produce,
// transactional writes and DeleteRecords with READ_ONLY_TOPIC: every state
// but STOPPED (digest §3.5 "Read-only semantics"). The machine makes this
// explicit per leader with SetReadOnly/ClearReadOnly.
func (s State) ReadOnly() bool { return s != StateStopped }
