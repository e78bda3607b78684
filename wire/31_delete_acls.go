package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteACLs: v1-3
//
// Behavior:
// * Answered by the admin service; this file only routes and gates versions.
//
// Version notes:
// * v1: PatternType (KIP-290)
// * v2: flexible versions

func init() { register(api{key: 31, min: 1, max: 3, handle: (*Server).handleDeleteACLs}) }

func (s *Server) handleDeleteACLs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Admin.DeleteACLs(ctx, kreq.(*kmsg.DeleteACLsRequest)), nil
}
