package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeTransactions: v0
//
// Behavior:
// * Answered by the transaction coordinator of each id (KIP-664).

func init() {
	register(api{key: 65, min: 0, max: 0, served: servesTransactions, handle: (*Server).handleDescribeTransactions})
}

func (s *Server) handleDescribeTransactions(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Transactions.DescribeTransactions(ctx, kreq.(*kmsg.DescribeTransactionsRequest)), nil
}
