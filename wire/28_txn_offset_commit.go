package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TxnOffsetCommit: v0-4
//
// Behavior:
// * Answered by the group coordinator: the offsets are written in the producer's transactional batch
//   to __consumer_offsets and stay pending, unseen by OffsetFetch, until the transaction's marker
//   commits them or drops them (KIP-98).
// * v3+ generation, member id and group instance id are checked as OffsetCommit checks them (KIP-447).
//
// Version notes:
// * v2: CommittedLeaderEpoch (KIP-320)
// * v3: GenerationID, MemberID, GroupInstanceID (KIP-447); flexible versions
// * v4: TRANSACTION_ABORTABLE (KIP-890)
// * v5 (KIP-890 part 2, transaction.version 2: the commit adds the group to the transaction itself)
//   is not served.

func init() { register(api{key: 28, min: 0, max: 4, handle: (*Server).handleTxnOffsetCommit}) }

func (s *Server) handleTxnOffsetCommit(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Groups.TxnOffsetCommit(ctx, kreq.(*kmsg.TxnOffsetCommitRequest)), nil
}
