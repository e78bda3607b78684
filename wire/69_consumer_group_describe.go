package wire

import (
	"context"

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

func (s *Server) handleConsumerGroupDescribe(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Groups.ConsumerGroupDescribe(ctx, kreq.(*kmsg.ConsumerGroupDescribeRequest)), nil
}
