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

	g := l.StartTxnVerification(pid, epoch)
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
	g = l.StartTxnVerification(pid, epoch)
	if err := write(g); err != nil {
		t.Fatal(err)
	}
	inTxn := l.StartTxnVerification(pid, epoch)
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
	g = l.StartTxnVerification(pid, epoch)
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
