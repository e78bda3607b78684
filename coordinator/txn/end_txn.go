package txn

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// EndTxn: v0-5
//
// Behavior (TransactionCoordinator.handleEndTransaction):
//   - An unknown id, or another producer id, is INVALID_PRODUCER_ID_MAPPING;
//     another epoch PRODUCER_FENCED; a change being appended
//     CONCURRENT_TRANSACTIONS, once it has waited Config.ConcurrentWait
//     for the change to finish (Kafka answers at once).
//   - An ongoing transaction moves to PrepareCommit or PrepareAbort; once
//     that is appended the answer is sent, and the markers are written to
//     every partition of the transaction (a retry meanwhile answers
//     CONCURRENT_TRANSACTIONS), then CompleteCommit or CompleteAbort is
//     appended.
//   - A retry of a completed end answers NONE; the other outcome, or an
//     end with no transaction (Empty), INVALID_TXN_STATE.
//
// Version notes:
//   - v3: flexible. v4: TRANSACTION_ABORTABLE may be returned.
//   - v5 (KIP-890 part 2, transaction.version 2): every end bumps the
//     producer epoch, and the answer carries the producer id and epoch of
//     the next transaction (a new producer id at epoch 0 once the epochs
//     ran out). Since the epoch moves, a retry is recognised by the epoch
//     before the bump; and an abort with no transaction ongoing is valid
//     and bumps the epoch too (the producer cannot know whether a produce
//     that failed added its partition).
func (c *Coordinator) EndTxn(ctx context.Context, req *kmsg.EndTxnRequest) *kmsg.EndTxnResponse {
	resp := kmsg.NewPtrEndTxnResponse()
	resp.Version = req.Version
	resp.ProducerID, resp.ProducerEpoch = NoProducerID, NoProducerEpoch
	end := endRequest{id: req.TransactionalID, pid: req.ProducerID, epoch: req.ProducerEpoch, commit: req.Commit,
		bump: req.Version >= 5}
	pid, epoch, e := c.endTxn(ctx, end)
	if e != nil {
		resp.ErrorCode = e.Code
	} else if end.bump {
		resp.ProducerID, resp.ProducerEpoch = pid, epoch
	}
	return resp
}

// endRequest is an EndTxn: bump is KIP-890 part 2's epoch bump (v5+).
type endRequest struct {
	id     string
	pid    int64
	epoch  int16
	commit bool
	bump   bool
}

// endTxn ends a transaction and returns the producer id and epoch the
// producer goes on with.
func (c *Coordinator) endTxn(ctx context.Context, end endRequest) (int64, int16, *kerr.Error) {
	if end.id == "" {
		return NoProducerID, NoProducerEpoch, kerr.InvalidRequest
	}
	s, e := c.shardOf(end.id)
	if e != nil {
		return NoProducerID, NoProducerEpoch, e
	}
	// Exhausted epochs need a new producer id, taken without the shard's
	// lock; the decision is then made again under it.
	nextPID := NoProducerID
	for {
		var d endDecision
		s.mu.Lock()
		e = s.whileConcurrentLocked(ctx, func() *kerr.Error {
			var e *kerr.Error
			d, e = s.prepareEndLocked(s.txns[end.id], end, nextPID)
			return e
		})
		s.mu.Unlock()
		switch {
		case e != nil:
			return NoProducerID, NoProducerEpoch, e
		case d.needPID:
			pid, err := c.cfg.ProducerID(ctx)
			if err != nil {
				c.log.Warn("no producer id available", "err", err)
				return NoProducerID, NoProducerEpoch, kerr.CoordinatorLoadInProgress
			}
			nextPID = pid
			continue
		case !d.write:
			return d.pid, d.epoch, nil
		}
		if e := s.write(end.id, d.t); e != nil {
			return NoProducerID, NoProducerEpoch, e
		}
		pid, epoch := producerAfterEnd(d.t.State, d.t.ProducerID, d.t.NextProducerID, d.t.ProducerEpoch)
		return pid, epoch, nil
	}
}

// endDecision is what prepareEndLocked decided: the transition to append
// (write), or that a new producer id is needed first (needPID), or
// neither, for a retry of a completed end, answered with pid and epoch.
type endDecision struct {
	t       Transit
	write   bool
	needPID bool
	pid     int64
	epoch   int16
}

// prepareEndLocked decides an EndTxn under the shard's lock. nextPID is
// the producer id taken for an end that exhausts the epochs, -1 before.
func (s *shard) prepareEndLocked(m *Metadata, end endRequest, nextPID int64) (endDecision, *kerr.Error) {
	if s.closed {
		return endDecision{}, kerr.NotCoordinator
	}
	if m == nil {
		return endDecision{}, kerr.InvalidProducerIDMapping
	}
	// Under KIP-890 part 2 the ended transaction's epoch is one below the
	// id's (or, once the epochs ran out, the last epoch of the previous
	// producer id), so a retry whose answer was lost carries that one.
	bumped := m.ClientTransactionVersion >= transactionVersion2
	retry := bumped && end.pid == m.ProducerID && end.epoch+1 == m.ProducerEpoch
	retryOnRotation := bumped && end.pid == m.PrevProducerID && end.epoch == lastProducerEpoch && m.ProducerEpoch == 0
	if end.pid != m.ProducerID && !retryOnRotation {
		return endDecision{}, kerr.InvalidProducerIDMapping
	}
	validEpoch := end.epoch == m.ProducerEpoch
	if bumped {
		switch m.State {
		case PrepareCommit, PrepareAbort:
			validEpoch = retry
		case CompleteCommit, CompleteAbort:
			validEpoch = validEpoch || retry || retryOnRotation
		}
	}
	if !validEpoch {
		return endDecision{}, kerr.ProducerFenced
	}
	if _, pending := m.Pending(); pending {
		return endDecision{}, kerr.ConcurrentTransactions
	}
	completed := func() (endDecision, *kerr.Error) {
		pid, epoch := m.AnswerAfterEnd()
		return endDecision{pid: pid, epoch: epoch}, nil
	}
	switch m.State {
	case Ongoing:
		return s.prepareEndTransitLocked(m, end, nextPID)
	case CompleteCommit, CompleteAbort:
		// In the classic protocol the same epoch is the retry; under
		// KIP-890 part 2 it is the next transaction's, which may only
		// be aborted (empty).
		if !bumped || retry || retryOnRotation {
			if end.commit == (m.State == CompleteCommit) {
				return completed()
			}
			break
		}
		if end.bump && !end.commit {
			return s.prepareEndTransitLocked(m, end, nextPID)
		}
	case PrepareCommit, PrepareAbort:
		if end.commit == (m.State == PrepareCommit) {
			return endDecision{}, kerr.ConcurrentTransactions
		}
	case Empty:
		if end.bump && !end.commit {
			return s.prepareEndTransitLocked(m, end, nextPID)
		}
	}
	s.c.log.Debug("EndTxn in an invalid state", "transactional_id", m.TransactionalID, "state", m.State, "commit", end.commit)
	return endDecision{}, kerr.InvalidTxnState
}

// prepareEndTransitLocked prepares the PrepareCommit or PrepareAbort of
// end, or asks for a new producer id first when the bump would exhaust
// the epochs.
func (s *shard) prepareEndTransitLocked(m *Metadata, end endRequest, nextPID int64) (endDecision, *kerr.Error) {
	rotate := end.bump && m.EpochExhausted()
	if rotate && nextPID < 0 {
		return endDecision{needPID: true}, nil
	}
	if !rotate {
		nextPID = NoProducerID
	}
	t, err := m.PrepareEnd(end.commit, end.bump, nextPID, s.c.nowMs())
	if err != nil {
		s.c.log.Error("preparing EndTxn failed", "transactional_id", m.TransactionalID, "err", err)
		return endDecision{}, kerr.UnknownServerError
	}
	return endDecision{t: t, write: true}, nil
}
