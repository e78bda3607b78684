package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// JoinGroup: v2-9
//
// Behavior:
// * Blocks until the join phase of the rebalance completes; the connection's next JoinGroup may start meanwhile (reqctx.Unmute).
// * v4+: the first join of a member without an id answers MEMBER_ID_REQUIRED with its new id (KIP-394).
//
// Version notes:
// * v1: RebalanceTimeoutMillis
// * v2: ThrottleMillis
// * v4: MEMBER_ID_REQUIRED
// * v5: GroupInstanceID (KIP-345)
// * v6: flexible versions
// * v7: ProtocolType and ProtocolName in the response (KIP-559)
// * v8: Reason (KIP-800)
// * v9: SkipAssignment for the leader (KIP-814)

func init() { register(api{key: 11, min: 2, max: 9, handle: (*Server).handleJoinGroup}) }

// JoinGroup needs READ on the group, else GROUP_AUTHORIZATION_FAILED.
func (s *Server) handleJoinGroup(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.JoinGroupRequest)
	if !s.auth(ctx).allowed(resGroup, req.Group, opRead) {
		return deniedResponse(req, errGroupAuth), nil
	}
	return s.svc.Groups.JoinGroup(ctx, req), nil
}
