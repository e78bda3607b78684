package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TxnOffsetCommit: v0-5
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
// * v5 (KIP-890 part 2): with transaction.version 2 the commit adds the group's partition to the
//   transaction itself.

func init() { register(api{key: 28, min: 0, max: 5, handle: (*Server).handleTxnOffsetCommit}) }

// TxnOffsetCommit needs WRITE on the transactional id, then READ on the
// group, else every partition is TRANSACTIONAL_ID_ or
// GROUP_AUTHORIZATION_FAILED; and READ on each topic, else its partitions
// are TOPIC_AUTHORIZATION_FAILED (KafkaApis.handleTxnOffsetCommitRequest).
func (s *Server) handleTxnOffsetCommit(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.TxnOffsetCommitRequest)
	c := s.auth(ctx)
	code := int16(0)
	switch {
	case !c.allowed(resTxnID, req.TransactionalID, opWrite):
		code = errTxnAuth
	case !c.allowed(resGroup, req.Group, opRead):
		code = errGroupAuth
	}
	denied := splitAllowed(&req.Topics, func(t *kmsg.TxnOffsetCommitRequestTopic) bool {
		return code == 0 && c.allowed(resTopic, t.Topic, opRead)
	})
	if code == 0 {
		code = errTopicAuth
	}
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	if len(req.Topics) > 0 || len(denied) == 0 {
		resp = s.svc.Groups.TxnOffsetCommit(ctx, req)
	}
	for _, t := range denied {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
