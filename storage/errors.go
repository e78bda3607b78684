package storage

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/vfs"
)

var (
	// ErrLogClosed is returned by every call on a closed Log.
	ErrLogClosed = errors.New("storage: log is closed")
	// ErrOffsetOutOfRange wraps kerr.OffsetOutOfRange for reads and
	// log-start-offset moves outside the log.
	ErrOffsetOutOfRange = kerr.OffsetOutOfRange
)

// StorageError is an IO failure. The log that hit it is marked failed and
// answers every later call with the same error, as Kafka takes a log
// directory offline (LogDirFailureChannel); it maps to KAFKA_STORAGE_ERROR.
type StorageError struct {
	Dir string
	Op  string
	Err error
}

func (e *StorageError) Error() string {
	return fmt.Sprintf("storage: %s failed in %s: %v", e.Op, e.Dir, e.Err)
}

// Unwrap returns both the cause and kerr.KafkaStorageError, so callers can
// test for either with errors.Is.
func (e *StorageError) Unwrap() []error { return []error{e.Err, kerr.KafkaStorageError} }

// UnexpectedAppendOffsetError is returned when a follower append starts
// below the log end offset (Kafka's UnexpectedAppendOffsetException): the
// follower must truncate first. FirstOffset and LastOffset are the appended
// data's first and last offsets: a replica whose empty log starts inside
// the first batch (the leader's log start offset moved into it) restarts
// its log at FirstOffset, as Kafka's appendRecordsToFollowerOrFutureReplica
// does.
type UnexpectedAppendOffsetError struct {
	FirstOffset, LastOffset, LogEndOffset int64
}

func (e *UnexpectedAppendOffsetError) Error() string {
	return fmt.Sprintf("storage: unexpected append offset %d: log end offset is %d", e.FirstOffset, e.LogEndOffset)
}

func isNotExist(err error) bool { return vfs.IsNotExist(err) }

// OffsetOutOfRangeError is OFFSET_OUT_OF_RANGE with the bounds that were
// violated.
type OffsetOutOfRangeError struct {
	Offset                       int64
	LogStartOffset, LogEndOffset int64
	Dir                          string
	What                         string
}

func (e *OffsetOutOfRangeError) Error() string {
	what := e.What
	if what == "" {
		what = "offset outside the log"
	}
	return fmt.Sprintf("OFFSET_OUT_OF_RANGE: %s: %d is not in [%d, %d] (%s)", what, e.Offset, e.LogStartOffset, e.LogEndOffset, e.Dir)
}

func (e *OffsetOutOfRangeError) Unwrap() error { return kerr.OffsetOutOfRange }
