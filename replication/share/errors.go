package share

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// errorCode is the Kafka error a partition answers for err: its kerr error
// when it has one, REQUEST_TIMED_OUT for a deadline, else
// UNKNOWN_SERVER_ERROR.
func errorCode(err error) *kerr.Error {
	var ke *kerr.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ke):
		return ke
	case errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut
	}
	return kerr.UnknownServerError
}

// persisterError is the error a client hears for a failed persister call
// (Kafka's SharePartition.fetchPersisterError): the coordinator being away
// is COORDINATOR_NOT_AVAILABLE; a newer leader epoch or state epoch fencing
// this share partition is NOT_LEADER_OR_FOLLOWER (the client looks the
// leader up again, and the next request loads the state afresh). A
// persister call that ran out of time is REQUEST_TIMED_OUT, which clients
// retry; everything else UNKNOWN_SERVER_ERROR.
func persisterError(err error) *kerr.Error {
	switch ke := errorCode(err); ke {
	case kerr.NotCoordinator, kerr.CoordinatorNotAvailable, kerr.CoordinatorLoadInProgress:
		return kerr.CoordinatorNotAvailable
	case kerr.FencedLeaderEpoch, kerr.FencedStateEpoch, kerr.NotLeaderForPartition:
		return kerr.NotLeaderForPartition
	case kerr.GroupIDNotFound, kerr.UnknownTopicOrPartition, kerr.RequestTimedOut:
		return ke
	}
	return kerr.UnknownServerError
}

// fences reports whether a persister error, as persisterError maps it,
// ends the share partition on this broker (Kafka's
// fencedSharePartitionHandler): a later request loads it again from the
// persister.
func fences(ke *kerr.Error) bool {
	switch ke {
	case kerr.NotLeaderForPartition, kerr.GroupIDNotFound, kerr.UnknownTopicOrPartition:
		return true
	}
	return false
}

// kerrForCode is the kerr error of a code (nil for 0 or unknown codes).
func kerrForCode(code int16) *kerr.Error {
	ke, _ := kerr.ErrorForCode(code).(*kerr.Error)
	return ke
}
