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

func (s *Server) handleSyncGroup(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Groups.SyncGroup(ctx, kreq.(*kmsg.SyncGroupRequest)), nil
}
