package coordinator

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage"
)

// TestTxnOffsetCommitIsVerified: KIP-890 for TxnOffsetCommit. A commit the
// transaction coordinator does not confirm opens nothing on
// __consumer_offsets (no hanging transaction, so stable fetches do not stay
// UNSTABLE_OFFSET_COMMIT), its errors are mapped for the client's version,
// and a marker of the producer decided while the coordinator is asked
// refuses the commit.
func TestTxnOffsetCommitIsVerified(t *testing.T) {
	var mu sync.Mutex
	var answer error
	var during func()
	var asked []storage.TopicPartition
	h := newHarness(t, func(c *Config) {
		c.VerifyTransaction = func(_ context.Context, id string, pid int64, epoch int16, tp storage.TopicPartition, add bool) error {
			mu.Lock()
			if add {
				t.Errorf("a TxnOffsetCommit v4 asked to add %v, not to verify it", tp)
			}
			asked = append(asked, tp)
			a, d := answer, during
			mu.Unlock()
			if d != nil {
				d()
			}
			return a
		}
	})
	set := func(a error, d func()) {
		mu.Lock()
		answer, during = a, d
		mu.Unlock()
	}
	x := h.txnProducer("etl", 7)
	offsets := map[string]map[int32]int64{"foo": {0: 10}}
	want := func(what string, code int16) {
		t.Helper()
		for k, got := range x.commit(offsets) {
			wantCode(t, what+" "+k, got, code)
		}
	}

	set(kerr.TransactionAbortable, nil)
	want("a commit outside the transaction", kerr.TransactionAbortable.Code)
	x.version = 3
	want("a commit outside the transaction, v3", invalidTxnState)
	x.version = 4
	wantOffsets(t, "stable fetch after a refused commit", h.fetch("etl", true, "foo", 0),
		map[string]string{"foo/0": "-1/-1/"})
	set(kerr.ProducerFenced, nil)
	want("a fenced producer", kerr.InvalidProducerEpoch.Code)
	set(errors.New("unreachable"), nil)
	want("an unreachable coordinator", coordinatorNotAvailable)

	// The transaction ends while the coordinator is asked.
	set(nil, func() { x.mustEnd(false) })
	want("a commit whose transaction ended meanwhile", invalidTxnState)
	wantOffsets(t, "stable fetch after the late commit", h.fetch("etl", true, "foo", 0),
		map[string]string{"foo/0": "-1/-1/"})

	set(nil, nil)
	want("a confirmed commit", 0)
	x.mustEnd(true)
	h.wantCommitted("after the commit", "etl", map[string]string{"foo/0": "10/5/m10"})
	if want := (storage.TopicPartition{Topic: OffsetsTopic, Partition: PartitionFor("etl", testPartitions)}); asked[0] != want {
		t.Fatalf("asked about %v, want %v", asked[0], want)
	}
	for _, s := range h.c.shards.Shards() {
		s.mu.Lock()
		n := len(s.txnGuards)
		s.mu.Unlock()
		if n != 0 {
			t.Fatalf("%d guards left behind", n)
		}
	}
}

// TestTxnOffsetCommitAddsUnderTV2: KIP-890 part 2. With transaction.version
// 2 finalized, a TxnOffsetCommit v5 adds the group's partition to the
// transaction (the producer sends no AddOffsetsToTxn), even with
// transaction.partition.verification.enable off. The add waits for the
// producer's previous transaction, whose marker carries the epoch the new
// transaction is written at: that marker, decided during the add, does not
// refuse the commit, while a marker of a later epoch does.
func TestTxnOffsetCommitAddsUnderTV2(t *testing.T) {
	var mu sync.Mutex
	var adds []bool
	var during func()
	h := newHarness(t, func(c *Config) {
		c.VerifyTransaction = func(_ context.Context, id string, pid int64, epoch int16, tp storage.TopicPartition, add bool) error {
			mu.Lock()
			adds = append(adds, add)
			d := during
			mu.Unlock()
			if d != nil {
				d()
			}
			return nil
		}
		c.VerifyTransactionEnabled = func() bool { return false }
	})
	setDuring := func(d func()) {
		mu.Lock()
		during = d
		mu.Unlock()
	}
	offsets := map[string]map[int32]int64{"foo": {0: 10}}
	x := h.txnProducer("etl", 7)
	x.version = 5
	// The previous transaction (epoch 0) committed offsets; its marker, at
	// the bumped epoch 1, is decided while epoch 1's commit is added.
	for k, got := range x.commit(offsets) {
		wantCode(t, "the first transaction's commit "+k, got, 0)
	}
	prev := *x
	prev.epoch = 1
	x.epoch = 1
	setDuring(func() { prev.mustEnd(true) })
	for k, got := range x.commit(map[string]map[int32]int64{"foo": {0: 20}}) {
		wantCode(t, "a commit added while the last transaction's marker is decided "+k, got, 0)
	}
	h.wantCommitted("after the first transaction", "etl", map[string]string{"foo/0": "10/5/m10"})
	// A later epoch's marker (the coordinator aborted epoch 1's
	// transaction) decided during the add refuses the commit.
	late := *x
	late.epoch = 2
	setDuring(func() { late.mustEnd(false) })
	for k, got := range x.commit(map[string]map[int32]int64{"foo": {0: 30}}) {
		wantCode(t, "a commit whose transaction was aborted meanwhile "+k, got, invalidTxnState)
	}
	setDuring(nil)
	h.wantCommitted("after the abort", "etl", map[string]string{"foo/0": "10/5/m10"})

	x.version = 4
	x.commit(offsets)
	mu.Lock()
	defer mu.Unlock()
	if want := []bool{true, true, true}; len(adds) != len(want) || adds[0] != true || adds[1] != true || adds[2] != true {
		t.Fatalf("adds %v, want %v (and v4 with verification off asks nothing)", adds, want)
	}
}
