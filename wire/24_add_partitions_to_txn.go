package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
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
// * v5: TRANSACTION_ABORTABLE; without VerifyOnly, a partition leader adds
//   the partitions of a transaction version 2 producer (KIP-890 part 2)

func init() {
	register(api{key: 24, min: 0, max: 5, served: servesTransactions, handle: (*Server).handleAddPartitionsToTxn})
}

// AddPartitionsToTxn (KafkaApis.handleAddPartitionsToTxnRequest): a
// client's request (v0-3) needs WRITE on the transactional id, else every
// partition is TRANSACTIONAL_ID_AUTHORIZATION_FAILED, and WRITE on each
// topic, else its partitions are TOPIC_AUTHORIZATION_FAILED and the others
// OPERATION_NOT_ATTEMPTED. The batched v4+, which only brokers send (to
// verify a transaction), needs CLUSTER_ACTION.
func (s *Server) handleAddPartitionsToTxn(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AddPartitionsToTxnRequest)
	c := s.auth(ctx)
	if !c.on {
		return s.svc.Transactions.AddPartitionsToTxn(ctx, req), nil
	}
	if req.Version >= 4 {
		if !c.cluster(opClusterAction) {
			return deniedResponse(req, errClusterAuth), nil
		}
		return s.svc.Transactions.AddPartitionsToTxn(ctx, req), nil
	}
	txnOK := c.allowed(resTxnID, req.TransactionalID, opWrite)
	topicDenied := false
	for _, t := range req.Topics {
		topicDenied = topicDenied || !c.allowed(resTopic, t.Topic, opWrite)
	}
	if txnOK && !topicDenied {
		return s.svc.Transactions.AddPartitionsToTxn(ctx, req), nil
	}
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	for _, t := range req.Topics {
		code := errTxnAuth
		if txnOK {
			code = kerr.OperationNotAttempted.Code
			if !c.allowed(resTopic, t.Topic, opWrite) {
				code = errTopicAuth
			}
		}
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
