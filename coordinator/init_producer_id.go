package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// InitProducerID: v0-5
//
// Behavior:
//   - Idempotent producers (TransactionalID null) get a new producer id with
//     epoch 0 every time, also when they pass their current id and epoch
//     (v3+): Kafka bumps epochs only for transactional ids
//     (TransactionCoordinator.handleInitProducerId).
//   - A transactional id is the transaction coordinator's
//     (coordinator/txn; the broker routes it there); one reaching the
//     group coordinator answers INVALID_REQUEST.
//   - Ids come from the broker's producerid.Manager (Config.ProducerIDs,
//     shared with the transaction coordinator), in blocks from the
//     controller; while a block cannot be had the answer is
//     COORDINATOR_LOAD_IN_PROGRESS, which clients retry, as Kafka's
//     RPCProducerIdManager does.
//
// Version notes:
//   - v3: ProducerID/ProducerEpoch of a producer re-initializing (KIP-360);
//     exactly one of them unset is INVALID_REQUEST.
func (c *GroupCoordinator) InitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.Version = req.Version
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		c.log.Warn("refusing InitProducerId for a transactional producer: the broker sends those to the transaction coordinator",
			"transactional_id", *req.TransactionalID, "client_id", reqctx.From(ctx).ClientID)
		resp.ErrorCode = invalidRequest
		return resp
	}
	if req.Version >= 3 && (req.ProducerID == -1) != (req.ProducerEpoch == -1) {
		resp.ErrorCode = invalidRequest
		return resp
	}
	id, err := c.pids.Generate(ctx)
	if err != nil {
		c.log.Warn("no producer id available", "err", err)
		resp.ErrorCode = coordinatorLoadInProgress
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp
}
