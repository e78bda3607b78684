package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// SyncGroup: v0-5
//
// Behavior:
// * The leader's assignment is persisted before any member is answered; followers wait for it.
//
// Version notes:
// * v1: ThrottleMillis
// * v3: GroupInstanceID
// * v4: flexible versions
// * v5: ProtocolType and ProtocolName (KIP-559)

func init() { register(api{key: 14, min: 0, max: 5, handle: (*Server).handleSyncGroup}) }

// SyncGroup needs READ on the group, else GROUP_AUTHORIZATION_FAILED.
func (s *Server) handleSyncGroup(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.SyncGroupRequest)
	if !s.auth(ctx).allowed(resGroup, req.Group, opRead) {
		return deniedResponse(req, errGroupAuth), nil
	}
	return s.svc.Groups.SyncGroup(ctx, req), nil
}
