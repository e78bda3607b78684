package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Heartbeat: v0-4
//
// Behavior:
// * REBALANCE_IN_PROGRESS tells the member to rejoin.
//
// Version notes:
// * v1: ThrottleMillis
// * v3: GroupInstanceID
// * v4: flexible versions

func init() { register(api{key: 12, min: 0, max: 4, handle: (*Server).handleHeartbeat}) }

// Heartbeat needs READ on the group, else GROUP_AUTHORIZATION_FAILED.
func (s *Server) handleHeartbeat(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.HeartbeatRequest)
	if !s.auth(ctx).allowed(resGroup, req.Group, opRead) {
		return deniedResponse(req, errGroupAuth), nil
	}
	return s.svc.Groups.Heartbeat(ctx, req), nil
}
