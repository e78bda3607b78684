package wire

import (
	"context"

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

func (s *Server) handleConsumerGroupHeartbeat(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Groups.ConsumerGroupHeartbeat(ctx, kreq.(*kmsg.ConsumerGroupHeartbeatRequest)), nil
}
