package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateACLs: v1-3
//
// Behavior:
// * ACLs are stored in the metadata log; enforcement comes with the security work.
//
// Version notes:
// * v1: PatternType (KIP-290)
// * v2: flexible versions

func init() { register(api{key: 30, min: 1, max: 3, handle: (*Server).handleCreateACLs}) }

// CreateAcls needs ALTER on the cluster, else every creation is
// CLUSTER_AUTHORIZATION_FAILED (AclApis.handleCreateAcls).
func (s *Server) handleCreateACLs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreateACLsRequest)
	if s.auth(ctx).cluster(opAlter) {
		return s.svc.Admin.CreateACLs(ctx, req), nil
	}
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	for range req.Creations {
		r := kmsg.NewCreateACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = errClusterAuth, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}
