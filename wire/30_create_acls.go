package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateACLs: v1-3
//
// Behavior:
// * ACLs are stored in the metadata log; enforcement comes with the security work.
//
// Version notes:
// * v1: PatternType (KIP-290)
// * v2: flexible versions

func init() { register(api{key: 30, min: 1, max: 3, handle: (*Server).handleCreateACLs}) }

func (s *Server) handleCreateACLs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Admin.CreateACLs(ctx, kreq.(*kmsg.CreateACLsRequest)), nil
}
