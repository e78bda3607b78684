package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AddRaftVoter: v0-1
//
// Behavior:
// * Makes a node that follows the metadata log as an observer, caught up,
//   a voter of the quorum, one change at a time, answering once the new
//   voter set is committed (KIP-853; raft's AddVoter). REQUEST_TIMED_OUT
//   when another change is under way or the node lags, DUPLICATE_VOTER
//   when it votes already, INVALID_REQUEST without a directory id or the
//   CONTROLLER listener; REQUEST_TIMED_OUT too for a directory id other
//   than the one the node registered (KRaft knows no such observer).
// * UNSUPPORTED_VERSION while kraft.version is 0 (a static quorum; a new
//   cluster starts at 1).
// * ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
//
// Version notes:
// * v1: AckWhenCommitted; Strait always answers once committed.

func init() {
	register(api{key: 80, min: 0, max: 1, served: servesQuorum, handle: (*Server).handleAddRaftVoter})
}

func (s *Server) handleAddRaftVoter(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AddRaftVoterRequest)
	if !s.auth(ctx).cluster(opAlter) {
		return deniedResponse(req, errClusterAuth), nil
	}
	return s.svc.Quorum.AddRaftVoter(ctx, req), nil
}
