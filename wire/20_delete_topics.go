package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteTopics: v1-6
//
// Behavior:
// * Answered by the admin service; this file only routes and gates versions.
//
// Version notes:
// * v1: ThrottleMillis
// * v4: flexible versions
// * v5: ErrorMessage
// * v6: topics by id (KIP-516)

func init() { register(api{key: 20, min: 1, max: 6, handle: (*Server).handleDeleteTopics}) }

func (s *Server) handleDeleteTopics(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Admin.DeleteTopics(ctx, kreq.(*kmsg.DeleteTopicsRequest)), nil
}
