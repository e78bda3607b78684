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

func (s *Server) handleInitProducerID(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Producers.InitProducerID(ctx, kreq.(*kmsg.InitProducerIDRequest)), nil
}
