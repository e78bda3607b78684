package wire

import (
	"context"

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

func (s *Server) handleListTransactions(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Transactions.ListTransactions(ctx, kreq.(*kmsg.ListTransactionsRequest)), nil
}
