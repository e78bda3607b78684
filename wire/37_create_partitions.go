package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreatePartitions: v0-3
//
// Behavior:
// * Partition counts only grow.
//
// Version notes:
// * v1: same as v0
// * v2: flexible versions
// * v3: same as v2

func init() { register(api{key: 37, min: 0, max: 3, handle: (*Server).handleCreatePartitions}) }

func (s *Server) handleCreatePartitions(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Admin.CreatePartitions(ctx, kreq.(*kmsg.CreatePartitionsRequest)), nil
}
