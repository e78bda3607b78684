package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// InitProducerID: v0-5
//
// Behavior:
// * Idempotent producers get a fresh producer id (the group coordinator's
//   producer id manager); transactional ids are the transaction
//   coordinator's (coordinator/txn), which bumps their epoch.
//
// Version notes:
// * v2: flexible versions
// * v3: ProducerID and ProducerEpoch for epoch bumps (KIP-360)
// * v4: PRODUCER_FENCED
// * v5: TRANSACTION_ABORTABLE

func init() { register(api{key: 22, min: 0, max: 5, handle: (*Server).handleInitProducerID}) }

// InitProducerId: a transactional producer needs WRITE on its id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); an idempotent one needs
// IDEMPOTENT_WRITE on the cluster or WRITE on some topic
// (CLUSTER_AUTHORIZATION_FAILED) (KafkaApis.handleInitProducerIdRequest).
func (s *Server) handleInitProducerID(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.InitProducerIDRequest)
	c := s.auth(ctx)
	if req.TransactionalID != nil {
		if !c.allowed(resTxnID, *req.TransactionalID, opWrite) {
			return deniedResponse(req, errTxnAuth), nil
		}
	} else if !c.cluster(opIdempotentWrite) && !c.allowedAny(resTopic, opWrite) {
		return deniedResponse(req, errClusterAuth), nil
	}
	return s.svc.Producers.InitProducerID(ctx, req), nil
}
