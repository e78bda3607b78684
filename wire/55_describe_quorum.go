package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeQuorum: v0-2
//
// Behavior:
// * The metadata quorum as __cluster_metadata partition 0: the active
//   controller, its epoch (raft's term), the high watermark, and each
//   voter's and observer's log end offset and fetch times (KIP-595,
//   KIP-836); raft index i is offset i-1 (raftmeta/quorum_describe.go).
//   The active controller answers; another broker forwards the request.
// * DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED
//   (ControllerApis.handleDescribeQuorum).
//
// Version notes:
// * v1: last fetch and caught-up timestamps (KIP-836)
// * v2: error messages, replica directory ids (the metadata directory's
//   meta.properties directory.id, as the node's broker registered it) and
//   the members' CONTROLLER listeners (KIP-853)

func init() {
	register(api{key: 55, min: 0, max: 2, served: servesQuorum, handle: (*Server).handleDescribeQuorum})
}

func (s *Server) handleDescribeQuorum(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeQuorumRequest)
	if !s.auth(ctx).cluster(opDescribe) {
		return deniedResponse(req, errClusterAuth), nil
	}
	return s.svc.Quorum.DescribeQuorum(ctx, req), nil
}
