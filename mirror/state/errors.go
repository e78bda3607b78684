package state

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// The error codes the coordinator answers with, by their Kafka names.
//
// Routing (per partition): NOT_COORDINATOR when this broker does not lead
// the record's __mirror_state partition (or stopped leading it),
// COORDINATOR_LOAD_IN_PROGRESS while the shard loads, and for a failed
// append the group coordinator's mapping (runtime.AppendErrorCode).
//
// Fencing of WriteMirrorStates (fence.go), the digest's §2.2 [INF] codes:
// FENCED_LEADER_EPOCH for a writer older than the record or than the
// partition's leader epoch in this broker's metadata, UNKNOWN_LEADER_EPOCH
// for a writer newer than that metadata (this broker lags; retriable, as
// Kafka answers a Fetch from the future), INVALID_CLUSTER_MIRROR_STATES
// (145) for a state-epoch mismatch or an invalid transition,
// UNKNOWN_TOPIC_OR_PARTITION for a topic or partition the metadata does not
// have, INVALID_REQUEST for a malformed entry.
var (
	codeNotCoordinator             = kerr.NotCoordinator.Code
	codeLoadInProgress             = kerr.CoordinatorLoadInProgress.Code
	codeNotAvailable               = kerr.CoordinatorNotAvailable.Code
	codeUnknownServerError         = kerr.UnknownServerError.Code
	codeUnknownTopicOrPartition    = kerr.UnknownTopicOrPartition.Code
	codeFencedLeaderEpoch          = kerr.FencedLeaderEpoch.Code
	codeUnknownLeaderEpoch         = kerr.UnknownLeaderEpoch.Code
	codeInvalidRequest             = kerr.InvalidRequest.Code
	codeInvalidClusterMirrorStates = mirrormsg.InvalidClusterMirrorStates.Code
)

// codeError is the Go error of a per-partition outcome, for the local API:
// nil for 0, else the *kerr.Error of code (mirrormsg's table first), also
// wrapping partition.ErrFenced for the fencing codes so the state machine
// classifies it without knowing codes.
func codeError(code int16, msg string) error {
	if code == 0 {
		return nil
	}
	ke := mirrormsg.TypedErrorForCode(code)
	if code == codeFencedLeaderEpoch || code == codeInvalidClusterMirrorStates {
		return fmt.Errorf("%w: %w: %s", partition.ErrFenced, ke, msg)
	}
	if msg == "" {
		return ke
	}
	return fmt.Errorf("%w: %s", ke, msg)
}

// CodeError is the Go error of a ReadMirrorStates or WriteMirrorStates
// partition result, for a caller on another broker (the broker's
// StateStore): nil for 0, else the code's *kerr.Error with msg, wrapping
// partition.ErrFenced for FENCED_LEADER_EPOCH and
// INVALID_CLUSTER_MIRROR_STATES as the local API does.
func CodeError(code int16, msg string) error { return codeError(code, msg) }
