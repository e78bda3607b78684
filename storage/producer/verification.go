package producer

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/record"
)

// KIP-890 (part 1): a partition leader appends a transactional batch that
// begins a transaction only once the transaction coordinator confirmed the
// partition is in the producer's ongoing transaction. Without the check a
// late write (a produce retried after its transaction was aborted, say)
// would open a transaction no marker ever closes: a hanging transaction
// that holds the last stable offset, and every read_committed consumer,
// forever.
//
// The confirmation takes a round trip to the coordinator, during which the
// transaction may end (its marker is appended here). So, as Kafka's
// ProducerStateManager does with its VerificationStateEntry, the leader
// first takes a VerificationGuard for the producer, asks the coordinator,
// and appends with the guard; the append is refused (INVALID_TXN_STATE)
// when the guard is no longer the producer's: a transaction marker of the
// producer was appended since, or the guard was used to begin a
// transaction already.

// VerificationGuard is one verification of a producer's transactional
// write, compared by identity.
type VerificationGuard struct {
	producerID int64
	epoch      int16
	// registered: the coordinator must be asked (the producer had no
	// ongoing transaction here when the guard was taken); otherwise the
	// guard only holds while that transaction is ongoing.
	registered bool
	// bumps: the producer uses transaction version 2 (KIP-890 part 2),
	// whose markers carry the epoch after the transaction's. Its guard is
	// taken before the coordinator adds the partition, which waits for
	// the previous transaction's markers; a marker of that transaction
	// (at this guard's epoch) is appended before the add is confirmed, so
	// only a marker of a later epoch ends the guard.
	bumps     bool
	createdMs int64
}

// markerOf is a transaction marker's producer and epoch.
type markerOf struct {
	producerID int64
	epoch      int16
}

// endedBy reports whether a marker of the guard's producer at epoch ends
// the guard.
func (g *VerificationGuard) endedBy(epoch int16) bool {
	return MarkerEndsVerification(epoch, g.epoch, g.bumps)
}

// MarkerEndsVerification reports whether a transaction marker of a
// producer at markerEpoch ends a verification of its write at
// verifiedEpoch: every marker in the classic protocol, where the epoch
// stays; under transaction version 2 (bumps), where a transaction's
// marker carries the epoch after its writes', only a marker of a later
// epoch than the verified write's (the one at its epoch ended the previous
// transaction). The group coordinator's guards of transactional offset
// commits follow the same rule.
func MarkerEndsVerification(markerEpoch, verifiedEpoch int16, bumps bool) bool {
	return !bumps || markerEpoch > verifiedEpoch
}

// NeedsVerification reports whether the coordinator must confirm the
// write before it is appended with this guard.
func (g *VerificationGuard) NeedsVerification() bool { return g != nil && g.registered }

// StartVerification takes the guard for a transactional write of producer
// pid at epoch (UnifiedLog.maybeStartTransactionVerification); bumps says
// the producer uses transaction version 2 (see VerificationGuard). With no
// ongoing transaction of the producer here, the producer's registered
// guard (created if none; a concurrent write of the producer shares it),
// which the coordinator must confirm; with one, a guard that holds only
// while that transaction is ongoing.
func (m *Manager) StartVerification(pid int64, epoch int16, bumps bool) *VerificationGuard {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Only a write at the ongoing transaction's epoch joins it (Kafka's
	// UnifiedLog.hasOngoingTransaction): under KIP-890 part 2 the next
	// transaction's first write, at the bumped epoch, may arrive before
	// the marker of the last one, and must wait for the coordinator.
	if e, ok := m.producers[pid]; ok && e.HasOngoingTxn() && e.ProducerEpoch == epoch {
		return &VerificationGuard{producerID: pid, epoch: epoch}
	}
	if g, ok := m.verifications[pid]; ok && g.epoch >= epoch && g.bumps == bumps {
		return g
	}
	g := &VerificationGuard{producerID: pid, epoch: epoch, registered: true, bumps: bumps, createdMs: m.clk.Now().UnixMilli()}
	m.verifications[pid] = g
	return g
}

// checkVerification refuses a transactional batch of pid that would begin
// a transaction without the producer's current guard. Under the Log's
// lock, so no marker lands between the check and the append.
func (u *Update) checkVerification(pid int64, offset int64) error {
	if u.guard == nil {
		return nil
	}
	u.m.mu.Lock()
	cur, ok := u.m.verifications[pid]
	u.m.mu.Unlock()
	if !ok || cur != u.guard || u.guard.producerID != pid {
		return record.Errorf(kerr.InvalidTxnState,
			"transactional write of producer %d at offset %d begins a transaction the coordinator has not confirmed here (it may have ended)", pid, offset)
	}
	return nil
}

// Verify makes the Update's client batches that begin a transaction
// require guard (KIP-890): nil, the default, requires nothing (the broker
// has transaction.partition.verification.enable off, or the append is not
// a client's).
func (u *Update) Verify(guard *VerificationGuard) { u.guard = guard }

// clearVerificationsLocked drops the guards a committed Update used or
// outdated: a transaction begun consumes its producer's guard, and a
// transaction marker ends the guard of its producer taken before it
// (endedBy). m.mu is held.
func (m *Manager) clearVerificationsLocked(u *Update) {
	for _, t := range u.started {
		delete(m.verifications, t.ProducerID)
	}
	for _, mk := range u.markers {
		if g, ok := m.verifications[mk.producerID]; ok && g.endedBy(mk.epoch) {
			delete(m.verifications, mk.producerID)
		}
	}
}

// removeExpiredVerificationsLocked drops guards older than the producer
// id expiration: a guard the coordinator never confirmed, or that was
// never used. m.mu is held.
func (m *Manager) removeExpiredVerificationsLocked(now time.Time) {
	limit := now.UnixMilli() - m.cfg.ProducerIDExpiration.Milliseconds()
	for pid, g := range m.verifications {
		if g.createdMs <= limit {
			delete(m.verifications, pid)
		}
	}
}
