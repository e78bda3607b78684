package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListGroups: v0-5
//
// Behavior:
// * Answered by the groups service; this file only routes and gates versions.
//
// Version notes:
// * v1: ThrottleMillis
// * v3: flexible versions
// * v4: StatesFilter (KIP-518)
// * v5: TypesFilter (KIP-848)

func init() { register(api{key: 16, min: 0, max: 5, handle: (*Server).handleListGroups}) }

func (s *Server) handleListGroups(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Groups.ListGroups(ctx, kreq.(*kmsg.ListGroupsRequest)), nil
}
