package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/coordinator/runtime/runtimetest"
	"github.com/strait-io/strait/storage/clock"
)

// The batches the Writer builds are what the log takes from a coordinator:
// a transactional batch opens the producer's transaction (the LSO stops
// there), its marker ends it, markers from an older producer or
// coordinator epoch are fenced with Kafka's errors; and the Loader reads
// it all back with the producers and markers.
func TestWriterBatchesThroughTheLogAndTheLoader(t *testing.T) {
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	log := runtimetest.NewStorageLog(t, "__consumer_offsets", clk)
	l := log.Partition(writerPartition)
	h := newWriterHarness(t, func(cfg *WriterConfig) { cfg.Log = log; cfg.Clock = clk })
	h.run()
	write := func(name string, queue func(done func(error))) error {
		t.Helper()
		var got error
		ch := make(chan struct{})
		h.mu.Lock()
		queue(func(err error) { got = err; close(ch) })
		h.mu.Unlock()
		waitClosed(t, ch, name)
		return got
	}
	mustWrite := func(name string, queue func(done func(error))) {
		t.Helper()
		if err := write(name, queue); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}

	p := Producer{ID: 5, Epoch: 1}
	mustWrite("plain", func(d func(error)) { h.w.Append(recs("a"), true, d) })                      // 0
	mustWrite("txn", func(d func(error)) { h.w.AppendTransactional(p, recs("t1", "t2"), true, d) }) // 1-2
	mustWrite("plain after", func(d func(error)) { h.w.Append(recs("b"), true, d) })                // 3
	if lso, leo := l.LastStableOffset(), l.LogEndOffset(); lso != 1 || leo != 4 {
		t.Fatalf("open transaction: LSO %d LEO %d, want 1 4", lso, leo)
	}
	mustWrite("abort", func(d func(error)) { h.w.AppendEndTxnMarker(p, false, 2, true, d) }) // 4
	if lso, leo := l.LastStableOffset(), l.LogEndOffset(); lso != 5 || leo != 5 {
		t.Fatalf("after the abort: LSO %d LEO %d, want 5 5", lso, leo)
	}
	mustWrite("next txn", func(d func(error)) { h.w.AppendTransactional(p, recs("t3"), true, d) }) // 5
	err := write("zombie producer", func(d func(error)) { h.w.AppendEndTxnMarker(Producer{ID: 5, Epoch: 0}, true, 2, false, d) })
	if !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("marker from an older producer epoch: %v, want INVALID_PRODUCER_EPOCH", err)
	}
	err = write("zombie coordinator", func(d func(error)) { h.w.AppendEndTxnMarker(p, true, 1, false, d) })
	if !errors.Is(err, kerr.TransactionCoordinatorFenced) {
		t.Fatalf("marker from an older coordinator epoch: %v, want TRANSACTION_COORDINATOR_FENCED", err)
	}
	mustWrite("commit", func(d func(error)) { h.w.AppendEndTxnMarker(p, true, 2, false, d) }) // 6

	pl := &playbackLog{}
	loader := &Loader{Log: log, Topic: "__consumer_offsets", ReadBytes: 1 << 20, MaxBatchBytes: 1 << 20}
	if err := loader.Replay(context.Background(), writerPartition, pl.playback()); err != nil {
		t.Fatal(err)
	}
	wantLines(t, pl.lines,
		"record a@0 batch 0-0 pid -1/-1 txn false",
		"record t1@1 batch 1-2 pid 5/1 txn true",
		"record t2@2 batch 1-2 pid 5/1 txn true",
		"record b@3 batch 3-3 pid -1/-1 txn false",
		"marker commit false@4 pid 5/1",
		"record t3@5 batch 5-5 pid 5/1 txn true",
		"marker commit true@6 pid 5/1",
	)
}
