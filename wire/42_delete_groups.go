package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteGroups: v0-2
//
// Behavior:
// * Only empty groups are deleted (NON_EMPTY_GROUP otherwise).
//
// Version notes:
// * v1: same as v0
// * v2: flexible versions

func init() { register(api{key: 42, min: 0, max: 2, handle: (*Server).handleDeleteGroups}) }

func (s *Server) handleDeleteGroups(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Groups.DeleteGroups(ctx, kreq.(*kmsg.DeleteGroupsRequest)), nil
}
