package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListOffsets: v1-10
//
// Behavior:
// * Latest is the high watermark for read_uncommitted, the last stable offset for read_committed, the log end offset for replicas.
//
// Version notes:
// * v1: single offset per partition
// * v2: IsolationLevel (KIP-98)
// * v4: CurrentLeaderEpoch and LeaderEpoch (KIP-320)
// * v6: flexible versions
// * v7: max timestamp -3 (KIP-734)
// * v8: earliest local -4 (KIP-405)
// * v9: latest tiered -5 (KIP-1005)
// * v10: TimeoutMillis (KIP-1075)

func init() { register(api{key: 2, min: 1, max: 10, handle: (*Server).handleListOffsets}) }

func (s *Server) handleListOffsets(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Replicas.ListOffsets(ctx, kreq.(*kmsg.ListOffsetsRequest)), nil
}
