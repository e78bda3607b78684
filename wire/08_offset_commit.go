package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetCommit: v2-9
//
// Behavior:
// * Committed by the group coordinator into __consumer_offsets with acks=all before answering.
// * Generation and member checks as Kafka's classic groups; generation -1 commits for groups with no members.
//
// Version notes:
// * v2: RetentionTimeMillis (ignored since v5)
// * v3: ThrottleMillis
// * v5: RetentionTimeMillis removed
// * v6: CommittedLeaderEpoch (KIP-320)
// * v7: GroupInstanceID (KIP-345)
// * v8: flexible versions
// * v9: new consumer protocol members (KIP-848; classic groups only here)

func init() { register(api{key: 8, min: 2, max: 9, handle: (*Server).handleOffsetCommit}) }

func (s *Server) handleOffsetCommit(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Groups.OffsetCommit(ctx, kreq.(*kmsg.OffsetCommitRequest)), nil
}
