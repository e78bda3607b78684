package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// EndTxn: v0-5
//
// Behavior:
// * Answered by the transaction coordinator once the commit or abort is
//   prepared in __transaction_state; its markers follow.
//
// Version notes:
// * v3: flexible versions
// * v4: TRANSACTION_ABORTABLE
// * v5 (KIP-890 part 2, transaction.version 2): every end bumps the
//   producer epoch; the answer carries the producer id and epoch to go on
//   with.

func init() {
	register(api{key: 26, min: 0, max: 5, served: servesTransactions, handle: (*Server).handleEndTxn})
}

// EndTxn needs WRITE on the transactional id, else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (KafkaApis.handleEndTxnRequest).
func (s *Server) handleEndTxn(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.EndTxnRequest)
	if !s.auth(ctx).allowed(resTxnID, req.TransactionalID, opWrite) {
		return deniedResponse(req, errTxnAuth), nil
	}
	return s.svc.Transactions.EndTxn(ctx, req), nil
}
