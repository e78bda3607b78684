package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreatePartitions: v0-3
//
// Behavior:
// * Partition counts only grow.
//
// Version notes:
// * v1: same as v0
// * v2: flexible versions
// * v3: same as v2

func init() { register(api{key: 37, min: 0, max: 3, handle: (*Server).handleCreatePartitions}) }

// CreatePartitions needs ALTER on each topic, else TOPIC_AUTHORIZATION_FAILED
// (ControllerApis.createPartitions).
func (s *Server) handleCreatePartitions(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreatePartitionsRequest)
	c := s.auth(ctx)
	denied := splitAllowed(&req.Topics, func(t *kmsg.CreatePartitionsRequestTopic) bool { return c.allowed(resTopic, t.Topic, opAlter) })
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	if len(req.Topics) > 0 || len(denied) == 0 {
		resp = s.svc.Admin.CreatePartitions(ctx, req)
	}
	for _, t := range denied {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic, rt.ErrorCode = t.Topic, errTopicAuth
		rt.ErrorMessage = kmsg.StringPtr(kerr.TopicAuthorizationFailed.Description)
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
