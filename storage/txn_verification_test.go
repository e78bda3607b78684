package storage

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/producer"
	"github.com/strait-io/strait/storage/record"
)

// TestTxnVerificationGuard: KIP-890's guard on the leader. A
// transactional batch that begins a transaction is appended only with the
// producer's current guard; a transaction marker appended since the guard
// was taken (the transaction ended while the coordinator was asked), or a
// transaction begun with it already, make it refuse; a write into an
// ongoing transaction holds only while that transaction is ongoing.
func TestTxnVerificationGuard(t *testing.T) {
	e := newTestEnv(t)
	l, _ := e.open(e.options(true))
	defer l.Close()
	const pid, epoch = 7, 0
	seq := int32(0)
	// write appends a transactional batch of two records with guard (nil:
	// unverified); the sequence moves on only when it was appended.
	write := func(guard *producer.VerificationGuard) error {
		b := e.batch(record.BatchSpec{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, Transactional: true}, 2, 8)
		_, err := l.AppendAsLeaderVerified(b, 0, record.OriginClient, guard)
		if err == nil {
			seq += 2
		}
		return err
	}
	marker := func(commit bool) {
		t.Helper()
		b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: pid, ProducerEpoch: epoch, Timestamp: e.clock.Now().UnixMilli()}, commit, 0)
		if _, err := l.AppendAsLeader(b, 0, record.OriginCoordinator); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(what string, err error) {
		t.Helper()
		var re *record.Error
		if !errors.As(err, &re) || re.Code != kerr.InvalidTxnState {
			t.Fatalf("%s: %v, want INVALID_TXN_STATE", what, err)
		}
	}

	g := l.StartTxnVerification(pid, epoch, false)
	if !g.NeedsVerification() {
		t.Fatal("no transaction is ongoing, yet the coordinator need not be asked")
	}
	if err := write(g); err != nil {
		t.Fatalf("verified write: %v", err)
	}
	// The guard began the transaction: it is spent.
	marker(false)
	err := write(g)
	refused("a spent guard", err)

	// Within an ongoing transaction the guard needs no coordinator, and
	// holds only while that transaction is ongoing.
	g = l.StartTxnVerification(pid, epoch, false)
	if err := write(g); err != nil {
		t.Fatal(err)
	}
	inTxn := l.StartTxnVerification(pid, epoch, false)
	if inTxn.NeedsVerification() {
		t.Fatal("a write into an ongoing transaction asks the coordinator")
	}
	if err := write(inTxn); err != nil {
		t.Fatal(err)
	}
	marker(true)
	err = write(inTxn)
	refused("a late write into an ended transaction", err)

	// The transaction ends while the coordinator is asked.
	g = l.StartTxnVerification(pid, epoch, false)
	marker(false)
	err = write(g)
	refused("a guard taken before a marker", err)

	// Without a guard (verification disabled) nothing is checked.
	if err := write(nil); err != nil {
		t.Fatalf("unverified write: %v", err)
	}
	if lso := l.LastStableOffset(); lso >= l.LogEndOffset() {
		t.Fatalf("the unverified write left no open transaction: LSO %d, LEO %d", lso, l.LogEndOffset())
	}
}

// TestTxnVerificationGuardBumpedEpoch: KIP-890 part 2, where every
// transaction ends with a marker at the epoch after its writes' and the
// next transaction is written at that epoch. The next transaction's first
// write, arriving before the last one's marker, does not join the ongoing
// transaction but waits for the coordinator; the last transaction's marker
// (at the guard's epoch) does not end its guard, while a later epoch's
// does.
func TestTxnVerificationGuardBumpedEpoch(t *testing.T) {
	e := newTestEnv(t)
	l, _ := e.open(e.options(true))
	defer l.Close()
	const pid = 8
	write := func(epoch int16, guard *producer.VerificationGuard) error {
		b := e.batch(record.BatchSpec{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: 0, Transactional: true}, 2, 8)
		_, err := l.AppendAsLeaderVerified(b, 0, record.OriginClient, guard)
		return err
	}
	marker := func(epoch int16, commit bool) {
		t.Helper()
		b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: pid, ProducerEpoch: epoch, Timestamp: e.clock.Now().UnixMilli()}, commit, 0)
		if _, err := l.AppendAsLeader(b, 0, record.OriginCoordinator); err != nil {
			t.Fatal(err)
		}
	}

	if err := write(0, l.StartTxnVerification(pid, 0, true)); err != nil {
		t.Fatalf("first transaction: %v", err)
	}
	next := l.StartTxnVerification(pid, 1, true)
	if !next.NeedsVerification() {
		t.Fatal("a write at the next epoch joins the ongoing transaction of the last one")
	}
	marker(1, true) // the last transaction ends, at the bumped epoch
	if err := write(1, next); err != nil {
		t.Fatalf("the next transaction's write, after the last one's marker: %v", err)
	}
	marker(2, true)

	late := l.StartTxnVerification(pid, 2, true)
	marker(3, false) // the coordinator fenced and aborted epoch 2's transaction
	var re *record.Error
	if err := write(2, late); !errors.As(err, &re) || re.Code != kerr.InvalidTxnState {
		t.Fatalf("a guard taken before a later epoch's marker: %v, want INVALID_TXN_STATE", err)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
	if lso := l.LastStableOffset(); lso != l.LogEndOffset() {
		t.Fatalf("a transaction was left open: LSO %d, LEO %d", lso, l.LogEndOffset())
	}
}
