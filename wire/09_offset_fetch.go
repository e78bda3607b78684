package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetFetch: v1-9
//
// Behavior:
// * Null topics fetch every committed partition of the group (v2+).
// * Unknown partitions answer offset -1.
//
// Version notes:
// * v2: null topics, top-level ErrorCode
// * v3: ThrottleMillis
// * v5: CommittedLeaderEpoch
// * v6: flexible versions
// * v7: RequireStable (KIP-447)
// * v8: several groups per request
// * v9: MemberID and MemberEpoch (KIP-848)

func init() { register(api{key: 9, min: 1, max: 9, handle: (*Server).handleOffsetFetch}) }

func (s *Server) handleOffsetFetch(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Groups.OffsetFetch(ctx, kreq.(*kmsg.OffsetFetchRequest)), nil
}
