package coordinator

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/coordinator/runtime"
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

// appendErrorCode maps a failed append to the error the client gets: the
// mapping every coordinator over coordinator/runtime shares.
func appendErrorCode(err error) int16 { return runtime.AppendErrorCode(err) }
