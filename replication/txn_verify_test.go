package replication

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// fakeVerifier answers VerifyTransaction with answer (nil: confirmed) and
// records what it was asked; during, when set, runs inside the call.
type fakeVerifier struct {
	mu     sync.Mutex
	asked  [][]storage.TopicPartition
	adds   []bool // each question's add (KIP-890 part 2)
	answer error
	failed error
	during func()
}

func (f *fakeVerifier) VerifyTransaction(_ context.Context, id string, pid int64, epoch int16, tps []storage.TopicPartition, add bool) (map[storage.TopicPartition]error, error) {
	f.mu.Lock()
	f.asked, f.adds = append(f.asked, tps), append(f.adds, add)
	answer, failed, during := f.answer, f.failed, f.during
	f.mu.Unlock()
	if during != nil {
		during()
	}
	if failed != nil {
		return nil, failed
	}
	out := map[storage.TopicPartition]error{}
	for _, tp := range tps {
		out[tp] = answer
	}
	return out, nil
}

// TestTransactionalProduceIsVerified: KIP-890 part 1. A transactional
// batch that begins a transaction on a partition is appended only once the
// coordinator confirms the partition is in the transaction; a write into
// the ongoing transaction asks nothing; refusals are answered with Kafka's
// errors, by Produce version; and a transaction that ends while the
// coordinator is asked refuses the write.
func TestTransactionalProduceIsVerified(t *testing.T) {
	v := &fakeVerifier{}
	h := newHarness(t, func(c *Config) { c.Transactions, c.TxnVerifier = true, v })
	h.createTopic("t", topicSpec{})
	id := "tx"
	seq := int32(0)
	produce := func(version int16) (int16, int64) {
		t.Helper()
		b := h.batchSpec(record.BatchSpec{ProducerID: 7, ProducerEpoch: 0, BaseSequence: seq, Transactional: true}, "x", 2, 0)
		req := produceReq(version, -1, "t", 0, b)
		req.TransactionID = &id
		sp := h.rm.Produce(context.Background(), req).Topics[0].Partitions[0]
		if sp.ErrorCode == 0 {
			seq += 2
		}
		return sp.ErrorCode, sp.BaseOffset
	}
	marker := func(commit bool) {
		t.Helper()
		b := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: 7, ProducerEpoch: 0, Timestamp: h.clock.Now().UnixMilli()}, commit, 0)
		if _, err := h.rm.AppendCoordinator(context.Background(), storage.TopicPartition{Topic: "t", Partition: 0}, b); err != nil {
			t.Fatal(err)
		}
	}
	asked := func() int {
		v.mu.Lock()
		defer v.mu.Unlock()
		return len(v.asked)
	}

	if code, base := produce(11); code != 0 || base != 0 || asked() != 1 {
		t.Fatalf("first write: %v at %d, asked %d times", kerr.ErrorForCode(code), base, asked())
	}
	if code, _ := produce(11); code != 0 || asked() != 1 {
		t.Fatalf("write into the ongoing transaction: %v, asked %d times", kerr.ErrorForCode(code), asked())
	}
	marker(false)

	v.answer = kerr.TransactionAbortable
	leo := h.partition("t", 0).Log().LogEndOffset()
	if code, _ := produce(11); code != kerr.TransactionAbortable.Code {
		t.Fatalf("unconfirmed write at v11: %v", kerr.ErrorForCode(code))
	}
	if code, _ := produce(10); code != kerr.InvalidTxnState.Code {
		t.Fatalf("unconfirmed write at v10: %v", kerr.ErrorForCode(code))
	}
	v.answer = kerr.ProducerFenced
	if code, _ := produce(11); code != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("fenced producer: %v", kerr.ErrorForCode(code))
	}
	v.answer, v.failed = nil, errors.New("coordinator unreachable")
	if code, _ := produce(11); code != kerr.NotEnoughReplicas.Code {
		t.Fatalf("coordinator unreachable: %v", kerr.ErrorForCode(code))
	}
	// The coordinator confirms, but the transaction ends meanwhile.
	v.failed, v.during = nil, func() { marker(true) }
	if code, _ := produce(11); code != kerr.InvalidTxnState.Code {
		t.Fatalf("transaction ended while asked: %v", kerr.ErrorForCode(code))
	}
	if got := h.partition("t", 0).Log().LogEndOffset(); got != leo+1 {
		t.Fatalf("log end %d, want %d: only the marker written meanwhile", got, leo+1)
	}
	v.during = nil
	if code, _ := produce(11); code != 0 {
		t.Fatalf("a confirmed write after all that: %v", kerr.ErrorForCode(code))
	}
}
