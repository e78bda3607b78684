package txn

// The coordinator's periodic work (TransactionCoordinator.startup's
// scheduled tasks): aborting transactions past their timeout every
// transaction.abort.timed.out.transaction.cleanup.interval.ms, and
// removing transactional ids idle for transactional.id.expiration.ms every
// transaction.remove.expired.transaction.cleanup.interval.ms.

// abortTimedOut aborts, with a bumped epoch that fences their producer,
// the ongoing transactions older than their timeout
// (abortTimedOutTransactions): a producer that died or hangs inside a
// transaction would otherwise hold its partitions' last stable offset,
// and every read_committed consumer behind it, forever.
func (c *Coordinator) abortTimedOut() {
	now := c.nowMs()
	for _, s := range c.loadedShards() {
		type abort struct {
			id string
			m  *Metadata
			t  Transit
		}
		var aborts []abort
		s.mu.Lock()
		for id, m := range s.txns {
			if _, pending := m.Pending(); pending || m.State != Ongoing || m.StartMs+int64(m.TimeoutMs) >= now {
				continue
			}
			t, err := s.prepareFencedAbortLocked(m)
			if err != nil {
				c.log.Error("preparing the abort of a timed out transaction failed", "transactional_id", id, "err", err)
				continue
			}
			aborts = append(aborts, abort{id, m, t})
		}
		s.mu.Unlock()
		for _, a := range aborts {
			c.log.Info("aborting a transaction that exceeded its timeout", "transactional_id", a.id, "producer_id", a.t.ProducerID,
				"fenced_epoch", a.t.ProducerEpoch, "timeout_ms", a.t.TimeoutMs)
			if e := s.write(a.id, a.t); e != nil {
				s.mu.Lock()
				a.m.MarkFailedFence()
				s.mu.Unlock()
				c.log.Warn("aborting a timed out transaction failed; retrying at the next scan", "transactional_id", a.id, "err", e)
			}
		}
	}
}

// expireIDs removes the transactional ids without a transaction whose last
// change is older than transactional.id.expiration.ms
// (removeExpiredTransactionalIds): a tombstone is appended, and the id
// starts afresh if it is used again.
func (c *Coordinator) expireIDs() {
	now := c.nowMs()
	limit := c.cfg.IDExpiration.Milliseconds()
	for _, s := range c.loadedShards() {
		type expiry struct {
			id string
			t  Transit
		}
		var expired []expiry
		s.mu.Lock()
		for id, m := range s.txns {
			if _, pending := m.Pending(); pending || m.LastUpdateMs+limit > now {
				continue
			}
			switch m.State {
			case Empty, CompleteCommit, CompleteAbort:
			default:
				continue
			}
			t, err := m.PrepareDead()
			if err != nil {
				c.log.Error("preparing the expiry of a transactional id failed", "transactional_id", id, "err", err)
				continue
			}
			expired = append(expired, expiry{id, t})
		}
		s.mu.Unlock()
		for _, x := range expired {
			if e := s.write(x.id, x.t); e != nil {
				c.log.Warn("expiring a transactional id failed; retrying at the next scan", "transactional_id", x.id, "err", e)
				continue
			}
			c.log.Info("expired a transactional id", "transactional_id", x.id)
		}
	}
}
