package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateTopics: v2-7
//
// Behavior:
// * Validated and applied by the controller through the metadata log.
//
// Version notes:
// * v1: ValidateOnly, ErrorMessage
// * v2: ThrottleMillis
// * v4: default partitions and replication factor (-1, KIP-464)
// * v5: flexible versions; NumPartitions, ReplicationFactor and Configs in the response (KIP-525)
// * v7: TopicID (KIP-516)

func init() { register(api{key: 19, min: 2, max: 7, handle: (*Server).handleCreateTopics}) }

func (s *Server) handleCreateTopics(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Admin.CreateTopics(ctx, kreq.(*kmsg.CreateTopicsRequest)), nil
}
