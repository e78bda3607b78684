package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConsumerGroupHeartbeat: v0-1
//
// Behavior:
// * The KIP-848 consumer group protocol: join, heartbeat and leave in one
//   request; the coordinator assigns partitions server-side.
//
// Version notes:
// * v0: KIP-848
// * v1: SubscribedTopicRegex; client-generated member ids (KIP-1082)

func init() {
	register(api{key: 68, min: 0, max: 1, handle: (*Server).handleConsumerGroupHeartbeat})
}

// ConsumerGroupHeartbeat needs READ on the group (GROUP_AUTHORIZATION_FAILED)
// and DESCRIBE on every subscribed topic (TOPIC_AUTHORIZATION_FAILED)
// (KafkaApis.handleConsumerGroupHeartbeat).
func (s *Server) handleConsumerGroupHeartbeat(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ConsumerGroupHeartbeatRequest)
	if !s.featureEnabled(req.Key()) {
		return deniedResponse(req, kerr.UnsupportedVersion.Code), nil // group.version 0
	}
	c := s.auth(ctx)
	if !c.allowed(resGroup, req.Group, opRead) {
		return deniedResponse(req, errGroupAuth), nil
	}
	for _, t := range req.SubscribedTopicNames {
		if !c.allowed(resTopic, t, opDescribe) {
			resp := deniedResponse(req, errTopicAuth).(*kmsg.ConsumerGroupHeartbeatResponse)
			resp.ErrorMessage = kmsg.StringPtr("The group has subscribed to topics that are not authorized.")
			return resp, nil
		}
	}
	return s.svc.Groups.ConsumerGroupHeartbeat(ctx, req), nil
}
