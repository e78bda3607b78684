package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareGroupHeartbeat: v1
//
// Behavior:
// * KIP-932 share group membership: join (epoch 0), heartbeat, leave
//   (epoch -1); the coordinator assigns partitions, which members share.
// * Served only with a ShareGroupService.
//
// Version notes:
// * v0 was Kafka 4.0's early access, removed in 4.1; v1 is the stable
//   version Kafka 4.1+ and franz-go's share consumer speak.

func init() {
	register(api{key: 76, min: 1, max: 1, served: servesShareGroups, handle: (*Server).handleShareGroupHeartbeat})
}

// ShareGroupHeartbeat needs READ on the group (GROUP_AUTHORIZATION_FAILED)
// and DESCRIBE on every subscribed topic (TOPIC_AUTHORIZATION_FAILED)
// (KafkaApis.handleShareGroupHeartbeat).
func (s *Server) handleShareGroupHeartbeat(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareGroupHeartbeatRequest)
	c := s.auth(ctx)
	if !c.allowed(resGroup, req.GroupID, opRead) {
		return deniedResponse(req, errGroupAuth), nil
	}
	for _, t := range req.SubscribedTopicNames {
		if !c.allowed(resTopic, t, opDescribe) {
			return deniedResponse(req, errTopicAuth), nil
		}
	}
	return s.svc.ShareGroups.ShareGroupHeartbeat(ctx, req), nil
}
