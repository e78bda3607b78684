package wire

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Produce: v3-12
//
// Behavior:
// * Appended by the replica manager; acks=-1 waits for the in-sync
//   replicas, acks=1 for the leader's append, acks=0 for nothing.
// * acks=0 sends no response. When such an append fails the connection is
//   closed instead, which is how Kafka tells an acks=0 producer that
//   something went wrong (KafkaApis.handleProduceRequest).
// * A topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION: producers
//   create topics through Metadata, as with Kafka.
//
// Version notes:
// * v3: TransactionalID; record batches v2 only (the floor since Kafka 4.0,
//   KIP-896)
// * v4: KAFKA_STORAGE_ERROR
// * v5: LogStartOffset in the response
// * v7: zstd (KIP-110)
// * v8: RecordErrors and ErrorMessage (KIP-467)
// * v9: flexible versions
// * v10: CurrentLeader and NodeEndpoints on NOT_LEADER_OR_FOLLOWER (KIP-951)
// * v11, v12: no request change (KIP-890 transactions). With
//   transaction.version 2 a v12+ transactional batch adds its partition
//   to the producer's transaction (KIP-890 part 2).

// The frame is pooled: the records are appended (copied) before the
// handler returns.
func init() {
	register(api{key: 0, min: 3, max: 12, handle: (*Server).handleProduce, poolFrame: true})
}

func (s *Server) handleProduce(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ProduceRequest)
	denied := authorizeProduce(s.auth(ctx), req)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	if len(req.Topics) > 0 {
		resp = s.svc.Replicas.Produce(ctx, req)
	}
	resp.Topics = append(resp.Topics, denied...)
	if req.Acks != 0 {
		return resp, nil
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return nil, fmt.Errorf("acks=0 produce to %s-%d failed: %w", t.Topic, p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
		}
	}
	return nil, nil
}

// authorizeProduce takes the topics the request may not write out of it
// and returns their answers (KafkaApis.handleProduceRequest): a
// transactional producer needs WRITE on its transactional id, else every
// partition is TRANSACTIONAL_ID_AUTHORIZATION_FAILED; each topic needs
// WRITE, else TOPIC_AUTHORIZATION_FAILED, checked before whether the topic
// exists.
func authorizeProduce(c authCheck, req *kmsg.ProduceRequest) []kmsg.ProduceResponseTopic {
	if !c.on {
		return nil
	}
	txnDenied := req.TransactionID != nil && !c.allowed(resTxnID, *req.TransactionID, opWrite)
	var denied []kmsg.ProduceResponseTopic
	keep := req.Topics[:0]
	for _, t := range req.Topics {
		code := errTxnAuth
		if !txnDenied {
			if c.allowed(resTopic, t.Topic, opWrite) {
				keep = append(keep, t)
				continue
			}
			code = errTopicAuth
		}
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		denied = append(denied, rt)
	}
	req.Topics = keep
	return denied
}
