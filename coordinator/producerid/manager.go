// Package producerid hands out producer ids: Kafka's ProducerIdManager
// (RPCProducerIdManager), one per broker, shared by the two InitProducerId
// paths, the idempotent one (the group coordinator, which Kafka leaves to
// the transaction coordinator too) and the transactional one (the
// transaction coordinator). Ids come in blocks the controller allocates
// (AllocateProducerIds, KIP-730), so no two brokers hand out the same id.
package producerid

import (
	"context"
	"fmt"
	"log/slog"
)

// AllocateFunc asks the controller for a block of producer ids: count ids
// from first on, above every block allocated before.
type AllocateFunc func(ctx context.Context) (first int64, count int32, err error)

// Manager hands out producer ids from blocks allocated through an
// AllocateFunc. It is safe for concurrent use.
//
// Unlike Kafka's RPCProducerIdManager it does not fetch the next block
// ahead (at 90% of the current one) in the background: the caller that
// uses up a block waits for the next, and one that cannot get one gets
// the error, which the coordinators answer as COORDINATOR_LOAD_IN_PROGRESS
// (clients retry it), as Kafka does while no block is available.
type Manager struct {
	alloc AllocateFunc
	log   *slog.Logger
	sem   chan struct{} // one holder allocates or hands out at a time
	next  int64         // next id to hand out
	end   int64         // first id past the current block
}

// New returns a manager allocating blocks with alloc (nil: Generate always
// fails) and logging each block on log (nil discards).
func New(alloc AllocateFunc, log *slog.Logger) *Manager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{alloc: alloc, log: log, sem: make(chan struct{}, 1)}
}

// Generate returns the next producer id, allocating a block when the
// current one is used up (ProducerIdManager.generateProducerId). It waits
// for another caller's allocation, and stops waiting when ctx is done.
func (m *Manager) Generate(ctx context.Context) (int64, error) {
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
