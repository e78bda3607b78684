package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeProducers: v0
//
// Behavior:
// * The idempotent and transactional producers a partition's local log
//   remembers (KIP-664), answered by the replicas service
//   (replication/describe_producers.go).
//
// Version notes:
// * v0: flexible versions

func init() { register(api{key: 61, min: 0, max: 0, handle: (*Server).handleDescribeProducers}) }

func (s *Server) handleDescribeProducers(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Replicas.DescribeProducers(ctx, kreq.(*kmsg.DescribeProducersRequest)), nil
}
