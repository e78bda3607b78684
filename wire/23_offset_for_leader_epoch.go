package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetForLeaderEpoch: v2-4
//
// Behavior:
// * Answers from the partition's leader epoch cache (KIP-101, KIP-279).
//
// Version notes:
// * v2: CurrentLeaderEpoch (KIP-320)
// * v3: ReplicaID
// * v4: flexible versions

func init() { register(api{key: 23, min: 2, max: 4, handle: (*Server).handleOffsetForLeaderEpoch}) }

func (s *Server) handleOffsetForLeaderEpoch(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Replicas.OffsetForLeaderEpoch(ctx, kreq.(*kmsg.OffsetForLeaderEpochRequest)), nil
}
