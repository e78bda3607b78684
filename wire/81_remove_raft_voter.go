package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// RemoveRaftVoter: v0
//
// Behavior:
// * Takes a voter out of the quorum's voter set, answering once the new
//   set is committed (KIP-853). A node still registered as a broker stays
//   an observer, so it keeps following the metadata log; a leader removing
//   itself hands the leadership on. VOTER_NOT_FOUND for a node that is not
//   a voter with that directory id (or the last one), REQUEST_TIMED_OUT
//   while another change is under way.
// * UNSUPPORTED_VERSION while kraft.version is 0, as AddRaftVoter.
// * ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED.

func init() {
	register(api{key: 81, min: 0, max: 0, served: servesQuorum, handle: (*Server).handleRemoveRaftVoter})
}

func (s *Server) handleRemoveRaftVoter(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.RemoveRaftVoterRequest)
	if !s.auth(ctx).cluster(opAlter) {
		return deniedResponse(req, errClusterAuth), nil
	}
	return s.svc.Quorum.RemoveRaftVoter(ctx, req), nil
}
