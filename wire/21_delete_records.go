package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteRecords: v0-2
//
// Behavior:
// * Offset -1 deletes up to the high watermark.
//
// Version notes:
// * v1: same as v0
// * v2: flexible versions

func init() { register(api{key: 21, min: 0, max: 2, handle: (*Server).handleDeleteRecords}) }

func (s *Server) handleDeleteRecords(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Replicas.DeleteRecords(ctx, kreq.(*kmsg.DeleteRecordsRequest)), nil
}
