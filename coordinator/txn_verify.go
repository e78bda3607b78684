package coordinator

import (
	"context"
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/producer"
)

// KIP-890 for TxnOffsetCommit: before a transactional offset commit is
// written, the transaction coordinator confirms that the group's
// __consumer_offsets partition is in the producer's ongoing transaction
// (Kafka's GroupCoordinatorService verifies it as a partition leader
// verifies a transactional produce). Without the check, a commit of a
// producer that skipped AddOffsetsToTxn, or one arriving after its
// transaction ended, opens a transaction on __consumer_offsets that no
// marker closes: its partition's last stable offset stops, and stable
// offset fetches answer UNSTABLE_OFFSET_COMMIT for good.
//
// The transaction may end while the coordinator is asked: its marker is
// written by this shard (CompleteTransaction). So the commit takes a
// txnGuard of its producer before asking, every marker of the producer
// decided meanwhile marks the guards taken, and a marked guard refuses the
// commit, as the partition leader's storage guard refuses a late produce.

// TxnVerifier confirms a partition is in a producer's ongoing transaction:
// nil when it is, else the transaction coordinator's error
// (TRANSACTION_ABORTABLE when it is not, PRODUCER_FENCED, ...) or why it
// could not be asked. With add it adds the partition to the transaction
// instead (KIP-890 part 2: TxnOffsetCommit v5 under transaction.version 2,
// whose producer sends no AddOffsetsToTxn). The broker adapts it to its
// transaction coordinator.
type TxnVerifier func(ctx context.Context, transactionalID string, producerID int64, producerEpoch int16, tp storage.TopicPartition, add bool) error

// txnGuard is one producer's commits waiting for the coordinator, at an
// epoch.
type txnGuard struct {
	epoch int16
	// bumps: the commits add the partition under transaction version 2,
	// whose markers carry the epoch after the transaction's. The add
	// waits for the previous transaction's markers, one of which (at this
	// guard's epoch) may be decided meanwhile; only a later epoch's marker
	// ends such a guard (as the partition leader's storage guard).
	bumps  bool
	users  int
	marked bool // a marker of the producer that ends the guard was decided since
}

// txnGuards are a shard's guards by producer id, kept only while a
// verification is under way. Under the shard's mutex.
type txnGuards map[int64][]*txnGuard

func (g txnGuards) take(pid int64, epoch int16, bumps bool) *txnGuard {
	for _, t := range g[pid] {
		if t.epoch == epoch && t.bumps == bumps && !t.marked {
			t.users++
			return t
		}
	}
	t := &txnGuard{epoch: epoch, bumps: bumps, users: 1}
	g[pid] = append(g[pid], t)
	return t
}

func (g txnGuards) release(pid int64, t *txnGuard) {
	if t.users--; t.users > 0 {
		return
	}
	ts := slices.DeleteFunc(g[pid], func(o *txnGuard) bool { return o == t })
	if len(ts) == 0 {
		delete(g, pid)
	} else {
		g[pid] = ts
	}
}

// markerDecided marks the guards of pid a marker at epoch ends: its
// transaction ended, a commit verified before that is not part of the
// next one.
func (g txnGuards) markerDecided(pid int64, epoch int16) {
	for _, t := range g[pid] {
		if producer.MarkerEndsVerification(epoch, t.epoch, t.bumps) {
			t.marked = true
		}
	}
}

// verifiedCommit is a transactional commit the coordinator confirmed: the
// shard that took its guard, and the guard.
type verifiedCommit struct {
	s     *shard
	guard *txnGuard
}

// verifyTxnCommit asks the transaction coordinator about oc before it is
// written, when a verifier is set. It returns the guard to check under the
// shard's lock with stillVerified, or the code to answer every partition
// with.
func (c *GroupCoordinator) verifyTxnCommit(ctx context.Context, oc *offsetCommit) (*verifiedCommit, int16) {
	if c.cfg.VerifyTransaction == nil || !oc.transactional ||
		(!oc.addToTxn && c.cfg.VerifyTransactionEnabled != nil && !c.cfg.VerifyTransactionEnabled()) {
		return nil, 0
	}
	s, code := c.lockShard(oc.group)
	if code != 0 {
		return nil, code
	}
	v := &verifiedCommit{s: s, guard: s.txnGuards.take(oc.producer.ID, oc.producer.Epoch, oc.addToTxn)}
	s.mu.Unlock()
	tp := storage.TopicPartition{Topic: OffsetsTopic, Partition: PartitionFor(oc.group, c.cfg.NumPartitions)}
	if err := c.cfg.VerifyTransaction(ctx, oc.transactionalID, oc.producer.ID, oc.producer.Epoch, tp, oc.addToTxn); err != nil {
		v.done(oc.producer.ID)
		return nil, txnVerificationCode(err, oc.apiVersion)
	}
	return v, 0
}

// stillVerified reports, with cur's lock held, whether the commit may be
// written: no marker of the producer was decided since it was verified,
// on the shard that is still the partition's. It releases the guard.
func (v *verifiedCommit) stillVerified(cur *shard, pid int64) bool {
	if v == nil {
		return true
	}
	ok := cur == v.s && !v.guard.marked
	if cur == v.s {
		v.s.txnGuards.release(pid, v.guard)
	} else {
		v.done(pid)
	}
	return ok
}

// done releases the guard on its shard.
func (v *verifiedCommit) done(pid int64) {
	v.s.mu.Lock()
	v.s.txnGuards.release(pid, v.guard)
	v.s.mu.Unlock()
}

// txnVerificationCode is what a TxnOffsetCommit of the version the
// coordinator did not confirm answers (AddPartitionsToTxnManager's
// conversions): TRANSACTION_ABORTABLE when the partition is not in the
// transaction, INVALID_TXN_STATE to v0-3, which do not know it (KIP-890:
// v4 is the first that may get it); INVALID_PRODUCER_EPOCH for a fenced
// producer; and the retriable COORDINATOR_NOT_AVAILABLE when the
// coordinator could not say.
func txnVerificationCode(err error, version int16) int16 {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kerr.CoordinatorNotAvailable.Code
	}
	switch ke {
	case kerr.TransactionAbortable:
		if version >= 4 {
			return ke.Code
		}
		return kerr.InvalidTxnState.Code
	case kerr.InvalidTxnState:
		return kerr.InvalidTxnState.Code
	case kerr.ProducerFenced, kerr.InvalidProducerEpoch:
		return kerr.InvalidProducerEpoch.Code
	case kerr.InvalidProducerIDMapping:
		return ke.Code
	}
	return kerr.CoordinatorNotAvailable.Code
}
