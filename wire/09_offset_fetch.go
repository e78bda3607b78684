package wire

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetFetch: v1-9
//
// Behavior:
// * Null topics fetch every committed partition of the group (v2+).
// * Unknown partitions answer offset -1.
//
// Version notes:
// * v2: null topics, top-level ErrorCode
// * v3: ThrottleMillis
// * v5: CommittedLeaderEpoch
// * v6: flexible versions
// * v7: RequireStable (KIP-447)
// * v8: several groups per request
// * v9: MemberID and MemberEpoch (KIP-848)

func init() { register(api{key: 9, min: 1, max: 9, handle: (*Server).handleOffsetFetch}) }

// OffsetFetch needs DESCRIBE on each group, else GROUP_AUTHORIZATION_FAILED
// (the group's error from v8, the response's before), and DESCRIBE on each
// topic: a named topic's partitions are TOPIC_AUTHORIZATION_FAILED, and
// a request for all of a group's offsets leaves the topics out
// (KafkaApis.handleOffsetFetchRequest).
func (s *Server) handleOffsetFetch(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetFetchRequest)
	c := s.auth(ctx)
	if !c.on {
		return s.svc.Groups.OffsetFetch(ctx, req), nil
	}
	if req.Version < 8 {
		if !c.allowed(resGroup, req.Group, opDescribe) {
			resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
			resp.ErrorCode = errGroupAuth
			for _, t := range req.Topics {
				rt := kmsg.NewOffsetFetchResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseTopicPartition()
					rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p, -1, -1, errGroupAuth
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
			return resp, nil
		}
		resp := s.svc.Groups.OffsetFetch(ctx, req)
		resp.Topics = slices.DeleteFunc(resp.Topics, func(t kmsg.OffsetFetchResponseTopic) bool {
			if c.allowed(resTopic, t.Topic, opDescribe) {
				return false
			}
			for j := range t.Partitions {
				p := &t.Partitions[j]
				p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, nil, errTopicAuth
			}
			return req.Topics == nil
		})
		return resp, nil
	}
	named := map[string]bool{}
	for _, g := range req.Groups {
		named[g.Group] = g.Topics != nil
	}
	denied := splitAllowed(&req.Groups, func(g *kmsg.OffsetFetchRequestGroup) bool { return c.allowed(resGroup, g.Group, opDescribe) })
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if len(req.Groups) > 0 || len(denied) == 0 {
		resp = s.svc.Groups.OffsetFetch(ctx, req)
	}
	for i := range resp.Groups {
		g := &resp.Groups[i]
		g.Topics = slices.DeleteFunc(g.Topics, func(t kmsg.OffsetFetchResponseGroupTopic) bool {
			if c.allowed(resTopic, t.Topic, opDescribe) {
				return false
			}
			for j := range t.Partitions {
				p := &t.Partitions[j]
				p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode = -1, -1, nil, errTopicAuth
			}
			return !named[g.Group]
		})
	}
	for _, g := range denied {
		rg := kmsg.NewOffsetFetchResponseGroup()
		rg.Group, rg.ErrorCode = g.Group, errGroupAuth
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
