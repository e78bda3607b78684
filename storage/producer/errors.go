package producer

import "errors"

var (
	// ErrCorruptSnapshot marks a snapshot file that fails Kafka's checks
	// (version, layout, CRC); Kafka's CorruptSnapshotException. Loading
	// deletes such a file and falls back to the next older one.
	ErrCorruptSnapshot = errors.New("producer: corrupt producer state snapshot")
	// ErrInvalidConfig is returned by NewManager for an unusable Config.
	ErrInvalidConfig = errors.New("producer: invalid config")
	// ErrUpdateFailed is returned by Update.Append after an earlier Append of
	// the same Update failed: the whole append is rejected, so the Update
	// must be discarded.
	ErrUpdateFailed = errors.New("producer: update already failed")
	// ErrUpdateDone is returned by Update.Append after Commit.
	ErrUpdateDone = errors.New("producer: update already committed")
)
