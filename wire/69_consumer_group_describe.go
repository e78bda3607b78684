package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
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
// GROUP_AUTHORIZATION_FAILED; a group whose members' assignments or target
// assignments name a topic the client may not describe is
// TOPIC_AUTHORIZATION_FAILED without members, so that topic stays hidden;
// AuthorizedOperations are the client's (KafkaApis.handleConsumerGroupDescribe).
func (s *Server) handleConsumerGroupDescribe(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ConsumerGroupDescribeRequest)
	if !s.featureEnabled(req.Key()) { // group.version 0
		resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
		for _, g := range req.Groups {
			rg := kmsg.NewConsumerGroupDescribeResponseGroup()
			rg.Group, rg.ErrorCode = g, kerr.UnsupportedVersion.Code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp, nil
	}
	c := s.auth(ctx)
	denied := splitAllowed(&req.Groups, func(g *string) bool { return c.allowed(resGroup, *g, opDescribe) })
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	if len(req.Groups) > 0 || len(denied) == 0 {
		resp = s.svc.Groups.ConsumerGroupDescribe(ctx, req)
	}
	for i := range resp.Groups {
		g := &resp.Groups[i]
		if !c.on || g.ErrorCode != 0 {
			continue
		}
		if consumerGroupHidesTopic(c, g) {
			*g = deniedGroupTopics(g.Group)
			continue
		}
		if ops, ok := c.authorizedOps(resGroup, g.Group); ok && req.IncludeAuthorizedOperations {
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

const topicsHiddenMessage = "The group has described topic(s) that the client is not authorized to describe."

// consumerGroupHidesTopic reports whether a member of g is assigned, or
// is to be assigned, a topic c may not describe.
func consumerGroupHidesTopic(c authCheck, g *kmsg.ConsumerGroupDescribeResponseGroup) bool {
	for _, m := range g.Members {
		for _, a := range [][]kmsg.AssignmentTopicPartition{m.Assignment.TopicPartitions, m.TargetAssignment.TopicPartitions} {
			for _, tp := range a {
				if !c.allowed(resTopic, tp.Topic, opDescribe) {
					return true
				}
			}
		}
	}
	return false
}

func deniedGroupTopics(group string) kmsg.ConsumerGroupDescribeResponseGroup {
	g := kmsg.NewConsumerGroupDescribeResponseGroup()
	g.Group, g.ErrorCode, g.ErrorMessage = group, errTopicAuth, kmsg.StringPtr(topicsHiddenMessage)
	g.Members = []kmsg.ConsumerGroupDescribeResponseGroupMember{}
	return g
}
