package replication

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// errorCode maps an error from this package or storage to the Kafka error
// code a response carries (Kafka's Errors.forException).
func errorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var re *record.Error
	if errors.As(err, &re) {
		return re.Code.Code
	}
	var se *storage.StorageError
	if errors.As(err, &se) {
		return kerr.KafkaStorageError.Code
	}
	if errors.Is(err, storage.ErrLogClosed) {
		// The log was closed under us: the partition was deleted or moved
		// away, which a client sees as "not the leader any more".
		return kerr.NotLeaderForPartition.Code
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}
