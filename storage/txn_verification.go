package storage

import "github.com/strait-io/strait/storage/producer"

// StartTxnVerification takes the KIP-890 guard for a client's
// transactional write of producer pid at epoch, before the leader asks the
// transaction coordinator whether this partition is in the producer's
// transaction (producer.Manager.StartVerification). The write is then
// appended with AppendAsLeaderVerified and the guard; the guard says
// whether the coordinator must be asked at all. bumps: the producer uses
// transaction version 2 (KIP-890 part 2), so the coordinator adds the
// partition rather than confirming it.
func (l *Log) StartTxnVerification(pid int64, epoch int16, bumps bool) *producer.VerificationGuard {
	return l.producers.StartVerification(pid, epoch, bumps)
}
