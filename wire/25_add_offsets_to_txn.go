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

// AddOffsetsToTxn needs WRITE on the transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and READ on the group
// (GROUP_AUTHORIZATION_FAILED) (KafkaApis.handleAddOffsetsToTxnRequest).
func (s *Server) handleAddOffsetsToTxn(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AddOffsetsToTxnRequest)
	c := s.auth(ctx)
	if !c.allowed(resTxnID, req.TransactionalID, opWrite) {
		return deniedResponse(req, errTxnAuth), nil
	}
	if !c.allowed(resGroup, req.Group, opRead) {
		return deniedResponse(req, errGroupAuth), nil
	}
	return s.svc.Transactions.AddOffsetsToTxn(ctx, req), nil
}
