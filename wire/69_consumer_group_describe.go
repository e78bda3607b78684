package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConsumerGroupDescribe: v0-1
//
// Behavior:
// * Describes KIP-848 consumer groups: epochs, assignor, members with
//   their current and target assignments.
//
// Version notes:
// * v0: KIP-848
// * v1: MemberType (KIP-1099)

func init() {
	register(api{key: 69, min: 0, max: 1, handle: (*Server).handleConsumerGroupDescribe})
}

// ConsumerGroupDescribe needs DESCRIBE on each group, else the group is
// GROUP_AUTHORIZATION_FAILED; AuthorizedOperations are the client's.
func (s *Server) handleConsumerGroupDescribe(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ConsumerGroupDescribeRequest)
	c := s.auth(ctx)
	denied := splitAllowed(&req.Groups, func(g *string) bool { return c.allowed(resGroup, *g, opDescribe) })
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	if len(req.Groups) > 0 || len(denied) == 0 {
		resp = s.svc.Groups.ConsumerGroupDescribe(ctx, req)
	}
	for i := range resp.Groups {
		g := &resp.Groups[i]
		if ops, ok := c.authorizedOps(resGroup, g.Group); ok && req.IncludeAuthorizedOperations && g.ErrorCode == 0 {
			g.AuthorizedOperations = ops
		}
	}
	for _, g := range denied {
		rg := kmsg.NewConsumerGroupDescribeResponseGroup()
		rg.Group, rg.ErrorCode = g, errGroupAuth
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
