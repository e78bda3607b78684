package partition

import "errors"

// Sentinel errors. The validation errors carry the names of KIP-1279's
// error codes (digest §2.3); the wire layer maps them to its code table.
var (
	// ErrStale: Step ignored the event — an answer to an effect the machine
	// no longer waits on (duplicate, older leader epoch, abandoned), or
	// leadership news older than what the machine knows.
	ErrStale = errors.New("partition: stale event ignored")
	// ErrInvalidEvent: the event cannot be understood (nil, unknown type or
	// value).
	ErrInvalidEvent = errors.New("partition: invalid event")
	// ErrInvalidConfig: New was given an unusable Config.
	ErrInvalidConfig = errors.New("partition: invalid config")

	// ErrFenced marks a Result error where __mirror_state rejected a write
	// because of the leader epoch or the state epoch (FENCED_LEADER_EPOCH,
	// INVALID_CLUSTER_MIRROR_STATES), or a read returned a record of a newer
	// leader. Any failed write makes the machine re-read the record after a
	// step backoff (its outcome is unknown); the mark is for logs and
	// metrics.
	ErrFenced = errors.New("partition: mirror state fenced")
	// ErrFailed marks a Result error that should move a PREPARING or
	// MIRRORING partition to FAILED (retried with backoff). Unmarked errors
	// retry the step in place.
	ErrFailed = errors.New("partition: mirror partition failed")
	// ErrNonRetryable marks a Result error that should move a PREPARING or
	// MIRRORING partition to FAILED with no automatic retry.
	ErrNonRetryable = errors.New("partition: mirror partition failed (non-retryable)")
)

func isNonRetryable(err error) bool { return errors.Is(err, ErrNonRetryable) }
func isFailed(err error) bool       { return errors.Is(err, ErrFailed) || errors.Is(err, ErrNonRetryable) }
