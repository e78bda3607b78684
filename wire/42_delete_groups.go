package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteGroups: v0-2
//
// Behavior:
// * Only empty groups are deleted (NON_EMPTY_GROUP otherwise).
//
// Version notes:
// * v1: same as v0
// * v2: flexible versions

func init() { register(api{key: 42, min: 0, max: 2, handle: (*Server).handleDeleteGroups}) }

// DeleteGroups needs DELETE on each group, else GROUP_AUTHORIZATION_FAILED
// (KafkaApis.handleDeleteGroupsRequest).
func (s *Server) handleDeleteGroups(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteGroupsRequest)
	c := s.auth(ctx)
	denied := splitAllowed(&req.Groups, func(g *string) bool { return c.allowed(resGroup, *g, opDelete) })
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	if len(req.Groups) > 0 || len(denied) == 0 {
		resp = s.svc.Groups.DeleteGroups(ctx, req)
	}
	for _, g := range denied {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group, rg.ErrorCode = g, errGroupAuth
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
