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
		c.VerifyTransaction = func(_ context.Context, id string, pid int64, epoch int16, tp storage.TopicPartition) error {
			mu.Lock()
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
	want("a commit outside the transaction", invalidTxnState)
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
