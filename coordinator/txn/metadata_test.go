package txn

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage"
)

func tp(topic string, p int32) storage.TopicPartition {
	return storage.TopicPartition{Topic: topic, Partition: p}
}

// apply prepares with prep and completes, failing the test on an error.
func apply(t *testing.T, m *Metadata, prep func() (Transit, error)) Transit {
	t.Helper()
	tr, err := prep()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Complete(tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestTransitionTable pins Kafka's TransactionState.validPreviousStates
// (with KIP-890 part 2's abort of no ongoing transaction).
func TestTransitionTable(t *testing.T) {
	all := []State{Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence}
	want := map[[2]State]bool{
		{Empty, Empty}: true, {CompleteCommit, Empty}: true, {CompleteAbort, Empty}: true,
		{Ongoing, Ongoing}: true, {Empty, Ongoing}: true, {CompleteCommit, Ongoing}: true, {CompleteAbort, Ongoing}: true,
		{Ongoing, PrepareCommit}: true,
		{Ongoing, PrepareAbort}:  true, {PrepareEpochFence, PrepareAbort}: true,
		{Empty, PrepareAbort}: true, {CompleteCommit, PrepareAbort}: true, {CompleteAbort, PrepareAbort}: true,
		{PrepareCommit, CompleteCommit}: true,
		{PrepareAbort, CompleteAbort}:   true,
		{Empty, Dead}:                   true, {CompleteAbort, Dead}: true, {CompleteCommit, Dead}: true,
		{Ongoing, PrepareEpochFence}: true,
	}
	for _, from := range all {
		for _, to := range all {
			if got := validTransition(from, to); got != want[[2]State{from, to}] {
				t.Errorf("%s -> %s: valid %v", from, to, got)
			}
		}
	}
}

// TestTransactionLifecycle walks one id through InitProducerId, a committed
// and an aborted transaction, as the coordinator drives it.
func TestTransactionLifecycle(t *testing.T) {
	m := NewMetadata("app", 7000, 60000, 100)
	tr, kerrc, err := m.PrepareIncrementEpoch(60000, -1, 101)
	if err != nil || kerrc != nil {
		t.Fatal(err, kerrc)
	}
	if _, _, err := m.PrepareIncrementEpoch(60000, -1, 101); err == nil {
		t.Fatal("a second transition was prepared while one was pending")
	}
	if st, ok := m.Pending(); !ok || st != Empty {
		t.Fatalf("pending %v %v", st, ok)
	}
	if err := m.Complete(tr); err != nil {
		t.Fatal(err)
	}
	if m.ProducerEpoch != 0 || m.State != Empty || m.StartMs != -1 {
		t.Fatalf("after init: %+v", m)
	}

	apply(t, m, func() (Transit, error) { return m.PrepareAddPartitions([]storage.TopicPartition{tp("a", 0)}, 0, 200) })
	apply(t, m, func() (Transit, error) { return m.PrepareAddPartitions([]storage.TopicPartition{tp("b", 1)}, 0, 210) })
	if m.State != Ongoing || m.StartMs != 200 || len(m.Partitions) != 2 || !m.HasPartition(tp("b", 1)) {
		t.Fatalf("ongoing: %+v", m)
	}
	apply(t, m, func() (Transit, error) { return m.PrepareEnd(true, false, NoProducerID, 300) })
	if m.State != PrepareCommit || len(m.Partitions) != 2 {
		t.Fatalf("prepare commit: %+v", m)
	}
	apply(t, m, func() (Transit, error) { return m.PrepareComplete(310) })
	if m.State != CompleteCommit || len(m.Partitions) != 0 || m.ProducerEpoch != 0 {
		t.Fatalf("complete commit: %+v", m)
	}

	// The next transaction starts anew; an abort completes as CompleteAbort.
	apply(t, m, func() (Transit, error) { return m.PrepareAddPartitions([]storage.TopicPartition{tp("a", 0)}, 0, 400) })
	if m.StartMs != 400 {
		t.Fatalf("start %d", m.StartMs)
	}
	apply(t, m, func() (Transit, error) { return m.PrepareEnd(false, false, NoProducerID, 500) })
	apply(t, m, func() (Transit, error) { return m.PrepareComplete(510) })
	if m.State != CompleteAbort {
		t.Fatalf("state %s", m.State)
	}
	if _, err := m.PrepareEnd(true, false, NoProducerID, 600); err == nil {
		t.Fatal("ended a transaction that is not ongoing")
	}
}

// TestInitProducerIDEpochs: KIP-360's expected epoch, a retried bump whose
// answer was lost, fencing a zombie, and exhaustion.
func TestInitProducerIDEpochs(t *testing.T) {
	m := NewMetadata("app", 1, 1000, 0)
	apply(t, m, func() (Transit, error) { tr, _, err := m.PrepareIncrementEpoch(1000, -1, 1); return tr, err })
	apply(t, m, func() (Transit, error) { tr, _, err := m.PrepareIncrementEpoch(1000, 0, 2); return tr, err })
	if m.ProducerEpoch != 1 || m.LastProducerEpoch != 0 {
		t.Fatalf("epoch %d last %d", m.ProducerEpoch, m.LastProducerEpoch)
	}
	// The producer at epoch 0 retries: its bump already happened.
	apply(t, m, func() (Transit, error) { tr, _, err := m.PrepareIncrementEpoch(1000, 0, 3); return tr, err })
	if m.ProducerEpoch != 1 {
		t.Fatalf("a retried bump moved the epoch to %d", m.ProducerEpoch)
	}
	// Any other epoch is a zombie's.
	if _, kerrc, err := m.PrepareIncrementEpoch(1000, 5, 4); err != nil || kerrc != kerr.ProducerFenced {
		t.Fatalf("zombie: %v %v", kerrc, err)
	}
	if _, ok := m.Pending(); ok {
		t.Fatal("a refused bump left a pending transition")
	}

	// Fencing an ongoing transaction bumps the epoch once, even when the
	// first fence's append failed and it is prepared again.
	apply(t, m, func() (Transit, error) { return m.PrepareAddPartitions([]storage.TopicPartition{tp("a", 0)}, 0, 10) })
	f, err := m.PrepareFenceEpoch()
	if err != nil || f.ProducerEpoch != 2 || f.State != PrepareEpochFence {
		t.Fatalf("fence %+v %v", f, err)
	}
	m.ClearPendingFence(f.ProducerEpoch)
	if m.ProducerEpoch != 2 {
		t.Fatalf("fenced epoch %d", m.ProducerEpoch)
	}
	ab, err := m.PrepareEnd(false, false, NoProducerID, 20)
	if err != nil || ab.ProducerEpoch != 2 || ab.State != PrepareAbort {
		t.Fatalf("abort %+v %v", ab, err)
	}
	m.Abandon()
	m.MarkFailedFence()
	f2, err := m.PrepareFenceEpoch()
	if err != nil || f2.ProducerEpoch != 2 {
		t.Fatalf("second fence after a failed one: %+v %v", f2, err)
	}
	m.Abandon()

	// Exhausted epochs rotate the producer id.
	x := NewMetadata("x", 9, 1000, 0)
	x.ProducerEpoch, x.State = 1<<15-2, CompleteCommit
	if !x.EpochExhausted() {
		t.Fatal("epoch 32766 not exhausted")
	}
	if _, _, err := x.PrepareIncrementEpoch(1000, -1, 1); err == nil {
		t.Fatal("bumped an exhausted epoch")
	}
	apply(t, x, func() (Transit, error) { return x.PrepareRotateProducerID(10, 1000, 2, true) })
	if x.ProducerID != 10 || x.ProducerEpoch != 0 || x.LastProducerEpoch != 1<<15-2 || x.PrevProducerID != 9 {
		t.Fatalf("rotated: %+v", x)
	}
}

// TestRecordLayout pins Kafka's bytes: TransactionLogKey v0 is the
// version then the id as a string; TransactionLogValue v0 has a null
// partition array while Empty.
func TestRecordLayout(t *testing.T) {
	key := encodeKey("app")
	if !bytes.Equal(key, []byte{0, 0, 0, 3, 'a', 'p', 'p'}) {
		t.Fatalf("key % x", key)
	}
	m := NewMetadata("app", 42, 60000, 5)
	tr, _, err := m.PrepareIncrementEpoch(60000, -1, 6)
	if err != nil {
		t.Fatal(err)
	}
	v := encodeValue(tr)
	// version 0, pid 42, epoch 0, timeout 60000, state 0, partitions null,
	// last update 6, start -1.
	want := binary.BigEndian.AppendUint16(nil, 0)
	want = binary.BigEndian.AppendUint64(want, 42)
	want = binary.BigEndian.AppendUint16(want, 0)
	want = binary.BigEndian.AppendUint32(want, 60000)
	want = append(want, 0)
	want = binary.BigEndian.AppendUint32(want, 0xffffffff)
	want = binary.BigEndian.AppendUint64(want, 6)
	want = binary.BigEndian.AppendUint64(want, ^uint64(0))
	if !bytes.Equal(v, want) {
		t.Fatalf("value\n got % x\nwant % x", v, want)
	}
	if err := m.Complete(tr); err != nil {
		t.Fatal(err)
	}
	ong, err := m.PrepareAddPartitions([]storage.TopicPartition{tp("b", 2), tp("a", 1), tp("a", 0)}, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, ver := range []int16{0, 1} {
		ong.ClientTransactionVersion = ver
		id, got, err := decodeRecord(encodeKey("app"), encodeValue(ong))
		if err != nil || id != "app" {
			t.Fatal(id, err)
		}
		if got.State != Ongoing || got.ProducerID != 42 || got.StartMs != 7 || len(got.Partitions) != 3 ||
			!got.HasPartition(tp("a", 0)) || got.ClientTransactionVersion != ver || got.PrevProducerID != -1 {
			t.Fatalf("v%d decoded %+v", ver, got)
		}
	}
	if id, got, err := decodeRecord(encodeKey("app"), nil); err != nil || id != "app" || got != nil {
		t.Fatalf("tombstone: %q %v %v", id, got, err)
	}
	m.Abandon()
	if d, err := m.PrepareDead(); err != nil || encodeValue(d) != nil {
		t.Fatalf("Dead is not a tombstone: %v", err)
	}
	if _, _, err := decodeRecord([]byte{0, 1, 0, 0}, nil); err == nil {
		t.Fatal("an unknown key version was read")
	}
}
