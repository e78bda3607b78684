package coordinator

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Error codes used throughout, by their Kafka names.
var (
	unknownServerError        = kerr.UnknownServerError.Code
	unknownTopicOrPartition   = kerr.UnknownTopicOrPartition.Code
	coordinatorLoadInProgress = kerr.CoordinatorLoadInProgress.Code
	coordinatorNotAvailable   = kerr.CoordinatorNotAvailable.Code
	notCoordinator            = kerr.NotCoordinator.Code
	illegalGeneration         = kerr.IllegalGeneration.Code
	inconsistentGroupProtocol = kerr.InconsistentGroupProtocol.Code
	invalidGroupID            = kerr.InvalidGroupID.Code
	unknownMemberID           = kerr.UnknownMemberID.Code
	invalidSessionTimeout     = kerr.InvalidSessionTimeout.Code
	rebalanceInProgress       = kerr.RebalanceInProgress.Code
	offsetMetadataTooLarge    = kerr.OffsetMetadataTooLarge.Code
	invalidRequest            = kerr.InvalidRequest.Code
	nonEmptyGroup             = kerr.NonEmptyGroup.Code
	groupIDNotFound           = kerr.GroupIDNotFound.Code
	memberIDRequired          = kerr.MemberIDRequired.Code
	groupMaxSizeReached       = kerr.GroupMaxSizeReached.Code
	fencedInstanceID          = kerr.FencedInstanceID.Code
	groupSubscribedToTopic    = kerr.GroupSubscribedToTopic.Code
	unstableOffsetCommit      = kerr.UnstableOffsetCommit.Code
	invalidTxnState           = kerr.InvalidTxnState.Code
	fencedMemberEpoch         = kerr.FencedMemberEpoch.Code
	unreleasedInstanceID      = kerr.UnreleasedInstanceID.Code
	unsupportedAssignor       = kerr.UnsupportedAssignor.Code
	staleMemberEpoch          = kerr.StaleMemberEpoch.Code
	invalidRegularExpression  = kerr.InvalidRegularExpression.Code
	unsupportedVersion        = kerr.UnsupportedVersion.Code
)

// appendErrorCode maps a failed append to the error the client gets
// (CoordinatorOperationExceptionHelper.handleOperationException and
// GroupMetadataManager.appendGroupMetadataErrorToResponseError): errors a
// client would not retry correctly become coordinator errors, which make
// it look the coordinator up again.
func appendErrorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return coordinatorNotAvailable
		}
		return unknownServerError
	}
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
		return coordinatorNotAvailable
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return notCoordinator
	case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
		return unknownServerError
	case kerr.NetworkException:
		return coordinatorLoadInProgress
	}
	return ke.Code
}

// AppendErrorCode is appendErrorCode for the other coordinators over
// coordinator/runtime (the share coordinator), which map their failed
// appends the same way.
func AppendErrorCode(err error) int16 { return appendErrorCode(err) }
