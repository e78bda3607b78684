package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

// CreateTopics: v2-7
//
// Behavior:
// * Validated and applied by the controller through the metadata log.
//
// Version notes:
// * v1: ValidateOnly, ErrorMessage
// * v2: ThrottleMillis
// * v4: default partitions and replication factor (-1, KIP-464)
// * v5: flexible versions; NumPartitions, ReplicationFactor and Configs in the response (KIP-525)
// * v7: TopicID (KIP-516)

func init() { register(api{key: 19, min: 2, max: 7, handle: (*Server).handleCreateTopics}) }

// CreateTopics needs CREATE on the cluster or on each topic, else
// TOPIC_AUTHORIZATION_FAILED; a created topic's configs are returned only
// with DESCRIBE_CONFIGS on it, else its config error is
// TOPIC_AUTHORIZATION_FAILED (ControllerApis.createTopics). A drill clone
// (mirror.clone.of) copies a mirror topic's records: it needs READ on that
// topic and ALTER on the mirror too.
func (s *Server) handleCreateTopics(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.CreateTopicsRequest)
	c := s.auth(ctx)
	clusterOK := c.cluster(opCreate)
	denied := splitAllowed(&req.Topics, func(t *kmsg.CreateTopicsRequestTopic) bool {
		return (clusterOK || c.allowed(resTopic, t.Topic, opCreate)) && cloneAllowed(c, t)
	})
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	if len(req.Topics) > 0 || len(denied) == 0 {
		resp = s.svc.Admin.CreateTopics(ctx, req)
	}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if t.ErrorCode == 0 && !c.allowed(resTopic, t.Topic, opDescribeConfigs) {
			t.Configs, t.ConfigErrorCode = nil, errTopicAuth
			t.NumPartitions, t.ReplicationFactor = -1, -1
		}
	}
	for _, t := range denied {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic, rt.ErrorCode = t.Topic, errTopicAuth
		rt.ErrorMessage = kmsg.StringPtr(kerr.TopicAuthorizationFailed.Description)
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// cloneAllowed reports whether c may create t as a clone of the topic its
// mirror.clone.of names (true for any other topic; a value that does not
// parse is the controller's INVALID_CONFIG to give).
func cloneAllowed(c authCheck, t *kmsg.CreateTopicsRequestTopic) bool {
	for _, cfg := range t.Configs {
		if cfg.Name != raftmeta.MirrorCloneConfig || cfg.Value == nil {
			continue
		}
		spec, err := raftmeta.ParseCloneSpec(*cfg.Value)
		if err != nil {
			return true
		}
		return c.allowed(resTopic, spec.Topic, opRead) && c.allowed(resMirror, spec.Mirror, opAlter)
	}
	return true
}
