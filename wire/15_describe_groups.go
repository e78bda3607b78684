package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeGroups: v0-5
//
// Behavior:
// * Answered by the groups service; this file only routes and gates versions.
//
// Version notes:
// * v1: ThrottleMillis
// * v3: AuthorizedOperations (KIP-430)
// * v4: GroupInstanceID
// * v5: flexible versions

func init() { register(api{key: 15, min: 0, max: 5, handle: (*Server).handleDescribeGroups}) }

func (s *Server) handleDescribeGroups(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Groups.DescribeGroups(ctx, kreq.(*kmsg.DescribeGroupsRequest)), nil
}
