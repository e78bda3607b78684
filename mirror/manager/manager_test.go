package manager

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta/mirrorstate"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// statusOf is tp's PartitionStatus, if this node leads it.
func statusOf(m *Manager, tp storage.TopicPartition) (PartitionStatus, bool) {
	for _, ps := range m.Partitions("m") {
		if ps.Topic == tp.Topic && ps.Partition == tp.Partition {
			return ps, true
		}
	}
	return PartitionStatus{}, false
}

// waitCaughtUp waits until tp's record is in want and its local log ends at
// the source's high watermark.
func (e *env) waitCaughtUp(kcHW func() int64, p int32, want partition.State) {
	e.t.Helper()
	tp := e.tp(p)
	waitFor(e.t, 15*time.Second, func() string {
		ps, _ := statusOf(e.mgr, tp)
		return fmt.Sprintf("%s: want %s at source hw %d; status %+v; records %s", tp, want, kcHW(), ps, e.st.states(e.key(p)))
	}, func() bool {
		rec, ok := e.st.get(e.key(p))
		return ok && rec.State == want && e.dest.local(tp).log.LogEndOffset() == kcHW()
	})
}

// TestMirrorLifecycle: a kfake source copied byte for byte through
// PREPARING → MIRRORING; pause (PAUSED at the log end) and resume (no
// truncation, catches up); stop (epoch bump to above the mirrored epochs,
// the transaction the source left open aborted with a marker rather than
// truncated away with the committed records after it, MIRROR_PID_RESET,
// STOPPED, writable, LSO = LEO, read_committed the same on both sides).
func TestMirrorLifecycle(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 25*time.Second)
	defer cancel()
	kc, id := startKfake(t, "orders", 2)
	seeds := kc.ListenAddrs()
	n := produce(t, ctx, seeds, "orders", 2, 200, kgo.NoCompression())
	n += produce(t, ctx, seeds, "orders", 2, 100, kgo.ZstdCompression())
	if n != 600 {
		t.Fatalf("produced %d records, want 600", n)
	}
	e := newEnv(t, seeds, "orders", id, 2, 0)
	e.mgr.Start(ctx)
	hw := func(p int32) func() int64 { return func() int64 { return kc.PartitionInfo("orders", p).HighWatermark } }

	// Start: PREPARING, then MIRRORING with identical logs.
	for p := range int32(2) {
		e.waitCaughtUp(hw(p), p, partition.StateMirroring)
		src := sourceBatches(t, ctx, kc, "orders", p, id)
		count, mismatches := compareLogs(src, localBatches(t, e.dest.local(e.tp(p)).log))
		if count != len(src) || mismatches != 0 {
			t.Fatalf("%s: %d batches, source %d, %d mismatches", e.tp(p), count, len(src), mismatches)
		}
		if got := e.st.states(e.key(p)); got != "PREPARING MIRRORING" {
			t.Fatalf("%s: records %q, want PREPARING MIRRORING", e.tp(p), got)
		}
		snap := e.dest.snapshot(e.tp(p))
		if snap.access != partition.AccessReadOnly || snap.fullTruncs != 1 || snap.truncations != 0 {
			t.Fatalf("%s: access %s, %d full truncations, %d truncations; want read-only, 1, 0", e.tp(p), snap.access,
				snap.fullTruncs, snap.truncations)
		}
		ps, ok := statusOf(e.mgr, e.tp(p))
		if !ok || ps.State != partition.StateMirroring || ps.DestinationLogEndOffset != hw(p)() || ps.Lag != 0 ||
			ps.SourceHighWatermark != hw(p)() {
			t.Fatalf("%s: status %+v, want MIRRORING at %d with lag 0", e.tp(p), ps, hw(p)())
		}
	}
	st := e.mgr.Stats()
	if st.Partitions[partition.StateMirroring] != 2 || st.Mirrors["m"].RecordsMirrored != 600 || st.Mirrors["m"].LagTotal != 0 {
		t.Fatalf("stats %+v, want 2 MIRRORING, 600 records, lag 0", st)
	}

	// Pause: PAUSED at the log end; new source data is not copied.
	e.setMirrorName("m" + mirrorstate.SuffixPaused)
	for p := range int32(2) {
		e.waitCaughtUp(hw(p), p, partition.StatePaused)
		rec, _ := e.st.get(e.key(p))
		if rec.LastMirrorOffset != hw(p)() {
			t.Fatalf("%s: PAUSED at %d, want %d", e.tp(p), rec.LastMirrorOffset, hw(p)())
		}
	}
	paused := []int64{hw(0)(), hw(1)()}
	produce(t, ctx, seeds, "orders", 2, 50, kgo.NoCompression())
	time.Sleep(300 * time.Millisecond)
	for p := range int32(2) {
		if got := e.dest.local(e.tp(p)).log.LogEndOffset(); got != paused[p] {
			t.Fatalf("%s: paused log moved from %d to %d", e.tp(p), paused[p], got)
		}
	}

	// Resume: MIRRORING from the log end, nothing truncated.
	e.setMirrorName("m")
	for p := range int32(2) {
		e.waitCaughtUp(hw(p), p, partition.StateMirroring)
		snap := e.dest.snapshot(e.tp(p))
		if snap.fullTruncs != 1 || snap.truncations != 0 {
			t.Fatalf("%s: resume truncated: %d full truncations, %d truncations", e.tp(p), snap.fullTruncs, snap.truncations)
		}
		src := sourceBatches(t, ctx, kc, "orders", p, id)
		if count, mismatches := compareLogs(src, localBatches(t, e.dest.local(e.tp(p)).log)); count != len(src) || mismatches != 0 {
			t.Fatalf("%s after resume: %d batches, source %d, %d mismatches", e.tp(p), count, len(src), mismatches)
		}
	}

	// On partition 0 of the source: a transaction left open, then a
	// committed one, an aborted one and plain records after it, mirrored.
	// The destination's LSO stops at the open transaction.
	lsoWant := hw(0)()
	open := txnProducer(t, seeds, "orders", "open-txn")
	txnProduce(t, ctx, open, "open", 3)
	txnProduce(t, ctx, txnProducer(t, seeds, "orders", "done-txn"), "committed", 4, kgo.TryCommit)
	txnProduce(t, ctx, txnProducer(t, seeds, "orders", "aborted-txn"), "aborted", 2, kgo.TryAbort)
	plain, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("orders"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for i := range 5 {
		if err := plain.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: fmt.Appendf(nil, "plain-after-%d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	e.waitCaughtUp(hw(0), 0, partition.StateMirroring)
	if lso := e.dest.local(e.tp(0)).log.LastStableOffset(); lso != lsoWant {
		t.Fatalf("destination LSO %d with the open transaction, want %d", lso, lsoWant)
	}
	stopAt := []int64{hw(0)(), hw(1)()} // what the stop finds mirrored

	// Stop: the mirrored batches have epoch 0, the leader epoch is 0, so
	// the stop bumps it to 1 first; then it records the LME and the stop
	// offset, aborts the open transaction and appends MIRROR_PID_RESET.
	e.setMirrorName("m" + mirrorstate.SuffixRemoved)
	for p := range int32(2) {
		tp := e.tp(p)
		waitFor(t, 15*time.Second, func() string { return fmt.Sprintf("%s: records %s", tp, e.st.states(e.key(p))) }, func() bool {
			rec, ok := e.st.get(e.key(p))
			return ok && rec.State == partition.StateStopped && e.dest.snapshot(tp).access == partition.AccessWritable
		})
	}

	// The source's coordinator aborts the open transaction too (after the
	// stop point). A read_committed consumer on either side then sees the
	// same records below the stop offset: the committed transaction and the
	// plain records after the open one included, the aborted and the open
	// transactions' records on neither.
	if err := open.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		src := sourceCommittedValues(t, ctx, seeds, "orders", p, stopAt[p])
		dst := committedValues(t, e.dest.local(e.tp(p)).log)
		c := compareViews(src, dst, func(v string) bool { return strings.Contains(v, "/open-") || strings.Contains(v, "/aborted-") })
		t.Logf("%s read_committed: source %d records, destination %d; lost=%d aborted-visible=%d duplicates=%d misordered=%d",
			e.tp(p), len(src), len(dst), c.lost, c.abortedVisible, c.duplicates, c.misordered)
		if c != (viewCounts{}) || len(src) == 0 {
			t.Errorf("%s: the destination's read_committed view differs from the source's: %+v", e.tp(p), c)
		}
	}

	for p := range int32(2) {
		tp := e.tp(p)
		rec, _ := e.st.get(e.key(p))
		if rec.LastMirrorEpoch != 0 || rec.LastMirrorOffset != stopAt[p] || rec.LeaderEpoch != 1 {
			t.Fatalf("%s: STOPPED record %s, want lme 0 at %d, leader epoch 1", tp, rec, stopAt[p])
		}
		snap := e.dest.snapshot(tp)
		wantAborted := 0
		if p == 0 {
			wantAborted = 1 // the open transaction
		}
		if snap.pidResets != 1 || snap.epoch != 1 || snap.truncations != 0 || snap.aborted != wantAborted {
			t.Fatalf("%s: %d PID resets at epoch %d, %d truncations, %d transactions aborted; want 1 at 1, 0, %d", tp,
				snap.pidResets, snap.epoch, snap.truncations, snap.aborted, wantAborted)
		}
		// Everything mirrored is still there, byte for byte; then the
		// stop's ABORT marker (partition 0) and the PID reset, at epoch 1.
		src := sourceBatches(t, ctx, kc, "orders", p, id)
		src = slices.DeleteFunc(src, func(b record.Batch) bool { return b.BaseOffset() >= stopAt[p] }) // the source's abort
		bs := localBatches(t, snap.log)
		mirrored := bs[:min(len(src), len(bs))]
		if _, mismatches := compareLogs(src, mirrored); mismatches != 0 || len(bs) != len(src)+1+wantAborted {
			t.Fatalf("%s: %d batches after the stop, %d mirrored ones differ; source %d, want the source's and %d more", tp,
				len(bs), mismatches, len(src), 1+wantAborted)
		}
		for i, b := range bs[len(src):] {
			isReset := i == wantAborted
			if !b.IsControl() || b.BaseOffset() != stopAt[p]+int64(i) || b.PartitionLeaderEpoch() != 1 || (b.ProducerID() == -1) != isReset {
				t.Fatalf("%s: stop batch %d at %d epoch %d control %v pid %d; want the ABORT markers then the PID reset from %d at epoch 1",
					tp, i, b.BaseOffset(), b.PartitionLeaderEpoch(), b.IsControl(), b.ProducerID(), stopAt[p])
			}
		}
		l := snap.log
		if l.LastStableOffset() != l.LogEndOffset() || l.HighWatermark() != l.LogEndOffset() || len(l.OpenTransactions()) != 0 {
			t.Fatalf("%s: LSO %d HW %d LEO %d, open %v; want LSO = HW = LEO, nothing open", tp, l.LastStableOffset(),
				l.HighWatermark(), l.LogEndOffset(), l.OpenTransactions())
		}
		if got, want := e.st.states(e.key(p)), "PREPARING MIRRORING PAUSING PAUSED MIRRORING STOPPING STOPPING STOPPED"; got != want {
			t.Fatalf("%s: records %q, want %q", tp, got, want)
		}
	}
	bumps := e.ctrl.bumps()
	slices.SortFunc(bumps, func(a, b bumpCall) int { return int(a.tp.Partition - b.tp.Partition) })
	if want := []bumpCall{{e.tp(0), 0, 1}, {e.tp(1), 0, 1}}; !slices.Equal(bumps, want) {
		t.Fatalf("epoch bumps %+v, want %+v", bumps, want)
	}
}

// txnProducer is a transactional producer of topic on the source.
func txnProducer(t *testing.T, seeds []string, topic, id string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic), kgo.TransactionalID(id),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// txnProduce writes n records "<prefix>-<i>" to partition 0 in one
// transaction of cl, and ends it when end is given (open otherwise).
func txnProduce(t *testing.T, ctx context.Context, cl *kgo.Client, prefix string, n int, end ...kgo.TransactionEndTry) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: fmt.Appendf(nil, "%s-%d", prefix, i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for _, how := range end {
		if err := cl.EndTransaction(ctx, how); err != nil {
			t.Fatal(err)
		}
	}
}

// corruptingEndPoint flips a byte inside the records of every batch the
// source sends for one partition, so its CRC no longer matches.
type corruptingEndPoint struct {
	fetcher.LeaderEndPoint
	tp      storage.TopicPartition
	flipped atomic.Int64
}

func (c *corruptingEndPoint) Fetch(ctx context.Context, req *fetcher.FetchRequest) (map[storage.TopicPartition]*fetcher.FetchData, error) {
	out, err := c.LeaderEndPoint.Fetch(ctx, req)
	if d, ok := out[c.tp]; ok && len(d.RecordBatches) > record.HeaderSize {
		buf := slices.Clone(d.RecordBatches)
		buf[record.HeaderSize] ^= 0xff
		d.RecordBatches = buf
		c.flipped.Add(1)
	}
	return out, err
}

// TestCorruptBatchFailsOnlyItsPartition: the source sends a corrupt batch
// for partition 1: it goes to FAILED with nothing appended, while
// partition 0, in the same fetcher, keeps mirroring.
func TestCorruptBatchFailsOnlyItsPartition(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 25*time.Second)
	defer cancel()
	kc, id := startKfake(t, "events", 2)
	seeds := kc.ListenAddrs()
	produce(t, ctx, seeds, "events", 2, 100, kgo.NoCompression())
	e := newEnv(t, seeds, "events", id, 2, 0, func(c *Config) { c.Retry.RetryMaxAttempts = partition.NoAutomaticRetries })
	var wrapped []*corruptingEndPoint
	var mu sync.Mutex
	e.mgr.wrapEndPoint = func(ep fetcher.LeaderEndPoint) fetcher.LeaderEndPoint {
		c := &corruptingEndPoint{LeaderEndPoint: ep, tp: e.tp(1)}
		mu.Lock()
		wrapped = append(wrapped, c)
		mu.Unlock()
		return c
	}
	e.mgr.Start(ctx)
	hw := func(p int32) func() int64 { return func() int64 { return kc.PartitionInfo("events", p).HighWatermark } }

	e.waitCaughtUp(hw(0), 0, partition.StateMirroring)
	waitFor(t, 15*time.Second, func() string { return "partition 1 records " + e.st.states(e.key(1)) }, func() bool {
		rec, ok := e.st.get(e.key(1))
		return ok && rec.State == partition.StateFailed
	})
	if got := e.st.states(e.key(1)); got != "PREPARING MIRRORING FAILED" {
		t.Fatalf("partition 1 records %q, want PREPARING MIRRORING FAILED", got)
	}
	rec, _ := e.st.get(e.key(1))
	if rec.RetryAttempt != 1 || !strings.Contains(rec.ErrorMessage, "corrupt-batch") {
		t.Fatalf("FAILED record %s, want attempt 1 with a corrupt-batch error", rec)
	}
	// More data: partition 0 follows, partition 1 stays empty.
	produce(t, ctx, seeds, "events", 2, 50, kgo.NoCompression())
	e.waitCaughtUp(hw(0), 0, partition.StateMirroring)
	l1 := e.dest.local(e.tp(1)).log
	if l1.LogEndOffset() != 0 || l1.Size() != 0 {
		t.Fatalf("partition 1: log end %d, %d bytes; want nothing appended", l1.LogEndOffset(), l1.Size())
	}
	ps, ok := statusOf(e.mgr, e.tp(1))
	if !ok || ps.State != partition.StateFailed || !strings.Contains(ps.LastError, "corrupt") || ps.DestinationLogEndOffset != 0 {
		t.Fatalf("partition 1 status %+v, want FAILED with the corrupt batch error", ps)
	}
	mu.Lock()
	flips := int64(0)
	for _, c := range wrapped {
		flips += c.flipped.Load()
	}
	mu.Unlock()
	if flips < 1 {
		t.Fatalf("no batch was corrupted")
	}
	if src := sourceBatches(t, ctx, kc, "events", 0, id); true {
		if count, mismatches := compareLogs(src, localBatches(t, e.dest.local(e.tp(0)).log)); count != len(src) || mismatches != 0 {
			t.Fatalf("partition 0: %d batches, source %d, %d mismatches", count, len(src), mismatches)
		}
	}
}

// TestOldEpochEffectsDropped: an effect emitted under an older leader
// epoch than the machine's is not performed (a RemoveFetcher is).
func TestOldEpochEffectsDropped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, []string{"127.0.0.1:1"}, "t", storage.TopicID{1}, 1, 5)
	m := e.mgr
	mc, err := partition.New(machineConfig(m.cfg.Retry, m.rng))
	if err != nil {
		t.Fatal(err)
	}
	p := &part{tp: e.tp(0), topicID: e.id, m: mc, exec: newExecutor()}
	p.epoch.Store(5)
	rec := partition.EmptyRecord()
	rec.State, rec.StateEpoch, rec.LeaderEpoch = partition.StatePreparing, 1, 4
	queued := func() int {
		m.qmu.Lock()
		defer m.qmu.Unlock()
		return len(m.queue)
	}
	ctx := t.Context()
	for _, k := range []partition.EffectKind{partition.WriteMirrorState, partition.SetReadOnly, partition.TruncateFully,
		partition.AppendMirrorPIDReset, partition.AbortOpenTransactions, partition.BumpLeaderEpoch} {
		m.perform(ctx, p, partition.Effect{Kind: k, Ref: partition.Ref{LeaderEpoch: 4, Seq: 1}, Reply: true, Mirror: "m",
			Record: rec, ExpectedStateEpoch: 0, Epoch: 6})
	}
	snap := e.dest.snapshot(e.tp(0))
	if e.st.writes != 0 || len(snap.accessLog) != 0 || snap.fullTruncs != 0 || snap.pidResets != 0 || snap.aborted != 0 ||
		snap.log.LogEndOffset() != 0 || len(e.ctrl.bumps()) != 0 || queued() != 0 {
		t.Fatalf("old-epoch effects ran: %d writes, access %v, %d truncations, %d PID resets, %d aborts, LEO %d, bumps %v, %d results",
			e.st.writes, snap.accessLog, snap.fullTruncs, snap.pidResets, snap.aborted, snap.log.LogEndOffset(), e.ctrl.bumps(), queued())
	}
	// RemoveFetcher runs whatever its epoch (its answer then fails: the
	// handle of epoch 4 is gone).
	m.perform(ctx, p, partition.Effect{Kind: partition.RemoveFetcher, Ref: partition.Ref{LeaderEpoch: 4, Seq: 2}, Reply: true})
	if queued() != 1 {
		t.Fatalf("old-epoch RemoveFetcher: %d results, want 1", queued())
	}
	// The same write at the current epoch runs.
	rec.LeaderEpoch = 5
	m.perform(ctx, p, partition.Effect{Kind: partition.WriteMirrorState, Ref: partition.Ref{LeaderEpoch: 5, Seq: 3}, Reply: true,
		Mirror: "m", Record: rec})
	if e.st.writes != 1 || queued() != 2 {
		t.Fatalf("current-epoch write: %d writes, %d results; want 1, 2", e.st.writes, queued())
	}
}

// TestSourceEpochAheadBumps: the source leader moves (its epoch goes to
// 1) while the destination leads at epoch 0: the fetcher holds the new
// batches back and the machine bumps the destination epoch to 1, after
// which they are copied (KIP-1279's DLE >= SLE).
func TestSourceEpochAheadBumps(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 25*time.Second)
	defer cancel()
	kc, id := startKfake(t, "moves", 1, kfake.NumBrokers(2))
	seeds := kc.ListenAddrs()
	produce(t, ctx, seeds, "moves", 1, 50, kgo.NoCompression())
	e := newEnv(t, seeds, "moves", id, 1, 0)
	e.mgr.Start(ctx)
	hw := func() int64 { return kc.PartitionInfo("moves", 0).HighWatermark }
	e.waitCaughtUp(hw, 0, partition.StateMirroring)
	if n := len(e.ctrl.bumps()); n != 0 {
		t.Fatalf("%d epoch bumps before the source epoch moved", n)
	}
	other := int32(0)
	if kc.LeaderFor("moves", 0) == 0 {
		other = 1
	}
	if err := kc.MoveTopicPartition("moves", 0, other); err != nil {
		t.Fatal(err)
	}
	produce(t, ctx, seeds, "moves", 1, 30, kgo.NoCompression())
	e.waitCaughtUp(hw, 0, partition.StateMirroring)
	if got, want := e.ctrl.bumps(), []bumpCall{{e.tp(0), 0, 1}}; !slices.Equal(got, want) {
		t.Fatalf("epoch bumps %+v, want %+v", got, want)
	}
	src := sourceBatches(t, ctx, kc, "moves", 0, id)
	dst := localBatches(t, e.dest.local(e.tp(0)).log)
	if count, mismatches := compareLogs(src, dst); count != len(src) || mismatches != 0 {
		t.Fatalf("%d batches, source %d, %d mismatches", count, len(src), mismatches)
	}
	if last := dst[len(dst)-1].PartitionLeaderEpoch(); last != 1 {
		t.Fatalf("last batch epoch %d, want 1", last)
	}
	if snap := e.dest.snapshot(e.tp(0)); snap.epoch != 1 || snap.truncations != 0 {
		t.Fatalf("destination epoch %d, %d truncations; want 1, 0", snap.epoch, snap.truncations)
	}
}

// TestStoppedPartitionHasNoLastError: a stop step that failed and was
// retried (here the STOPPING write, as a __mirror_state coordinator that
// has not seen the stop's leader epoch bump yet refuses it) is history
// once the partition is STOPPED: its status carries no error, so describe
// and the stop report do not show a stopped partition as failing.
func TestStoppedPartitionHasNoLastError(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 25*time.Second)
	defer cancel()
	kc, id := startKfake(t, "events", 1)
	seeds := kc.ListenAddrs()
	produce(t, ctx, seeds, "events", 1, 20, kgo.NoCompression())
	e := newEnv(t, seeds, "events", id, 1, 0)
	e.mgr.Start(ctx)
	e.waitCaughtUp(func() int64 { return kc.PartitionInfo("events", 0).HighWatermark }, 0, partition.StateMirroring)

	e.st.failNext(partition.StateStopping, 1)
	e.setMirrorName("m" + mirrorstate.SuffixRemoved)
	waitFor(t, 15*time.Second, func() string { return "records " + e.st.states(e.key(0)) }, func() bool {
		rec, ok := e.st.get(e.key(0))
		return ok && rec.State == partition.StateStopped
	})
	e.st.mu.Lock()
	failed := e.st.failed
	e.st.mu.Unlock()
	ps, ok := statusOf(e.mgr, e.tp(0))
	if failed != 1 || !ok || ps.State != partition.StateStopped || ps.LastError != "" {
		t.Fatalf("after %d refused STOPPING writes: status %+v, want STOPPED with no error", failed, ps)
	}
}
