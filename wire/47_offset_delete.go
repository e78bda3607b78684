package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetDelete: v0-0
//
// Behavior:
// * GROUP_SUBSCRIBED_TO_TOPIC for topics the group consumes.
//
// Version notes:
// * v0: KIP-496

func init() { register(api{key: 47, min: 0, max: 0, handle: (*Server).handleOffsetDelete}) }

// OffsetDelete needs DELETE on the group (GROUP_AUTHORIZATION_FAILED for
// the request) and READ on each topic, else its partitions are
// TOPIC_AUTHORIZATION_FAILED (KafkaApis.handleOffsetDeleteRequest).
func (s *Server) handleOffsetDelete(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.OffsetDeleteRequest)
	c := s.auth(ctx)
	if !c.allowed(resGroup, req.Group, opDelete) {
		return deniedResponse(req, errGroupAuth), nil
	}
	denied := splitAllowed(&req.Topics, func(t *kmsg.OffsetDeleteRequestTopic) bool { return c.allowed(resTopic, t.Topic, opRead) })
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	if len(req.Topics) > 0 || len(denied) == 0 {
		resp = s.svc.Groups.OffsetDelete(ctx, req)
	}
	for _, t := range denied {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, errTopicAuth
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
