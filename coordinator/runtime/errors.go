package runtime

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// AppendErrorCode maps a failed append to a coordinator's partition to the
// error code its client gets (Kafka's
// CoordinatorOperationExceptionHelper.handleOperationException and
// GroupMetadataManager.appendGroupMetadataErrorToResponseError): errors a
// client would not retry correctly become coordinator errors, which make
// it look the coordinator up again. Every coordinator over this runtime
// (groups, shares, __mirror_state) answers with it; nil is 0.
func AppendErrorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return kerr.CoordinatorNotAvailable.Code
		}
		return kerr.UnknownServerError.Code
	}
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
		return kerr.CoordinatorNotAvailable.Code
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return kerr.NotCoordinator.Code
	case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
		return kerr.UnknownServerError.Code
	case kerr.NetworkException:
		return kerr.CoordinatorLoadInProgress.Code
	}
	return ke.Code
}
