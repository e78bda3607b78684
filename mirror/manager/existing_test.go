package manager

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage/record"
)

// writeLocal appends n records to the destination log as a producer on
// this cluster would have, before the topic was mirrored.
func (e *env) writeLocal(p int32, n int) {
	e.t.Helper()
	l := e.dest.local(e.tp(p)).log
	recs := make([]record.Record, n)
	for i := range recs {
		v := fmt.Appendf(nil, "local %d", i)
		recs[i] = record.Record{KeyLen: -1, ValueLen: int32(len(v)), Value: v}
	}
	b, err := record.Build(record.BatchSpec{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1,
		BaseTimestamp: time.Now().UnixMilli()}, recs, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := l.AppendAsLeader(b, e.epochs[p], record.OriginClient); err != nil {
		e.t.Fatal(err)
	}
	l.UpdateHighWatermark(l.LogEndOffset())
}

// waitError waits until partition p's status shows an error containing
// want.
func (e *env) waitError(p int32, want string) {
	e.t.Helper()
	waitFor(e.t, 10*time.Second, func() string {
		ps, _ := statusOf(e.mgr, e.tp(p))
		return fmt.Sprintf("status %+v, want an error with %q", ps, want)
	}, func() bool {
		ps, ok := statusOf(e.mgr, e.tp(p))
		return ok && strings.Contains(ps.LastError, want)
	})
}

// TestStartKeepsRecordsTheSourceDoesNotShare: a destination partition that
// holds records of its own, started from a source with no LME for it (the
// KIP's first-time rule: truncate everything), is not truncated: the start
// waits in UNKNOWN, read-only, with an error naming the partition and the
// records, and retries. Allowing it (mirror.truncate.existing=true) lets it
// go on: one full truncation, then a copy of the source.
func TestStartKeepsRecordsTheSourceDoesNotShare(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 25*time.Second)
	defer cancel()
	kc, id := startKfake(t, "orders", 1)
	seeds := kc.ListenAddrs()
	produce(t, ctx, seeds, "orders", 1, 50, kgo.NoCompression())
	e := newEnv(t, seeds, "orders", id, 1, 0)
	e.writeLocal(0, 20)
	tp := e.tp(0)
	e.mgr.Start(ctx)

	e.waitError(0, "holds 20 records (offsets 0 to 19)")
	// Retried a few times over (step backoff 10-100 ms), never truncated.
	time.Sleep(300 * time.Millisecond)
	snap := e.dest.snapshot(tp)
	ps, _ := statusOf(e.mgr, tp)
	if snap.fullTruncs != 0 || snap.truncations != 0 || snap.log.LogEndOffset() != 20 || snap.log.LogStartOffset() != 0 {
		t.Fatalf("local log truncated: %d full, %d partial truncations, log [%d, %d)", snap.fullTruncs, snap.truncations,
			snap.log.LogStartOffset(), snap.log.LogEndOffset())
	}
	if ps.State != partition.StateUnknown || snap.access != partition.AccessReadOnly || e.st.states(e.key(0)) != "" {
		t.Fatalf("state %s, access %s, records %q; want UNKNOWN, read-only, none written", ps.State, snap.access, e.st.states(e.key(0)))
	}
	if !strings.Contains(ps.LastError, raftmeta.MirrorTruncateExistingConfig) {
		t.Fatalf("error %q does not say how to allow it", ps.LastError)
	}

	e.setMirrorConfig(raftmeta.MirrorTruncateExistingConfig, "true")
	e.waitCaughtUp(func() int64 { return kc.PartitionInfo("orders", 0).HighWatermark }, 0, partition.StateMirroring)
	src := sourceBatches(t, ctx, kc, "orders", 0, id)
	if count, mismatches := compareLogs(src, localBatches(t, e.dest.local(tp).log)); count != len(src) || mismatches != 0 {
		t.Fatalf("%d batches, source %d, %d mismatches", count, len(src), mismatches)
	}
	if snap := e.dest.snapshot(tp); snap.fullTruncs != 1 {
		t.Fatalf("%d full truncations, want 1", snap.fullTruncs)
	}
}

// TestSourceThatIsThisClusterIsNeverMirrored: a mirror whose source answers
// with this cluster's id is this cluster (a bootstrap list pointing back at
// it). Its partitions neither truncate nor fetch, even with an empty local
// log, and the status names the cause.
func TestSourceThatIsThisClusterIsNeverMirrored(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 25*time.Second)
	defer cancel()
	kc, id := startKfake(t, "orders", 1, kfake.ClusterID("this-cluster"))
	seeds := kc.ListenAddrs()
	produce(t, ctx, seeds, "orders", 1, 10, kgo.NoCompression())
	e := newEnv(t, seeds, "orders", id, 1, 0, func(c *Config) { c.ClusterID = "this-cluster" })
	tp := e.tp(0)
	e.mgr.Start(ctx)
	e.waitError(0, "which is this cluster's")
	time.Sleep(300 * time.Millisecond)
	snap := e.dest.snapshot(tp)
	if ps, _ := statusOf(e.mgr, tp); ps.State != partition.StateUnknown || snap.fullTruncs != 0 || snap.log.LogEndOffset() != 0 {
		t.Fatalf("state %s, %d full truncations, log end %d; want UNKNOWN, none, 0", ps.State, snap.fullTruncs, snap.log.LogEndOffset())
	}
}
