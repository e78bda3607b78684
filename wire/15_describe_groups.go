package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeGroups: v0-5
//
// Behavior:
// * Answered by the groups service; this file only routes and gates versions.
//
// Version notes:
// * v1: ThrottleMillis
// * v3: AuthorizedOperations (KIP-430)
// * v4: GroupInstanceID
// * v5: flexible versions

func init() { register(api{key: 15, min: 0, max: 5, handle: (*Server).handleDescribeGroups}) }

// DescribeGroups needs DESCRIBE on each group, else the group is
// GROUP_AUTHORIZATION_FAILED; AuthorizedOperations, when asked for, are
// the client's (KafkaApis.handleDescribeGroupsRequest).
func (s *Server) handleDescribeGroups(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeGroupsRequest)
	c := s.auth(ctx)
	denied := splitAllowed(&req.Groups, func(g *string) bool { return c.allowed(resGroup, *g, opDescribe) })
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	if len(req.Groups) > 0 || len(denied) == 0 {
		resp = s.svc.Groups.DescribeGroups(ctx, req)
	}
	for i := range resp.Groups {
		g := &resp.Groups[i]
		if ops, ok := c.authorizedOps(resGroup, g.Group); ok && req.IncludeAuthorizedOperations && g.ErrorCode == 0 {
			g.AuthorizedOperations = ops
		}
	}
	for _, g := range denied {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group, rg.ErrorCode = g, errGroupAuth
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
