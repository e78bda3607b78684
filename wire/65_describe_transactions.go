package wire

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeTransactions: v0
//
// Behavior:
// * Answered by the transaction coordinator of each id (KIP-664).

func init() {
	register(api{key: 65, min: 0, max: 0, served: servesTransactions, handle: (*Server).handleDescribeTransactions})
}

// DescribeTransactions needs DESCRIBE on each transactional id, else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED; the partitions of topics the
// client may not describe are left out (KafkaApis.handleDescribeTransactionsRequest).
func (s *Server) handleDescribeTransactions(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeTransactionsRequest)
	c := s.auth(ctx)
	denied := splitAllowed(&req.TransactionalIDs, func(id *string) bool { return c.allowed(resTxnID, *id, opDescribe) })
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	if len(req.TransactionalIDs) > 0 || len(denied) == 0 {
		resp = s.svc.Transactions.DescribeTransactions(ctx, req)
	}
	if c.on {
		for i := range resp.TransactionStates {
			ts := &resp.TransactionStates[i]
			ts.Topics = slices.DeleteFunc(ts.Topics, func(t kmsg.DescribeTransactionsResponseTransactionStateTopic) bool {
				return !c.allowed(resTopic, t.Topic, opDescribe)
			})
		}
	}
	for _, id := range denied {
		ts := kmsg.NewDescribeTransactionsResponseTransactionState()
		ts.TransactionalID, ts.ErrorCode = id, errTxnAuth
		resp.TransactionStates = append(resp.TransactionStates, ts)
	}
	return resp, nil
}
