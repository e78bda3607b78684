package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
)

const writerPartition = int32(4)

// writerLog is a fake LogWriter keeping the batches appended to it.
type writerLog struct {
	t  *testing.T
	mu sync.Mutex
	// batches are the appended batches, described (describeBatch).
	batches []string
	// fail makes the next appends fail with these errors, in order.
	fail []error
	// gate, when set, is received from before each append completes.
	gate chan struct{}
	// block makes appends wait for their context and fail with it, as
	// the broker's acks=all wait does.
	block bool
	// next is the offset the next appended record gets.
	next int64
}

func (l *writerLog) Append(ctx context.Context, p int32, batch []byte) (int64, error) {
	if p != writerPartition {
		l.t.Errorf("append to partition %d, want %d", p, writerPartition)
	}
	l.mu.Lock()
	gate, block := l.gate, l.block
	l.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	if block {
		<-ctx.Done()
		return 0, fmt.Errorf("append: %w: %w", kerr.RequestTimedOut, context.Cause(ctx))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.fail) > 0 {
		err := l.fail[0]
		l.fail = l.fail[1:]
		return 0, err
	}
	l.batches = append(l.batches, describeBatch(l.t, batch))
	n, _ := record.ReadBatch(batch)
	l.next += int64(n.LastOffsetDelta()) + 1
	return l.next - 1, nil
}

func (l *writerLog) appended() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.batches)
}

// describeBatch says what a batch is: "plain k1,k2", "txn 5/1 k1", or
// "marker commit 5/1 coordinator epoch 3"; a tombstone's key ends in "!".
func describeBatch(t *testing.T, batch []byte) string {
	t.Helper()
	b, err := record.ReadBatch(batch)
	if err != nil || len(b) != len(batch) || !b.ValidCRC() {
		t.Fatalf("appended a bad batch: %v", err)
	}
	if b.PartitionLeaderEpoch() != record.NoPartitionLeaderEpoch || b.Compression() != record.CodecNone {
		t.Errorf("batch has leader epoch %d, codec %s; want none, none", b.PartitionLeaderEpoch(), b.Compression())
	}
	rr := record.NewUncompressedReader(b)
	var keys []string
	var recs []record.Record
	for rr.Remaining() > 0 {
		rec, err := rr.Next(true)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
		k := string(rec.Key)
		if rec.ValueLen < 0 {
			k += "!"
		}
		keys = append(keys, k)
	}
	switch {
	case b.IsControl():
		typ, err := record.ParseControlKey(recs[0].Key)
		if err != nil {
			t.Fatal(err)
		}
		m, err := record.ParseEndTxnMarker(recs[0].Value)
		if err != nil {
			t.Fatal(err)
		}
		if !b.IsTransactional() || len(recs) != 1 {
			t.Errorf("marker batch transactional %t with %d records", b.IsTransactional(), len(recs))
		}
		result := map[kmsg.ControlRecordKeyType]string{kmsg.ControlRecordKeyTypeCommit: "commit", kmsg.ControlRecordKeyTypeAbort: "abort"}[typ]
		return fmt.Sprintf("marker %s %d/%d coordinator epoch %d", result, b.ProducerID(), b.ProducerEpoch(), m.CoordinatorEpoch)
	case b.IsTransactional():
		if b.BaseSequence() != 0 {
			t.Errorf("transactional batch base sequence %d, want 0 (Kafka's coordinator runtime)", b.BaseSequence())
		}
		return fmt.Sprintf("txn %d/%d %s", b.ProducerID(), b.ProducerEpoch(), strings.Join(keys, ","))
	default:
		if b.ProducerID() != record.NoProducerID || b.ProducerEpoch() != record.NoProducerEpoch || b.BaseSequence() != record.NoSequence {
			t.Errorf("plain batch with producer %d/%d sequence %d", b.ProducerID(), b.ProducerEpoch(), b.BaseSequence())
		}
		return "plain " + strings.Join(keys, ",")
	}
}

// writerHarness is a Writer over a writerLog, with the shard lock and the
// shard's state the hooks read.
type writerHarness struct {
	t   *testing.T
	log *writerLog
	mu  sync.Mutex // the shard lock
	w   *Writer

	// Guarded by mu.
	serving error    // what Serving returns
	events  []string // hooks and done callbacks, in order

	ctx    context.Context
	cancel context.CancelFunc
	ran    chan struct{}
}

func newWriterHarness(t *testing.T, tune func(*WriterConfig)) *writerHarness {
	h := &writerHarness{t: t, log: &writerLog{t: t}}
	cfg := WriterConfig{
		Log:       h.log,
		Partition: writerPartition,
		Lock:      &h.mu,
		Clock:     clock.NewManual(time.UnixMilli(1_700_000_000_000)),
		Serving:   func() error { h.assertLocked("Serving"); return h.serving },
		Diverged: func(err error) {
			h.assertLocked("Diverged")
			h.events = append(h.events, "diverged")
			h.serving = kerr.CoordinatorLoadInProgress
		},
	}
	if tune != nil {
		tune(&cfg)
	}
	h.w = NewWriter(cfg)
	h.ctx, h.cancel = context.WithCancel(context.Background())
	t.Cleanup(h.stop)
	return h
}

func (h *writerHarness) assertLocked(what string) {
	if h.mu.TryLock() {
		h.mu.Unlock()
		h.t.Errorf("%s called without the shard lock", what)
	}
}

func (h *writerHarness) run() {
	h.ran = make(chan struct{})
	go func() { defer close(h.ran); h.w.Run(h.ctx) }()
}

func (h *writerHarness) stop() {
	h.cancel()
	if h.ran != nil {
		select {
		case <-h.ran:
		case <-time.After(10 * time.Second):
			h.t.Error("Run did not return after its context ended")
		}
	}
}

// done returns a done callback writing down name and its outcome, and a
// channel closed once it ran.
func (h *writerHarness) done(name string) (func(error), <-chan struct{}) {
	ch := make(chan struct{})
	return func(err error) {
		h.assertLocked("done")
		outcome := "ok"
		if err != nil {
			outcome = err.Error()
			var ke *kerr.Error
			if errors.As(err, &ke) {
				outcome = ke.Message
			}
		}
		h.events = append(h.events, name+": "+outcome)
		close(ch)
	}, ch
}

func (h *writerHarness) eventLog() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

func (h *writerHarness) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.mu.Lock()
		ok := cond()
		h.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func recs(keys ...string) []Record {
	out := make([]Record, len(keys))
	for i, k := range keys {
		out[i] = Record{Key: []byte(k), Value: []byte("v")}
		if strings.HasSuffix(k, "!") {
			out[i] = Record{Key: []byte(strings.TrimSuffix(k, "!"))}
		}
	}
	return out
}

// Plain writes queued together go out as one batch; a transactional
// write is a batch of its own with its producer, even next to the same
// producer's; a marker is a control batch of its own, in queue order; done
// callbacks run in queue order under the shard lock.
func TestWriterBatchKinds(t *testing.T) {
	h := newWriterHarness(t, nil)
	p1, p2 := Producer{ID: 5, Epoch: 1}, Producer{ID: 6, Epoch: 0}
	var last <-chan struct{}
	h.mu.Lock()
	queue := func(name string, fn func(done func(error))) {
		done, ch := h.done(name)
		fn(done)
		last = ch
	}
	queue("a", func(d func(error)) { h.w.Append(recs("a"), true, d) })
	queue("b", func(d func(error)) { h.w.Append(recs("b!"), false, d) })
	queue("c", func(d func(error)) { h.w.AppendTransactional(p1, recs("c", "d"), true, d) })
	queue("e", func(d func(error)) { h.w.AppendTransactional(p1, recs("e"), true, d) })
	queue("f", func(d func(error)) { h.w.AppendTransactional(p2, recs("f"), true, d) })
	queue("g", func(d func(error)) { h.w.Append(recs("g"), true, d) })
	queue("m1", func(d func(error)) { h.w.AppendEndTxnMarker(p1, true, 3, true, d) })
	queue("m2", func(d func(error)) { h.w.AppendEndTxnMarker(p2, false, 3, true, d) })
	queue("h", func(d func(error)) { h.w.Append(recs("h"), true, d) })
	queue("i", func(d func(error)) { h.w.Append(recs("i"), true, d) })
	if h.w.Queued() != 10 || h.w.Writing() {
		t.Fatalf("queued %d writing %t before Run", h.w.Queued(), h.w.Writing())
	}
	h.mu.Unlock()
	h.run()
	waitClosed(t, last, "the last write")

	want := []string{
		"plain a,b!",
		"txn 5/1 c,d",
		"txn 5/1 e",
		"txn 6/0 f",
		"plain g",
		"marker commit 5/1 coordinator epoch 3",
		"marker abort 6/0 coordinator epoch 3",
		"plain h,i",
	}
	if got := h.log.appended(); !slices.Equal(got, want) {
		t.Fatalf("appended:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	wantEvents := []string{"a: ok", "b: ok", "c: ok", "e: ok", "f: ok", "g: ok", "m1: ok", "m2: ok", "h: ok", "i: ok"}
	if got := h.eventLog(); !slices.Equal(got, wantEvents) {
		t.Fatalf("events %q, want %q", got, wantEvents)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w.Queued() != 0 || h.w.Writing() {
		t.Fatalf("queued %d writing %t after the writes", h.w.Queued(), h.w.Writing())
	}
}

// Plain writes coalesce up to MaxBatchBytes; one larger write goes out
// alone. A write of no records appends nothing: alone its done runs once
// the writes before it are written, coalesced it shares its batch's
// outcome.
func TestWriterCoalescingLimitAndEmptyWrites(t *testing.T) {
	h := newWriterHarness(t, func(cfg *WriterConfig) { cfg.MaxBatchBytes = 2 * (1 + 1 + 16) })
	var last <-chan struct{}
	h.mu.Lock()
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		var d func(error)
		d, last = h.done(k)
		h.w.Append(recs(k), true, d)
	}
	big, _ := h.done("big")
	h.w.Append(recs("big-key-of-more-than-thirty-six-bytes-in-all"), true, big)
	d, _ := h.done("read")
	h.w.Append(nil, false, d)
	h.mu.Unlock()
	h.run()
	waitClosed(t, last, "e")
	h.eventually("the empty write done", func() bool { return len(h.events) == 7 })
	want := []string{"plain a,b", "plain c,d", "plain e", "plain big-key-of-more-than-thirty-six-bytes-in-all"}
	if got := h.log.appended(); !slices.Equal(got, want) {
		t.Fatalf("appended %q, want %q", got, want)
	}
	if got, want := h.eventLog(), []string{"a: ok", "b: ok", "c: ok", "d: ok", "e: ok", "big: ok", "read: ok"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}

	// Only empty writes: nothing is appended.
	h.mu.Lock()
	h.events = nil
	d, ch := h.done("alone")
	h.w.Append(nil, false, d)
	h.mu.Unlock()
	waitClosed(t, ch, "the lone empty write")
	if got := h.log.appended(); len(got) != 4 {
		t.Fatalf("an empty write appended: %q", got)
	}
}

// An append holding an eager write fails: Diverged runs under the lock
// before the batch's done callbacks, and the writes queued behind it fail
// with Serving's error instead of being written. A failed append of
// non-eager writes only fails them.
func TestWriterFailedEagerWriteDiverges(t *testing.T) {
	h := newWriterHarness(t, nil)
	h.run()
	// Not eager: no divergence, the next write goes out.
	h.log.fail = []error{kerr.NotEnoughReplicas}
	h.mu.Lock()
	d1, ch1 := h.done("lazy")
	h.w.AppendEndTxnMarker(Producer{ID: 1}, true, 0, false, d1)
	d2, ch2 := h.done("next")
	h.w.Append(recs("n"), true, d2)
	h.mu.Unlock()
	waitClosed(t, ch2, "next")
	<-ch1
	if got, want := h.eventLog(), []string{"lazy: NOT_ENOUGH_REPLICAS", "next: ok"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}

	// Eager: the append fails while another write waits behind it.
	gate := make(chan struct{})
	h.log.mu.Lock()
	h.log.gate = gate
	h.log.fail = []error{kerr.NotEnoughReplicas}
	h.log.mu.Unlock()
	h.mu.Lock()
	h.events = nil
	d3, ch3 := h.done("eager")
	h.w.AppendTransactional(Producer{ID: 2, Epoch: 3}, recs("t"), true, d3)
	h.mu.Unlock()
	h.eventually("the eager write in flight", func() bool { return h.w.Writing() })
	h.mu.Lock()
	d4, ch4 := h.done("behind")
	h.w.Append(recs("b"), false, d4)
	h.mu.Unlock()
	h.log.mu.Lock()
	h.log.gate = nil
	h.log.mu.Unlock()
	close(gate)
	waitClosed(t, ch3, "eager")
	waitClosed(t, ch4, "behind")
	if got, want := h.eventLog(), []string{"diverged", "eager: NOT_ENOUGH_REPLICAS", "behind: COORDINATOR_LOAD_IN_PROGRESS"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if got := h.log.appended(); !slices.Equal(got, []string{"plain n"}) {
		t.Fatalf("appended %q, want only the write before the failure", got)
	}
}

// Unloading cancels the append in flight, which fails with ErrUnloaded
// (no divergence: the shard no longer serves), and the shard fails what is
// queued with FailQueued; Run returns.
func TestWriterUnload(t *testing.T) {
	h := newWriterHarness(t, nil)
	h.log.gate = make(chan struct{}) // never opened
	h.run()
	h.mu.Lock()
	d1, ch1 := h.done("in flight")
	h.w.Append(recs("a"), true, d1)
	h.mu.Unlock()
	h.eventually("the write in flight", func() bool { return h.w.Writing() })
	h.mu.Lock()
	d2, ch2 := h.done("queued")
	h.w.AppendEndTxnMarker(Producer{ID: 1}, false, 0, true, d2)
	// What a shard's Unload does: stop serving, fail what is queued.
	h.serving = kerr.NotCoordinator
	h.w.FailQueued(ErrUnloaded)
	h.mu.Unlock()
	h.stop()
	waitClosed(t, ch1, "in flight")
	waitClosed(t, ch2, "queued")
	if got, want := h.eventLog(), []string{"queued: NOT_LEADER_FOR_PARTITION", "in flight: NOT_LEADER_FOR_PARTITION"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// WriteTimeout bounds an append: the write fails with the log's timeout,
// not as unloaded, and an eager one makes the shard diverge.
func TestWriterWriteTimeout(t *testing.T) {
	h := newWriterHarness(t, func(cfg *WriterConfig) { cfg.WriteTimeout = time.Millisecond })
	h.log.block = true
	h.run()
	h.mu.Lock()
	d, ch := h.done("slow")
	h.w.Append(recs("a"), true, d)
	h.mu.Unlock()
	waitClosed(t, ch, "slow")
	if got, want := h.eventLog(), []string{"diverged", "slow: REQUEST_TIMED_OUT"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// AppendAt tells each write the offset of its first record: the writes
// coalesced into one batch follow each other in queue order, a write
// without records gets the offset after the records before it (or -1 when
// its batch wrote nothing), and a failed append gets -1.
func TestWriterAppendAtOffsets(t *testing.T) {
	h := newWriterHarness(t, nil)
	got := map[string]int64{}
	var last <-chan struct{}
	queue := func(name string, keys ...string) {
		ch := make(chan struct{})
		h.w.AppendAt(recs(keys...), true, func(first int64, err error) {
			h.assertLocked("done")
			if err != nil {
				first = -100
			}
			got[name] = first
			close(ch)
		})
		last = ch
	}
	h.mu.Lock()
	queue("empty-alone")
	h.mu.Unlock()
	h.run()
	<-last
	h.mu.Lock()
	queue("a", "a1", "a2")
	queue("empty")
	queue("b", "b1")
	queue("c", "c1", "c2", "c3")
	h.mu.Unlock()
	<-last
	h.mu.Lock()
	queue("d", "d1")
	h.mu.Unlock()
	<-last
	h.log.mu.Lock()
	h.log.fail = []error{kerr.NotEnoughReplicas}
	h.log.mu.Unlock()
	h.mu.Lock()
	h.serving = nil
	queue("failed", "e1")
	h.mu.Unlock()
	<-last
	want := map[string]int64{"empty-alone": -1, "a": 0, "empty": 2, "b": 2, "c": 3, "d": 6, "failed": -100}
	h.mu.Lock()
	defer h.mu.Unlock()
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: first offset %d, want %d (all: %v)", name, got[name], w, got)
		}
	}
	if b := h.log.appended(); !slices.Equal(b, []string{"plain a1,a2,b1,c1,c2,c3", "plain d1"}) {
		t.Errorf("batches %q", b)
	}
}
