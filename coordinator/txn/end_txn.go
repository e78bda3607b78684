package txn

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// EndTxn: v0-4
//
// Behavior (TransactionCoordinator.handleEndTransaction, the classic
// protocol: the epoch stays):
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
//   - v5 (KIP-890 part 2: the epoch is bumped on every end) needs
//     transaction.version 2, which Strait does not advertise.
func (c *Coordinator) EndTxn(ctx context.Context, req *kmsg.EndTxnRequest) *kmsg.EndTxnResponse {
	resp := kmsg.NewPtrEndTxnResponse()
	resp.Version = req.Version
	if e := c.endTxn(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit); e != nil {
		resp.ErrorCode = e.Code
	}
	return resp
}

func (c *Coordinator) endTxn(ctx context.Context, id string, pid int64, epoch int16, commit bool) *kerr.Error {
	if id == "" {
		return kerr.InvalidRequest
	}
	s, e := c.shardOf(id)
	if e != nil {
		return e
	}
	var t Transit
	write := false
	s.mu.Lock()
	e = s.whileConcurrentLocked(ctx, func() *kerr.Error {
		var e *kerr.Error
		t, write, e = s.prepareEndLocked(s.txns[id], pid, epoch, commit)
		return e
	})
	s.mu.Unlock()
	if e != nil || !write {
		return e
	}
	return s.write(id, t)
}

// prepareEndLocked decides an EndTxn under the shard's lock: the
// transition to append, or none (a retry of a completed end), or the
// error to answer.
func (s *shard) prepareEndLocked(m *Metadata, pid int64, epoch int16, commit bool) (Transit, bool, *kerr.Error) {
	switch {
	case s.closed:
		return Transit{}, false, kerr.NotCoordinator
	case m == nil || m.ProducerID != pid:
		return Transit{}, false, kerr.InvalidProducerIDMapping
	case m.ProducerEpoch != epoch:
		return Transit{}, false, kerr.ProducerFenced
	}
	if _, pending := m.Pending(); pending {
		return Transit{}, false, kerr.ConcurrentTransactions
	}
	switch m.State {
	case Ongoing:
		t, err := m.PrepareEnd(commit, s.c.nowMs())
		if err != nil {
			s.c.log.Error("preparing EndTxn failed", "transactional_id", m.TransactionalID, "err", err)
			return Transit{}, false, kerr.UnknownServerError
		}
		return t, true, nil
	case CompleteCommit:
		if commit {
			return Transit{}, false, nil
		}
	case CompleteAbort:
		if !commit {
			return Transit{}, false, nil
		}
	case PrepareCommit:
		if commit {
			return Transit{}, false, kerr.ConcurrentTransactions
		}
	case PrepareAbort:
		if !commit {
			return Transit{}, false, kerr.ConcurrentTransactions
		}
	}
	s.c.log.Debug("EndTxn in an invalid state", "transactional_id", m.TransactionalID, "state", m.State, "commit", commit)
	return Transit{}, false, kerr.InvalidTxnState
}
