package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareGroupDescribe: v1
//
// Behavior:
// * Describes KIP-932 share groups: epochs, assignor, members with their
//   assignments. Served only with a ShareGroupService.
//
// Version notes:
// * v0 was Kafka 4.0's early access, removed in 4.1.

func init() {
	register(api{key: 77, min: 1, max: 1, served: servesShareGroups, handle: (*Server).handleShareGroupDescribe})
}

// ShareGroupDescribe needs DESCRIBE on each group, else the group is
// GROUP_AUTHORIZATION_FAILED; a group assigning a topic the client may not
// describe is TOPIC_AUTHORIZATION_FAILED without members, as for
// ConsumerGroupDescribe; AuthorizedOperations are the client's.
func (s *Server) handleShareGroupDescribe(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareGroupDescribeRequest)
	c := s.auth(ctx)
	denied := splitAllowed(&req.GroupIDs, func(g *string) bool { return c.allowed(resGroup, *g, opDescribe) })
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	if len(req.GroupIDs) > 0 || len(denied) == 0 {
		resp = s.svc.ShareGroups.ShareGroupDescribe(ctx, req)
	}
	for i := range resp.Groups {
		g := &resp.Groups[i]
		if !c.on || g.ErrorCode != 0 {
			continue
		}
		if shareGroupHidesTopic(c, g) {
			rg := kmsg.NewShareGroupDescribeResponseGroup()
			rg.GroupID, rg.ErrorCode, rg.ErrorMessage = g.GroupID, errTopicAuth, kmsg.StringPtr(topicsHiddenMessage)
			rg.Members = []kmsg.ShareGroupDescribeResponseGroupMember{}
			*g = rg
			continue
		}
		if ops, ok := c.authorizedOps(resGroup, g.GroupID); ok && req.IncludeAuthorizedOperations {
			g.AuthorizedOperations = ops
		}
	}
	for _, g := range denied {
		rg := kmsg.NewShareGroupDescribeResponseGroup()
		rg.GroupID, rg.ErrorCode = g, errGroupAuth
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}

// shareGroupHidesTopic reports whether a member of g is assigned a topic c
// may not describe.
func shareGroupHidesTopic(c authCheck, g *kmsg.ShareGroupDescribeResponseGroup) bool {
	for _, m := range g.Members {
		for _, tp := range m.Assignment.TopicPartitions {
			if !c.allowed(resTopic, tp.Topic, opDescribe) {
				return true
			}
		}
	}
	return false
}
