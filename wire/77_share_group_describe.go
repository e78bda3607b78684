package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareGroupDescribe: v1
//
// Behavior:
// * Describes KIP-932 share groups: epochs, assignor, members with their
//   assignments. Served only with a ShareGroupService.
//
// Version notes:
// * v0 was Kafka 4.0's early access, removed in 4.1.

func init() {
	register(api{key: 77, min: 1, max: 1, served: servesShareGroups, handle: (*Server).handleShareGroupDescribe})
}

func (s *Server) handleShareGroupDescribe(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.ShareGroups.ShareGroupDescribe(ctx, kreq.(*kmsg.ShareGroupDescribeRequest)), nil
}
