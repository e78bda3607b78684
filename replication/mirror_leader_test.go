package replication

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// sourceBatches builds batches as a source cluster's log holds them, from
// a spec like "0-4:e2 5-9:e3": one batch per range, values
// "<prefix>-<offset>".
func sourceBatches(t *testing.T, prefix, spec string) []byte {
	t.Helper()
	var out []byte
	for _, part := range strings.Fields(spec) {
		var first, last int64
		var epoch int32
		if _, err := fmt.Sscanf(part, "%d-%d:e%d", &first, &last, &epoch); err != nil {
			t.Fatalf("bad spec %q: %v", part, err)
		}
		var recs []record.Record
		for off := first; off <= last; off++ {
			v := []byte(fmt.Sprintf("%s-%d", prefix, off))
			recs = append(recs, record.Record{KeyLen: -1, Value: v, ValueLen: int32(len(v)), OffsetDelta: int32(off - first)})
		}
		b, err := record.Build(record.BatchSpec{BaseOffset: first, PartitionLeaderEpoch: epoch, ProducerID: record.NoProducerID,
			ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence, BaseTimestamp: 1_700_000_000_000}, recs, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}

// followerFetch is node 2's fetch at offset with lastFetchedEpoch; it
// returns the partition's answer.
func (h *harness) followerFetch(topic string, offset int64, lastFetchedEpoch int32) fetchedPartition {
	h.t.Helper()
	p := fp(topic, 0, offset)
	p.lastFetchEpoch = lastFetchedEpoch
	return decodeFetch(h.t, h.fetch(fetchReqReplica(2, p)))[0]
}

func mustMirrorLeader(t *testing.T, rm *ReplicaManager, tp storage.TopicPartition, epoch int32) *MirrorLeaderPartition {
	t.Helper()
	lp, err := rm.MirrorLeader(tp, epoch)
	if err != nil {
		t.Fatalf("MirrorLeader(%s, %d): %v", tp, epoch, err)
	}
	return lp
}

func TestMirrorLeaderFencing(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{replicas: []int32{localNode, 2}, epoch: 5})
	h.createTopic("f", topicSpec{replicas: []int32{localNode, 2}, leader: 2, epoch: 5})
	tp := storage.TopicPartition{Topic: "t"}
	for _, tc := range []struct {
		tp    storage.TopicPartition
		epoch int32
		want  error
	}{
		{storage.TopicPartition{Topic: "nope"}, 0, kerr.NotLeaderForPartition},
		{storage.TopicPartition{Topic: "f"}, 5, kerr.NotLeaderForPartition},
		{tp, 4, kerr.FencedLeaderEpoch},
		{tp, 6, kerr.FencedLeaderEpoch},
	} {
		if _, err := h.rm.MirrorLeader(tc.tp, tc.epoch); !errors.Is(err, tc.want) {
			t.Fatalf("MirrorLeader(%s, %d): %v, want %v", tc.tp, tc.epoch, err, tc.want)
		}
	}
	ml := mustMirrorLeader(t, h.rm, tp, 5)
	if _, err := ml.AppendAsFollower(sourceBatches(t, "a", "0-4:e2")); err != nil {
		t.Fatal(err)
	}
	// A new epoch fences the handle: nothing changes.
	h.changePartition("t", 0, func(pp *raftmeta.Partition) { pp.LeaderEpoch = 6 })
	p := h.partition("t", 0)
	if _, err := ml.AppendAsFollower(sourceBatches(t, "a", "5-6:e2")); !errors.Is(err, kerr.FencedLeaderEpoch) {
		t.Fatalf("append in a left epoch: %v", err)
	}
	if _, err := ml.TruncateTo(1); !errors.Is(err, kerr.FencedLeaderEpoch) {
		t.Fatalf("truncate in a left epoch: %v", err)
	}
	if err := ml.TruncateFullyAndStartAt(9); !errors.Is(err, kerr.FencedLeaderEpoch) {
		t.Fatalf("restart in a left epoch: %v", err)
	}
	if _, err := ml.MaybeIncrementLogStartOffset(1); !errors.Is(err, kerr.FencedLeaderEpoch) {
		t.Fatalf("log start in a left epoch: %v", err)
	}
	if err := ml.AppendMirrorPIDReset(context.Background()); !errors.Is(err, kerr.FencedLeaderEpoch) {
		t.Fatalf("PID reset in a left epoch: %v", err)
	}
	if ml.ReplicasAt(5, true) {
		t.Fatal("ReplicasAt in a left epoch")
	}
	if p.Log().LogEndOffset() != 5 || p.Log().LogStartOffset() != 0 {
		t.Fatalf("a fenced handle changed the log: end %d start %d", p.Log().LogEndOffset(), p.Log().LogStartOffset())
	}
	// Leadership moves away: NOT_LEADER_OR_FOLLOWER in the same epoch.
	ml6 := mustMirrorLeader(t, h.rm, tp, 6)
	h.changePartition("t", 0, func(pp *raftmeta.Partition) { pp.Leader = 2 })
	if _, err := ml6.AppendAsFollower(sourceBatches(t, "a", "5-6:e2")); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("append after losing leadership: %v", err)
	}
	if _, err := h.rm.MirrorLeader(tp, 6); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("MirrorLeader of a follower: %v", err)
	}
}

// The mirror's appends move the high watermark from the ISR and wake
// fetches; its truncations bring the high watermark down with the log
// end, lower the followers' progress so the high watermark does not count
// offsets they hold from before, and the followers find the truncation
// with their next fetch. ReplicasAt counts only fetches after the handle
// was created and after the last truncation.
func TestMirrorLeaderAppendTruncate(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{replicas: []int32{localNode, 2}, epoch: 5})
	h.followerFetch("t", 0, -1) // a fetch from before the handle
	p := h.partition("t", 0)
	ml := mustMirrorLeader(t, h.rm, storage.TopicPartition{Topic: "t"}, 5)
	if ml.LastBatchEpoch() != -1 || ml.LeaderEpoch() != 5 || ml.TopicID() != p.topicID {
		t.Fatalf("empty handle: last batch epoch %d, epoch %d, topic id %v", ml.LastBatchEpoch(), ml.LeaderEpoch(), ml.TopicID())
	}
	if ml.ReplicasAt(0, false) {
		t.Fatal("a fetch from before the handle counted")
	}

	// A follower long poll parked at the log end wakes on the append.
	woke := make(chan fetchedPartition, 1)
	go func() {
		req := fetchReqReplica(2, fp("t", 0, 0))
		req.MinBytes, req.MaxWaitMillis = 1, 10_000
		woke <- decodeFetch(t, h.fetch(req))[0]
	}()
	time.Sleep(20 * time.Millisecond)
	info, err := ml.AppendAsFollower(sourceBatches(t, "a", "0-4:e2 5-9:e3"))
	if err != nil || info.FirstOffset != 0 || info.LastOffset != 9 {
		t.Fatalf("append: %+v %v", info, err)
	}
	select {
	case res := <-woke:
		if len(res.values) != 10 || res.values[9] != "a-9" {
			t.Fatalf("woken fetch: %v", res.values)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the follower's long poll did not wake on the mirror's append")
	}
	if p.Log().LogEndOffset() != 10 || ml.HighWatermark() != 0 || ml.LastBatchEpoch() != 3 {
		t.Fatalf("after the append: LEO %d HW %d last batch epoch %d", p.Log().LogEndOffset(), ml.HighWatermark(), ml.LastBatchEpoch())
	}
	if v, moved := ml.MaybeIncrementHighWatermark(10); v != 0 || moved {
		t.Fatalf("the source's high watermark set ours: %d %v", v, moved)
	}
	// The follower catches up: the ISR moves the high watermark.
	h.followerFetch("t", 10, 3)
	if ml.HighWatermark() != 10 || ml.LastStableOffset() != 10 || !ml.ReplicasAt(10, false) || !ml.ReplicasAt(10, true) || ml.ReplicasAt(9, false) {
		t.Fatalf("after the follower's fetch: HW %d LSO %d", ml.HighWatermark(), ml.LastStableOffset())
	}
	// The log start offset follows the source's, capped at the HW.
	if moved, err := ml.MaybeIncrementLogStartOffset(2); !moved || err != nil || p.Log().LogStartOffset() != 2 {
		t.Fatalf("log start: %v %v %d", moved, err, p.Log().LogStartOffset())
	}

	// Truncating inside the last batch drops all of it.
	if ok, err := ml.TruncateTo(7); !ok || err != nil {
		t.Fatalf("truncate: %v %v", ok, err)
	}
	if p.Log().LogEndOffset() != 7 || ml.HighWatermark() != 7 || ml.LastBatchEpoch() != 2 {
		t.Fatalf("after the truncation: LEO %d HW %d last batch epoch %d", p.Log().LogEndOffset(), ml.HighWatermark(), ml.LastBatchEpoch())
	}
	if ml.ReplicasAt(7, false) || ml.ReplicasAt(10, false) {
		t.Fatal("the follower's fetch from before the truncation counted")
	}
	// New source data: the follower's old log end (10) must not let the
	// high watermark pass 7 before it fetched again.
	if _, err := ml.AppendAsFollower(sourceBatches(t, "b", "7-11:e4")); err != nil {
		t.Fatal(err)
	}
	if hw := ml.HighWatermark(); hw != 7 {
		t.Fatalf("HW %d after the append: it counted the follower's progress from before the truncation", hw)
	}
	// The follower, still at 10 in epoch 3, diverges at the end of epoch 3.
	res := h.followerFetch("t", 10, 3)
	if res.ErrorCode != 0 || res.DivergingEpoch.Epoch != 3 || res.DivergingEpoch.EndOffset != 7 {
		t.Fatalf("the follower's fetch after the truncation: error %d diverging %+v", res.ErrorCode, res.DivergingEpoch)
	}
	h.followerFetch("t", 7, 3)
	if ml.HighWatermark() != 7 || !ml.ReplicasAt(7, false) {
		t.Fatalf("follower at 7: HW %d", ml.HighWatermark())
	}
	h.followerFetch("t", 12, 4)
	if ml.HighWatermark() != 12 || ml.ReplicasAt(7, false) || !ml.ReplicasAt(12, false) {
		t.Fatalf("follower at 12: HW %d", ml.HighWatermark())
	}

	// Restarting the log: everything is at the new offset; the follower's
	// fetch is out of range.
	if err := ml.TruncateFullyAndStartAt(20); err != nil {
		t.Fatal(err)
	}
	if p.Log().LogStartOffset() != 20 || p.Log().LogEndOffset() != 20 || ml.HighWatermark() != 20 || ml.LastBatchEpoch() != -1 {
		t.Fatalf("after the restart: start %d end %d HW %d last epoch %d", p.Log().LogStartOffset(), p.Log().LogEndOffset(), ml.HighWatermark(), ml.LastBatchEpoch())
	}
	if res := h.followerFetch("t", 12, 4); res.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("the follower's fetch below the restarted log: %+v", res.FetchResponseTopicPartition)
	}
	// The source's log starts inside its first batch (DeleteRecords
	// there): the empty log restarts at the batch's first offset.
	if info, err := ml.AppendAsFollower(sourceBatches(t, "c", "18-22:e4")); err != nil || info.FirstOffset != 18 || p.Log().LogEndOffset() != 23 || p.Log().LogStartOffset() != 18 {
		t.Fatalf("mid-batch restart: %+v %v, log [%d, %d)", info, err, p.Log().LogStartOffset(), p.Log().LogEndOffset())
	}
	// Not at the log start: the append is refused.
	var ue *storage.UnexpectedAppendOffsetError
	if _, err := ml.AppendAsFollower(sourceBatches(t, "c", "20-24:e4")); !errors.As(err, &ue) || ue.LastOffset != 24 || p.Log().LogEndOffset() != 23 {
		t.Fatalf("an overlapping append: %v, LEO %d", err, p.Log().LogEndOffset())
	}
}

// MIRROR_PID_RESET is a control batch appended in the handle's epoch and
// acknowledged like acks=all: refused below min.insync.replicas, waiting
// for the ISR otherwise.
func TestMirrorPIDReset(t *testing.T) {
	h := newHarness(t)
	h.createTopic("one", topicSpec{epoch: 3})
	ctx := context.Background()
	ml := mustMirrorLeader(t, h.rm, storage.TopicPartition{Topic: "one"}, 3)
	if _, err := ml.AppendAsFollower(sourceBatches(t, "a", "0-4:e1")); err != nil {
		t.Fatal(err)
	}
	if err := ml.AppendMirrorPIDReset(ctx); err != nil {
		t.Fatal(err)
	}
	l := h.partition("one", 0).Log()
	b, ok := firstBatchHeader(l, 5)
	if !ok || l.LogEndOffset() != 6 || ml.HighWatermark() != 6 || ml.LastBatchEpoch() != 3 || !b.IsControl() || b.ProducerID() != -1 {
		t.Fatalf("after the PID reset: LEO %d HW %d last epoch %d batch %v", l.LogEndOffset(), ml.HighWatermark(), ml.LastBatchEpoch(), ok)
	}
	full, err := l.Read(5, 1<<20, storage.FetchLogEnd, true)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, full.Records.Size)
	if err := full.Records.ReadInto(buf); err != nil || !testDecomp.IsMirrorPidReset(record.Batch(buf)) {
		t.Fatalf("the batch at 5 is not MIRROR_PID_RESET (%v)", err)
	}

	// min.insync.replicas 2 with the ISR at 1: refused, nothing appended.
	h.createTopic("short", topicSpec{replicas: []int32{localNode, 2}, isr: []int32{localNode}, configs: map[string]string{"min.insync.replicas": "2"}})
	ms := mustMirrorLeader(t, h.rm, storage.TopicPartition{Topic: "short"}, 0)
	if err := ms.AppendMirrorPIDReset(ctx); !errors.Is(err, kerr.NotEnoughReplicas) || ms.LogEndOffset() != 0 {
		t.Fatalf("below min ISR: %v, LEO %d", err, ms.LogEndOffset())
	}

	// With a follower in the ISR it waits for the follower.
	h.createTopic("two", topicSpec{replicas: []int32{localNode, 2}, configs: map[string]string{"min.insync.replicas": "2"}})
	mt := mustMirrorLeader(t, h.rm, storage.TopicPartition{Topic: "two"}, 0)
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if err := mt.AppendMirrorPIDReset(short); !errors.Is(err, kerr.RequestTimedOut) || mt.LogEndOffset() != 1 {
		t.Fatalf("no follower: %v, LEO %d", err, mt.LogEndOffset())
	}
	done := make(chan error, 1)
	go func() { done <- mt.AppendMirrorPIDReset(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for mt.LogEndOffset() != 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	h.followerFetch("two", 2, 0)
	select {
	case err := <-done:
		if err != nil || mt.HighWatermark() != 2 {
			t.Fatalf("after the follower's fetch: %v, HW %d", err, mt.HighWatermark())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the PID reset did not complete after the follower caught up")
	}
}

// txnSourceBatch is a source's transactional batch of n records from pid
// at base, or its COMMIT/ABORT marker when marker is "commit" or "abort".
func txnSourceBatch(t *testing.T, base int64, epoch int32, pid int64, n int, marker string) []byte {
	t.Helper()
	spec := record.ControlBatchSpec{ProducerID: pid, PartitionLeaderEpoch: epoch, Timestamp: 1_700_000_000_000}
	if marker != "" {
		b := record.EndTxnMarkerBatch(spec, marker == "commit", 0)
		b.SetBaseOffset(base)
		return b
	}
	var recs []record.Record
	for i := range n {
		v := []byte(fmt.Sprintf("p%d-%d", pid, base+int64(i)))
		recs = append(recs, record.Record{KeyLen: -1, Value: v, ValueLen: int32(len(v)), OffsetDelta: int32(i)})
	}
	b, err := record.Build(record.BatchSpec{BaseOffset: base, PartitionLeaderEpoch: epoch, ProducerID: pid, BaseSequence: 0,
		Transactional: true, BaseTimestamp: 1_700_000_000_000}, recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A stopped mirror's open transactions are aborted, not truncated: one
// ABORT marker per open transaction in the handle's epoch, after every
// mirrored record (committed transactions and plain records after the
// open one included), acknowledged like acks=all; the last stable offset
// then reaches the log end. Fenced in a left epoch, refused below
// min.insync.replicas, and a second call writes nothing.
func TestMirrorAbortOpenTransactions(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{replicas: []int32{localNode, 2}, epoch: 7, configs: map[string]string{"min.insync.replicas": "2"}})
	ctx := context.Background()
	ml := mustMirrorLeader(t, h.rm, storage.TopicPartition{Topic: "t"}, 7)
	var src []byte
	src = append(src, sourceBatches(t, "a", "0-4:e2")...)
	src = append(src, txnSourceBatch(t, 5, 2, 11, 2, "")...)        // [5,6] pid 11, never closed on the source side we saw
	src = append(src, txnSourceBatch(t, 7, 2, 12, 3, "")...)        // [7,9] pid 12
	src = append(src, txnSourceBatch(t, 10, 2, 12, 1, "commit")...) // 10: pid 12 committed
	src = append(src, sourceBatches(t, "b", "11-13:e2")...)
	src = append(src, txnSourceBatch(t, 14, 2, 13, 1, "")...) // 14: pid 13 open too
	if _, err := ml.AppendAsFollower(src); err != nil {
		t.Fatal(err)
	}
	h.followerFetch("t", 15, 2)
	p := h.partition("t", 0)
	if ml.HighWatermark() != 15 || ml.LastStableOffset() != 5 {
		t.Fatalf("mirrored: HW %d LSO %d, want 15 and 5", ml.HighWatermark(), ml.LastStableOffset())
	}

	// Without the follower's fetch the markers are appended but not acked.
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	aborted, err := ml.AbortOpenTransactions(short)
	if !errors.Is(err, kerr.RequestTimedOut) || len(aborted) != 2 || p.Log().LogEndOffset() != 17 || ml.LastStableOffset() != 5 {
		t.Fatalf("no follower: %v %v, LEO %d LSO %d", aborted, err, p.Log().LogEndOffset(), ml.LastStableOffset())
	}
	// Called again: nothing more to abort, it waits for the ISR.
	done := make(chan error, 1)
	go func() {
		again, err := ml.AbortOpenTransactions(ctx)
		if err == nil && len(again) != 0 {
			err = fmt.Errorf("aborted %v again", again)
		}
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	h.followerFetch("t", 17, 7)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the abort did not complete after the follower caught up")
	}
	if p.Log().LogEndOffset() != 17 || ml.HighWatermark() != 17 || ml.LastStableOffset() != 17 || len(p.Log().OpenTransactions()) != 0 {
		t.Fatalf("after the abort: LEO %d HW %d LSO %d open %v", p.Log().LogEndOffset(), ml.HighWatermark(), ml.LastStableOffset(),
			p.Log().OpenTransactions())
	}
	for off, pid := range map[int64]int64{15: 11, 16: 13} {
		b, ok := firstBatchHeader(p.Log(), off)
		if !ok || !b.IsControl() || b.ProducerID() != pid || b.PartitionLeaderEpoch() != 7 || b.BaseOffset() != off {
			t.Fatalf("batch at %d: %v control %v pid %d epoch %d; want pid %d's marker at epoch 7", off, ok, b.IsControl(),
				b.ProducerID(), b.PartitionLeaderEpoch(), pid)
		}
	}
	// read_committed: everything up to the log end, pid 11's and 13's
	// data reported aborted, the committed transaction and plain records
	// not.
	committed := fetchReq(12, fp("t", 0, 0))
	committed.IsolationLevel = 1
	res := decodeFetch(t, h.fetch(committed))[0]
	var abortedPIDs []int64
	for _, a := range res.AbortedTransactions {
		abortedPIDs = append(abortedPIDs, a.ProducerID)
	}
	if res.LastStableOffset != 17 || !slices.Equal(abortedPIDs, []int64{11, 13}) || len(res.offsets) != 17 ||
		res.values[7] != "p12-7" || res.values[11] != "b-11" {
		t.Fatalf("read_committed fetch: LSO %d aborted %v offsets %v values %v", res.LastStableOffset, abortedPIDs, res.offsets, res.values)
	}

	// A new epoch fences the handle.
	if _, err := ml.AppendAsFollower(txnSourceBatch(t, 17, 2, 14, 1, "")); err != nil {
		t.Fatal(err)
	}
	h.changePartition("t", 0, func(pp *raftmeta.Partition) { pp.LeaderEpoch = 8 })
	if _, err := ml.AbortOpenTransactions(ctx); !errors.Is(err, kerr.FencedLeaderEpoch) || p.Log().LogEndOffset() != 18 {
		t.Fatalf("abort in a left epoch: %v, LEO %d", err, p.Log().LogEndOffset())
	}
	// Below min.insync.replicas: refused, nothing appended.
	h.changePartition("t", 0, func(pp *raftmeta.Partition) { pp.ISR = []int32{localNode} })
	m8 := mustMirrorLeader(t, h.rm, storage.TopicPartition{Topic: "t"}, 8)
	if _, err := m8.AbortOpenTransactions(ctx); !errors.Is(err, kerr.NotEnoughReplicas) || p.Log().LogEndOffset() != 18 {
		t.Fatalf("below min ISR: %v, LEO %d", err, p.Log().LogEndOffset())
	}
}
