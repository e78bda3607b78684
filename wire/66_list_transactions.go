package wire

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListTransactions: v0-2
//
// Behavior:
// * The transactional ids of the __transaction_state partitions this
//   broker leads (KIP-664); admin clients ask every broker.
//
// Version notes:
// * v1: DurationFilterMillis (KIP-994)
// * v2: TransactionalIdPattern (KIP-1152)

func init() {
	register(api{key: 66, min: 0, max: 2, served: servesTransactions, handle: (*Server).handleListTransactions})
}

// ListTransactions lists only the transactional ids the client may
// describe (KafkaApis.handleListTransactionsRequest).
func (s *Server) handleListTransactions(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	resp := s.svc.Transactions.ListTransactions(ctx, kreq.(*kmsg.ListTransactionsRequest))
	if c := s.auth(ctx); c.on {
		resp.TransactionStates = slices.DeleteFunc(resp.TransactionStates, func(t kmsg.ListTransactionsResponseTransactionState) bool {
			return !c.allowed(resTxnID, t.TransactionalID, opDescribe)
		})
	}
	return resp, nil
}
