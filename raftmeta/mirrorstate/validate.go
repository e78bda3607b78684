package mirrorstate

import "fmt"

// The admin RPCs validate every target partition's current state before the
// controller changes mirror.name (seed: StartMirrorTopics "validates that
// all target topic partitions are in either UNKNOWN or STOPPED state",
// StopMirrorTopics "in either PREPARING or MIRRORING", PauseMirrorTopics "in
// MIRRORING", ResumeMirrorTopics "currently paused"). The machine itself is
// total: it copes with any desired state in any state, because metadata and
// __mirror_state are read at different times.

// ValidateStart: a topic starts (or restarts, for failback) only from
// UNKNOWN or STOPPED, as the seed says. A FAILED partition whose retries
// are exhausted is restarted by stop then start.
func ValidateStart(s State) error {
	switch s {
	case StateUnknown, StateStopped:
		return nil
	case StateStopping:
		return ErrMirrorTopicBeingStopped
	}
	return fmt.Errorf("%w (state %s)", ErrMirrorTopicNotStopped, s)
}

// ValidateStop: the seed allows PREPARING and MIRRORING. We also allow
// PAUSING, PAUSED and FAILED (the digest's v3 table does too): failover must
// work for a paused partition and for one that failed because its source
// went bad. UNKNOWN is refused (the leader has not recorded the start yet;
// the caller retries), STOPPED is refused as already stopped.
func ValidateStop(s State) error {
	switch s {
	case StatePreparing, StateMirroring, StatePausing, StatePaused, StateFailed:
		return nil
	case StateStopping:
		return ErrMirrorTopicBeingStopped
	}
	return fmt.Errorf("%w (state %s)", ErrInvalidClusterMirrorStates, s)
}

// ValidatePause: only MIRRORING, as the seed says.
func ValidatePause(s State) error {
	switch s {
	case StateMirroring:
		return nil
	case StatePausing, StatePaused:
		return ErrMirrorTopicAlreadyPaused
	case StateStopping:
		return ErrMirrorTopicBeingStopped
	}
	return fmt.Errorf("%w (state %s)", ErrInvalidClusterMirrorStates, s)
}

// ValidateResume: PAUSED, and PAUSING too (its mirror.name already has the
// .paused suffix; the machine finishes the pause, then resumes).
func ValidateResume(s State) error {
	switch s {
	case StatePausing, StatePaused:
		return nil
	case StateStopping:
		return ErrMirrorTopicBeingStopped
	}
	return fmt.Errorf("%w (state %s)", ErrMirrorTopicNotPaused, s)
}
