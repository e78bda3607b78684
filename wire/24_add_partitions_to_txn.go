package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AddPartitionsToTxn: v0-5
//
// Behavior:
// * Answered by the transaction coordinator (coordinator/txn), which
//   records the partitions in the transaction before a producer writes to
//   them.
//
// Version notes:
// * v3: flexible versions
// * v4: batched transactions with VerifyOnly, sent by partition leaders
//   (KIP-890)
// * v5: TRANSACTION_ABORTABLE

func init() {
	register(api{key: 24, min: 0, max: 5, served: servesTransactions, handle: (*Server).handleAddPartitionsToTxn})
}

func (s *Server) handleAddPartitionsToTxn(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Transactions.AddPartitionsToTxn(ctx, kreq.(*kmsg.AddPartitionsToTxnRequest)), nil
}
