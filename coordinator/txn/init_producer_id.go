package txn

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// InitProducerID: v0-5, for a transactional id (idempotent producers are
// the group coordinator's: coordinator.GroupCoordinator.InitProducerID).
//
// Behavior (TransactionCoordinator.handleInitProducerId):
//   - An empty transactional id is INVALID_REQUEST; a timeout of 0 or less,
//     or above transaction.max.timeout.ms, INVALID_TRANSACTION_TIMEOUT.
//   - A new id gets a producer id from the broker's producer id manager
//     at epoch 0; a known one gets its epoch bumped, which fences the
//     producers of older epochs (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH
//     from the partition leaders), or a new producer id once the epochs
//     are exhausted. Each is appended to __transaction_state before the
//     answer.
//   - An id with an ongoing transaction has it aborted first, with a bumped
//     epoch so the old producer cannot go on; the answer is
//     CONCURRENT_TRANSACTIONS, which the client retries until the abort
//     completed. So it is while a commit or abort completes, or another
//     change of the id is being appended.
//   - v3+ (KIP-360): a producer passing its id and epoch is fenced
//     (PRODUCER_FENCED) unless they are the id's current ones, or the
//     epoch before the last bump (a retry whose answer was lost), or the
//     id was just created; exactly one of them unset is INVALID_REQUEST.
//   - NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS when this broker
//     does not serve the id's partition or is loading it.
func (c *Coordinator) InitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.Version = req.Version
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	fail := func(e *kerr.Error) *kmsg.InitProducerIDResponse {
		resp.ErrorCode = e.Code
		return resp
	}
	id := ""
	if req.TransactionalID != nil {
		id = *req.TransactionalID
	}
	switch {
	case id == "":
		return fail(kerr.InvalidRequest)
	case req.TransactionTimeoutMillis <= 0 || int64(req.TransactionTimeoutMillis) > c.cfg.MaxTimeout.Milliseconds():
		return fail(kerr.InvalidTransactionTimeout)
	case req.Version >= 3 && (req.ProducerID == -1) != (req.ProducerEpoch == -1):
		return fail(kerr.InvalidRequest)
	}
	expected := req.ProducerID >= 0 && req.Version >= 3
	s, e := c.shardOf(id)
	if e != nil {
		return fail(e)
	}
	m, e := s.metadataOrNew(ctx, id, req.TransactionTimeoutMillis)
	if e != nil {
		return fail(e)
	}
	// A producer id rotation needs a new producer id, taken without the
	// shard's lock; the decision is then made again under it.
	var rotateTo int64 = -1
	for {
		s.mu.Lock()
		if s.closed || s.txns[id] != m {
			s.mu.Unlock()
			return fail(kerr.NotCoordinator)
		}
		t, abort, needID, e := s.prepareInit(m, req, expected, rotateTo)
		s.mu.Unlock()
		switch {
		case e != nil:
			return fail(e)
		case needID:
			pid, err := c.cfg.ProducerID(ctx)
			if err != nil {
				c.log.Warn("no producer id available", "err", err)
				return fail(kerr.CoordinatorLoadInProgress)
			}
			rotateTo = pid
			continue
		case abort:
			// The ongoing transaction is aborted; the producer retries.
			if e := s.write(id, t); e != nil {
				s.mu.Lock()
				m.MarkFailedFence()
				s.mu.Unlock()
				return fail(e)
			}
			return fail(kerr.ConcurrentTransactions)
		}
		if e := s.write(id, t); e != nil {
			return fail(e)
		}
		resp.ProducerID, resp.ProducerEpoch = t.ProducerID, t.ProducerEpoch
		return resp
	}
}

// metadataOrNew returns id's metadata, creating it with a new producer id
// when the id is unknown (putTransactionStateIfNotExists).
func (s *shard) metadataOrNew(ctx context.Context, id string, timeoutMs int32) (*Metadata, *kerr.Error) {
	s.mu.Lock()
	m := s.txns[id]
	s.mu.Unlock()
	if m != nil {
		return m, nil
	}
	pid, err := s.c.cfg.ProducerID(ctx)
	if err != nil {
		s.c.log.Warn("no producer id available", "err", err)
		return nil, kerr.CoordinatorLoadInProgress
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, kerr.NotCoordinator
	}
	if m = s.txns[id]; m == nil {
		m = NewMetadata(id, pid, timeoutMs, s.c.nowMs())
		s.txns[id] = m
	}
	return m, nil
}

// prepareInit decides an InitProducerId for m under the shard's lock
// (prepareInitProducerIdTransit): the transition to append, whether it is
// the abort of an ongoing transaction, or that a new producer id is needed
// first (rotateTo is the one taken, -1 before).
func (s *shard) prepareInit(m *Metadata, req *kmsg.InitProducerIDRequest, expected bool, rotateTo int64) (t Transit, abort, needID bool, e *kerr.Error) {
	if _, pending := m.Pending(); pending {
		return Transit{}, false, false, kerr.ConcurrentTransactions
	}
	validPID := m.ProducerEpoch == NoProducerEpoch || req.ProducerID == m.ProducerID ||
		(req.ProducerID == m.PrevProducerID && epochExhausted(req.ProducerEpoch))
	if expected && !validPID {
		return Transit{}, false, false, kerr.ProducerFenced
	}
	now := s.c.nowMs()
	var err error
	switch m.State {
	case PrepareAbort, PrepareCommit:
		return Transit{}, false, false, kerr.ConcurrentTransactions
	case Empty, CompleteCommit, CompleteAbort:
		if m.EpochExhausted() && (!expected || req.ProducerEpoch == m.ProducerEpoch) {
			if rotateTo < 0 {
				return Transit{}, false, true, nil
			}
			t, err = m.PrepareRotateProducerID(rotateTo, req.TransactionTimeoutMillis, now, expected)
			break
		}
		epoch := NoProducerEpoch
		if expected {
			epoch = req.ProducerEpoch
		}
		var fence *kerr.Error
		t, fence, err = m.PrepareIncrementEpoch(req.TransactionTimeoutMillis, epoch, now)
		if fence != nil {
			return Transit{}, false, false, fence
		}
	case Ongoing:
		// Abort the ongoing transaction with a bumped epoch; that epoch
		// is never handed out: the retry bumps again.
		t, err = s.prepareFencedAbortLocked(m)
		abort = true
	default:
		s.c.log.Error("transactional id in an illegal state", "transactional_id", m.TransactionalID, "state", m.State)
		return Transit{}, false, false, kerr.UnknownServerError
	}
	if err != nil {
		s.c.log.Error("preparing InitProducerId failed", "transactional_id", m.TransactionalID, "err", err)
		return Transit{}, false, false, kerr.UnknownServerError
	}
	return t, abort, false, nil
}

// prepareFencedAbortLocked fences m's producer with a bumped epoch and
// prepares the abort of its ongoing transaction at that epoch
// (prepareFenceProducerEpoch, then endTransaction's PrepareEpochFence
// branch). mu is held.
func (s *shard) prepareFencedAbortLocked(m *Metadata) (Transit, error) {
	f, err := m.PrepareFenceEpoch()
	if err != nil {
		return Transit{}, err
	}
	m.ClearPendingFence(f.ProducerEpoch)
	return m.PrepareFencedAbort(s.c.nowMs())
}
