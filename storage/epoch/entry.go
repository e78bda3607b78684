package epoch

import (
	"errors"
	"fmt"
)

// UndefinedEpoch and UndefinedOffset are what EndOffsetFor answers when it
// knows nothing about the requested epoch; they are the values of Kafka's
// OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET,
// which go on the wire unchanged.
const (
	UndefinedEpoch  int32 = -1
	UndefinedOffset int64 = -1
)

// CheckpointFileName is the name of the checkpoint file inside a partition
// directory (Kafka's LeaderEpochCheckpointFile.LEADER_EPOCH_CHECKPOINT_FILENAME).
const CheckpointFileName = "leader-epoch-checkpoint"

var (
	// ErrInvalidEntry is returned for an epoch or start offset below zero;
	// Kafka's assign throws IllegalArgumentException for those.
	ErrInvalidEntry = errors.New("epoch: invalid leader epoch entry")
	// ErrMalformedCheckpoint is returned (wrapped, with the file and line)
	// when the checkpoint file cannot be parsed or holds entries Kafka could
	// never have written.
	ErrMalformedCheckpoint = errors.New("epoch: malformed checkpoint file")
)

// Entry says that the leader epoch Epoch starts at StartOffset: the first
// batch of that epoch in the log has this base offset (Kafka's EpochEntry).
type Entry struct {
	Epoch       int32
	StartOffset int64
}

// String formats the entry as Kafka's EpochEntry.toString does, so log lines
// read the same.
func (e Entry) String() string {
	return fmt.Sprintf("EpochEntry(epoch=%d, startOffset=%d)", e.Epoch, e.StartOffset)
}

func (e Entry) validate() error {
	if e.Epoch < 0 || e.StartOffset < 0 {
		return fmt.Errorf("%w: %v", ErrInvalidEntry, e)
	}
	return nil
}
