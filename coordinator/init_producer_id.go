package coordinator

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/wire/reqctx"
)

// InitProducerID: v0-5
//
// Behavior:
//   - Idempotent producers (TransactionalID null) get a new producer id with
//     epoch 0 every time, also when they pass their current id and epoch
//     (v3+): Kafka bumps epochs only for transactional ids
//     (TransactionCoordinator.handleInitProducerId).
//   - A transactional id answers INVALID_REQUEST: transactions are not
//     supported yet, and Kafka's TRANSACTIONAL_ID_AUTHORIZATION_FAILED
//     would send users looking for ACLs.
//   - Ids come in blocks from the controller; while a block cannot be had
//     the answer is COORDINATOR_LOAD_IN_PROGRESS, which clients retry, as
//     Kafka's RPCProducerIdManager does.
//
// Version notes:
//   - v3: ProducerID/ProducerEpoch of a producer re-initializing (KIP-360);
//     exactly one of them unset is INVALID_REQUEST.
func (c *GroupCoordinator) InitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.Version = req.Version
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if req.TransactionalID != nil {
		c.log.Warn("refusing InitProducerId for a transactional producer: transactions are not supported yet",
			"transactional_id", *req.TransactionalID, "client_id", reqctx.From(ctx).ClientID)
		resp.ErrorCode = invalidRequest
		return resp
	}
	if req.Version >= 3 && (req.ProducerID == -1) != (req.ProducerEpoch == -1) {
		resp.ErrorCode = invalidRequest
		return resp
	}
	id, err := c.pids.generate(ctx)
	if err != nil {
		c.log.Warn("no producer id available", "err", err)
		resp.ErrorCode = coordinatorLoadInProgress
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp
}

// producerIDManager hands out producer ids from blocks allocated by the
// controller (Kafka's ProducerIdManager).
type producerIDManager struct {
	alloc func(ctx context.Context) (first int64, count int32, err error)
	log   *slog.Logger
	sem   chan struct{} // one holder allocates or hands out at a time
	next  int64         // next id to hand out
	end   int64         // first id past the current block
}

func newProducerIDManager(alloc func(ctx context.Context) (int64, int32, error), log *slog.Logger) *producerIDManager {
	return &producerIDManager{alloc: alloc, log: log, sem: make(chan struct{}, 1)}
}

// generate returns the next producer id, allocating a block when the
// current one is used up.
func (m *producerIDManager) generate(ctx context.Context) (int64, error) {
	select {
	case m.sem <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { <-m.sem }()
	if m.next >= m.end {
		if m.alloc == nil {
			return 0, fmt.Errorf("coordinator: no producer id allocator configured")
		}
		first, count, err := m.alloc(ctx)
		if err != nil {
			return 0, fmt.Errorf("coordinator: allocating a producer id block: %w", err)
		}
		if first < 0 || count <= 0 || first < m.end {
			return 0, fmt.Errorf("coordinator: invalid producer id block [%d, +%d) after %d", first, count, m.end)
		}
		m.next, m.end = first, first+int64(count)
		m.log.Info("allocated a producer id block", "first", first, "count", count)
	}
	id := m.next
	m.next++
	return id, nil
}
