package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// InitProducerID: v0-5
//
// Behavior:
// * Idempotent producers get a fresh producer id; transactional ids answer INVALID_REQUEST until transactions are implemented.
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
