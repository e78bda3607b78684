package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// LeaveGroup: v0-5
//
// Behavior:
// * v3+ removes a batch of members (KIP-345).
//
// Version notes:
// * v1: ThrottleMillis
// * v3: Members batch
// * v4: flexible versions
// * v5: Reason (KIP-800)

func init() { register(api{key: 13, min: 0, max: 5, handle: (*Server).handleLeaveGroup}) }

func (s *Server) handleLeaveGroup(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Groups.LeaveGroup(ctx, kreq.(*kmsg.LeaveGroupRequest)), nil
}
