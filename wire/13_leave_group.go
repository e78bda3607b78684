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

// LeaveGroup needs READ on the group, else GROUP_AUTHORIZATION_FAILED.
func (s *Server) handleLeaveGroup(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.LeaveGroupRequest)
	if !s.auth(ctx).allowed(resGroup, req.Group, opRead) {
		return deniedResponse(req, errGroupAuth), nil
	}
	return s.svc.Groups.LeaveGroup(ctx, req), nil
}
