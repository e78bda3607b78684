package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// DeleteTopics: v1-6
//
// Behavior:
// * Answered by the admin service; this file only routes and gates versions.
//
// Version notes:
// * v1: ThrottleMillis
// * v4: flexible versions
// * v5: ErrorMessage
// * v6: topics by id (KIP-516)

func init() { register(api{key: 20, min: 1, max: 6, handle: (*Server).handleDeleteTopics}) }

// DeleteTopics needs DELETE on each topic (and, named by id, DESCRIBE),
// else TOPIC_AUTHORIZATION_FAILED, whether or not the topic exists
// (ControllerApis.deleteTopics): the answer does not tell an unauthorized
// client which topics there are. An id no topic has is UNKNOWN_TOPIC_ID.
func (s *Server) handleDeleteTopics(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteTopicsRequest)
	c := s.auth(ctx)
	if !c.on {
		return s.svc.Admin.DeleteTopics(ctx, req), nil
	}
	deniedResp := func(name *string, id [16]byte) kmsg.DeleteTopicsResponseTopic {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID, rt.ErrorCode = name, id, errTopicAuth
		rt.ErrorMessage = kmsg.StringPtr(kerr.TopicAuthorizationFailed.Description)
		return rt
	}
	var denied []kmsg.DeleteTopicsResponseTopic
	for _, n := range splitAllowed(&req.TopicNames, func(n *string) bool { return c.allowed(resTopic, *n, opDelete) }) {
		denied = append(denied, deniedResp(kmsg.StringPtr(n), [16]byte{}))
	}
	img := s.svc.Cluster.Image()
	for _, t := range splitAllowed(&req.Topics, func(t *kmsg.DeleteTopicsRequestTopic) bool {
		if t.Topic != nil && *t.Topic != "" {
			return c.allowed(resTopic, *t.Topic, opDelete)
		}
		topic, ok := img.TopicsByID[raftmeta.Uuid(t.TopicID)]
		return !ok || c.allowed(resTopic, topic.Name, opDescribe) && c.allowed(resTopic, topic.Name, opDelete)
	}) {
		denied = append(denied, deniedResp(t.Topic, t.TopicID))
	}
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	if len(req.TopicNames)+len(req.Topics) > 0 || len(denied) == 0 {
		resp = s.svc.Admin.DeleteTopics(ctx, req)
	}
	resp.Topics = append(resp.Topics, denied...)
	return resp, nil
}
