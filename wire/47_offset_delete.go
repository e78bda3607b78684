package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetDelete: v0-0
//
// Behavior:
// * GROUP_SUBSCRIBED_TO_TOPIC for topics the group consumes.
//
// Version notes:
// * v0: KIP-496

func init() { register(api{key: 47, min: 0, max: 0, handle: (*Server).handleOffsetDelete}) }

func (s *Server) handleOffsetDelete(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Groups.OffsetDelete(ctx, kreq.(*kmsg.OffsetDeleteRequest)), nil
}
