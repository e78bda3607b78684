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

// internalTopics are the topics clients may not produce to or delete
// records from (Kafka's Topic.isInternal).
var internalTopics = map[string]bool{
	"__consumer_offsets":  true,
	"__transaction_state": true,
	"__share_group_state": true,
}

// IsInternalTopic reports whether topic is one of Kafka's internal topics.
func IsInternalTopic(topic string) bool { return internalTopics[topic] }
