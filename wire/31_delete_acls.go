package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteACLs: v1-3
//
// Behavior:
// * Answered by the admin service; this file only routes and gates versions.
//
// Version notes:
// * v1: PatternType (KIP-290)
// * v2: flexible versions

func init() { register(api{key: 31, min: 1, max: 3, handle: (*Server).handleDeleteACLs}) }

// DeleteAcls needs ALTER on the cluster, else every filter is
// CLUSTER_AUTHORIZATION_FAILED (AclApis.handleDeleteAcls).
func (s *Server) handleDeleteACLs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteACLsRequest)
	if s.auth(ctx).cluster(opAlter) {
		return s.svc.Admin.DeleteACLs(ctx, req), nil
	}
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	for range req.Filters {
		r := kmsg.NewDeleteACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = errClusterAuth, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}
