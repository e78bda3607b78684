package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AddOffsetsToTxn: v0-4
//
// Behavior:
// * Answered by the transaction coordinator: the group's __consumer_offsets
//   partition joins the transaction, so its markers make the group's
//   transactional offset commits visible or drop them.
//
// Version notes:
// * v3: flexible versions
// * v4: TRANSACTION_ABORTABLE

func init() {
	register(api{key: 25, min: 0, max: 4, served: servesTransactions, handle: (*Server).handleAddOffsetsToTxn})
}

func (s *Server) handleAddOffsetsToTxn(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Transactions.AddOffsetsToTxn(ctx, kreq.(*kmsg.AddOffsetsToTxnRequest)), nil
}
