package replication

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// txnMarker is one WriteTxnMarkers marker.
func txnMarker(pid int64, epoch int16, coordinatorEpoch int32, commit bool, topic string, partitions ...int32) kmsg.WriteTxnMarkersRequestMarker {
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, m.Committed = pid, epoch, coordinatorEpoch, commit
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = topic, partitions
	m.Topics = append(m.Topics, mt)
	return m
}

// writeMarkers sends a v1 WriteTxnMarkers and returns each partition's
// error code keyed "pid/topic-partition", failing on a duplicate key.
func (h *harness) writeMarkers(markers ...kmsg.WriteTxnMarkersRequestMarker) map[string]int16 {
	h.t.Helper()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version, req.Markers = 1, markers
	return markerCodes(h.t, h.rm.WriteTxnMarkers(context.Background(), req))
}

func markerCodes(t testing.TB, resp *kmsg.WriteTxnMarkersResponse) map[string]int16 {
	t.Helper()
	out := map[string]int16{}
	for _, m := range resp.Markers {
		for _, rt := range m.Topics {
			for _, rp := range rt.Partitions {
				k := fmt.Sprintf("%d/%s-%d", m.ProducerID, rt.Topic, rp.Partition)
				if _, dup := out[k]; dup {
					t.Fatalf("%s answered twice: %+v", k, resp)
				}
				out[k] = rp.ErrorCode
			}
		}
	}
	return out
}

// appendTxn appends a transactional batch of n records as a client would
// (transactional produce is refused by Produce until the coordinator lands).
func (h *harness) appendTxn(topic string, partition int32, pid int64, epoch int16, seq int32, prefix string, n int) storage.AppendInfo {
	h.t.Helper()
	b := h.batchSpec(record.BatchSpec{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, Transactional: true}, prefix, n, 0)
	info, err := h.partition(topic, partition).appendRecordsToLeader(b, record.OriginClient, 1)
	if err != nil {
		h.t.Fatal(err)
	}
	return info
}

// readCommitted fetches tp from 0 with isolation.level=read_committed.
func (h *harness) readCommitted(topic string, partition int32) fetchedPartition {
	h.t.Helper()
	req := fetchReq(12, fp(topic, partition, 0))
	req.IsolationLevel = 1
	return decodeFetch(h.t, h.fetch(req))[0]
}

// A commit and an abort in one request: both markers are appended, the
// last stable offset moves past them, read_committed readers get the
// aborted transaction (from the .txnindex) and the committed one's data.
func TestWriteTxnMarkersCommitAndAbort(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{partitions: 2})
	h.mustProduce("t", 0, "plain", 1, 0)
	h.appendTxn("t", 0, 50, 2, 0, "committed", 2) // offsets 1-2
	h.appendTxn("t", 1, 51, 0, 0, "aborted", 3)   // offsets 0-2
	h.mustProduce("t", 1, "after", 1, 3)
	for p, lso := range []int64{1, 0} {
		if c := h.readCommitted("t", int32(p)); c.LastStableOffset != lso {
			t.Fatalf("t-%d before the markers: LSO %d, want %d", p, c.LastStableOffset, lso)
		}
	}

	codes := h.writeMarkers(
		txnMarker(50, 2, 3, true, "t", 0, 0), // a partition named twice is written once
		txnMarker(51, 0, 3, false, "t", 1),
	)
	if want := map[string]int16{"50/t-0": 0, "51/t-1": 0}; !maps.Equal(codes, want) {
		t.Fatalf("markers: %v, want %v", codes, want)
	}

	c0 := h.readCommitted("t", 0)
	if c0.HighWatermark != 4 || c0.LastStableOffset != 4 || len(c0.AbortedTransactions) != 0 ||
		!slices.Equal(c0.offsets, []int64{0, 1, 2, 3}) || c0.values[1] != "committed-0" {
		t.Fatalf("committed: HW %d LSO %d aborted %v offsets %v values %q", c0.HighWatermark, c0.LastStableOffset, c0.AbortedTransactions, c0.offsets, c0.values)
	}
	if c0.batches[2].Attributes&0x20 == 0 || c0.batches[2].ProducerID != 50 || c0.batches[2].ProducerEpoch != 2 {
		t.Fatalf("the commit marker: %+v", c0.batches[2])
	}
	c1 := h.readCommitted("t", 1)
	if c1.LastStableOffset != 5 || len(c1.AbortedTransactions) != 1 ||
		c1.AbortedTransactions[0].ProducerID != 51 || c1.AbortedTransactions[0].FirstOffset != 0 {
		t.Fatalf("aborted: LSO %d aborted %+v", c1.LastStableOffset, c1.AbortedTransactions)
	}

	// Two markers for one producer share its result, as Kafka keys them.
	h.appendTxn("t", 0, 50, 2, 2, "again", 1)
	codes = h.writeMarkers(txnMarker(50, 2, 3, true, "t", 0), txnMarker(50, 2, 3, true, "u", 0))
	if want := map[string]int16{"50/t-0": 0, "50/u-0": kerr.UnknownTopicOrPartition.Code}; !maps.Equal(codes, want) {
		t.Fatalf("one producer twice: %v, want %v", codes, want)
	}

	// The abort is in t-1's .txnindex (written out when the log closes),
	// in Kafka's 34-byte layout: version, producer id, first offset, last
	// offset (the marker's), last stable offset.
	h.close()
	idx, err := os.ReadFile(filepath.Join(h.dir, "t-1", "00000000000000000000.txnindex"))
	if err != nil || len(idx) != 34 || binary.BigEndian.Uint64(idx[2:]) != 51 ||
		binary.BigEndian.Uint64(idx[10:]) != 0 || binary.BigEndian.Uint64(idx[18:]) != 4 {
		t.Fatalf("t-1's transaction index: %x, %v", idx, err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "t-0", "00000000000000000000.txnindex")); !os.IsNotExist(err) {
		t.Fatalf("t-0 aborted nothing, yet has a transaction index: %v", err)
	}
}

// Storage's fences: a marker from an older coordinator epoch than the
// producer's last (a deposed coordinator) and one from an older producer
// epoch are refused and nothing is appended.
func TestWriteTxnMarkersFencing(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{})
	h.appendTxn("t", 0, 7, 1, 0, "a", 1)
	if codes := h.writeMarkers(txnMarker(7, 1, 5, true, "t", 0)); codes["7/t-0"] != 0 {
		t.Fatalf("first commit: %v", codes)
	}
	h.appendTxn("t", 0, 7, 1, 1, "b", 1)
	leo := h.partition("t", 0).Log().LogEndOffset()
	for _, tc := range []struct {
		name   string
		marker kmsg.WriteTxnMarkersRequestMarker
		code   int16
	}{
		{"older coordinator epoch", txnMarker(7, 1, 4, false, "t", 0), kerr.TransactionCoordinatorFenced.Code},
		{"older producer epoch", txnMarker(7, 0, 5, false, "t", 0), kerr.InvalidProducerEpoch.Code},
	} {
		if codes := h.writeMarkers(tc.marker); codes["7/t-0"] != tc.code {
			t.Fatalf("%s: %v, want %d", tc.name, codes, tc.code)
		}
		if got := h.partition("t", 0).Log().LogEndOffset(); got != leo {
			t.Fatalf("%s: log end %d, want %d (nothing appended)", tc.name, got, leo)
		}
	}
	if c := h.readCommitted("t", 0); c.LastStableOffset != 2 {
		t.Fatalf("the open transaction stays open: LSO %d, want 2", c.LastStableOffset)
	}
	// The current coordinator (epoch 5, or a newer one) still ends it.
	if codes := h.writeMarkers(txnMarker(7, 1, 6, false, "t", 0)); codes["7/t-0"] != 0 {
		t.Fatalf("abort by a newer coordinator: %v", codes)
	}
	if c := h.readCommitted("t", 0); c.LastStableOffset != 4 || len(c.AbortedTransactions) != 1 {
		t.Fatalf("after the abort: LSO %d aborted %+v", c.LastStableOffset, c.AbortedTransactions)
	}
}

// Partitions this node cannot write: no local replica, a follower, an ISR
// below min.insync.replicas, a failed disk.
func TestWriteTxnMarkersPartitionErrors(t *testing.T) {
	efs := vfs.WithErrors(vfs.NewMem(), nil)
	h := newHarnessFS(t, efs, "/data")
	h.createTopic("t", topicSpec{})
	h.createTopic("led-elsewhere", topicSpec{replicas: []int32{localNode, 2}, leader: 2, epoch: 7})
	h.createTopic("not-here", topicSpec{replicas: []int32{2}, leader: 2})
	h.createTopic("under-min-isr", topicSpec{replicas: []int32{localNode, 2}, isr: []int32{localNode},
		configs: map[string]string{"min.insync.replicas": "2"}})
	h.createTopic("disk", topicSpec{})
	h.appendTxn("disk", 0, 9, 0, 0, "a", 1)
	efs.SetInjector(vfs.OnOp(vfs.OpWrite, 0))
	defer func() {
		efs.SetInjector(nil)
		h.logs.Close() // the failed log refuses a clean close
		h.logs = nil
	}()

	codes := h.writeMarkers(
		txnMarker(9, 0, 0, true, "nope", 0),
		txnMarker(10, 0, 0, true, "t", 5),
		txnMarker(11, 0, 0, true, "led-elsewhere", 0),
		txnMarker(12, 0, 0, true, "not-here", 0),
		txnMarker(13, 0, 0, true, "under-min-isr", 0),
		txnMarker(14, 0, 0, true, "disk", 0),
	)
	want := map[string]int16{
		"9/nope-0":           kerr.UnknownTopicOrPartition.Code,
		"10/t-5":             kerr.UnknownTopicOrPartition.Code,
		"11/led-elsewhere-0": kerr.NotLeaderForPartition.Code,
		"12/not-here-0":      kerr.UnknownTopicOrPartition.Code,
		"13/under-min-isr-0": kerr.NotEnoughReplicas.Code,
		"14/disk-0":          kerr.KafkaStorageError.Code,
	}
	if !maps.Equal(codes, want) {
		t.Fatalf("partition errors:\n got %v\nwant %v", codes, want)
	}
	if leo := h.partition("under-min-isr", 0).Log().LogEndOffset(); leo != 0 {
		t.Fatalf("under min ISR: log end %d, want nothing appended", leo)
	}
}

// A follower in the ISR that never fetches the marker makes the request
// time out after request.timeout.ms; the marker is appended but decides
// nothing for readers until the high watermark passes it.
func TestWriteTxnMarkersTimesOut(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.RequestTimeoutMs = 50 })
	h.createTopic("t", topicSpec{replicas: []int32{localNode, 2}})
	h.appendTxn("t", 0, 3, 0, 0, "a", 2)
	h.followerFetch("t", 2, -1) // HW 2: the transaction's data is replicated
	p := h.partition("t", 0)
	if hw, lso := p.HighWatermark(), p.Log().LastStableOffset(); hw != 2 || lso != 0 {
		t.Fatalf("open transaction: HW %d LSO %d", hw, lso)
	}
	start := time.Now()
	if codes := h.writeMarkers(txnMarker(3, 0, 0, true, "t", 0)); codes["3/t-0"] != kerr.RequestTimedOut.Code {
		t.Fatalf("no follower progress: %v", codes)
	}
	if el := time.Since(start); el < 50*time.Millisecond {
		t.Fatalf("timed out after %v, before request.timeout.ms", el)
	}
	if leo, lso := p.Log().LogEndOffset(), p.Log().LastStableOffset(); leo != 3 || lso != 0 {
		t.Fatalf("after the timeout: LEO %d LSO %d, want 3 and 0", leo, lso)
	}
	h.followerFetch("t", 3, -1)
	if lso := p.Log().LastStableOffset(); lso != 3 {
		t.Fatalf("once the follower has the marker: LSO %d, want 3", lso)
	}
}

// The answer waits until the ISR has the marker (acks=all): only then does
// the last stable offset move, as it moves with the high watermark.
func TestWriteTxnMarkersAwaitISR(t *testing.T) {
	h := newHarness(t)
	h.createTopic("u", topicSpec{replicas: []int32{localNode, 2}})
	h.appendTxn("u", 0, 4, 0, 0, "b", 1)
	h.followerFetch("u", 1, -1)
	done := make(chan map[string]int16, 1)
	send := func(m kmsg.WriteTxnMarkersRequestMarker) {
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		req.Version, req.Markers = 1, []kmsg.WriteTxnMarkersRequestMarker{m}
		go func() { done <- markerCodes(t, h.rm.WriteTxnMarkers(context.Background(), req)) }()
	}
	send(txnMarker(4, 0, 0, false, "u", 0))
	u := h.partition("u", 0)
	waitFor(t, func() bool { return u.Log().LogEndOffset() == 2 })
	select {
	case codes := <-done:
		t.Fatalf("answered before the follower had the marker: %v", codes)
	case <-time.After(20 * time.Millisecond):
	}
	if lso := u.Log().LastStableOffset(); lso != 0 {
		t.Fatalf("LSO %d before the HW passes the marker, want 0", lso)
	}
	h.followerFetch("u", 2, -1)
	select {
	case codes := <-done:
		if codes["4/u-0"] != 0 {
			t.Fatalf("after the follower caught up: %v", codes)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the follower's progress did not complete the markers")
	}
	if lso := u.Log().LastStableOffset(); lso != 2 {
		t.Fatalf("LSO %d after the abort, want 2", lso)
	}
	if c := h.readCommitted("u", 0); len(c.AbortedTransactions) != 1 || c.AbortedTransactions[0].ProducerID != 4 {
		t.Fatalf("aborted transactions %+v", c.AbortedTransactions)
	}
}

// fakeCompleter records the markers handed to it and answers err.
type fakeCompleter struct {
	mu    sync.Mutex
	calls []string
	err   error
}

func (f *fakeCompleter) CompleteTransaction(ctx context.Context, tp storage.TopicPartition, pid int64, epoch int16, coordinatorEpoch int32, commit bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := ctx.Deadline(); !ok {
		return errors.New("no deadline")
	}
	f.calls = append(f.calls, fmt.Sprintf("%s pid=%d epoch=%d coordinator=%d commit=%t", tp, pid, epoch, coordinatorEpoch, commit))
	return f.err
}

// __consumer_offsets markers go to the group coordinator's completer when
// one is set (its not-ready errors become NOT_LEADER_OR_FOLLOWER), and are
// appended like any other partition's without one.
func TestWriteTxnMarkersConsumerOffsets(t *testing.T) {
	h := newHarness(t)
	h.createTopic("__consumer_offsets", topicSpec{partitions: 2})
	h.createTopic("t", topicSpec{})
	offsets := func(p int32) *Partition { return h.partition("__consumer_offsets", p) }

	// No completer: the marker is written to the log.
	if codes := h.writeMarkers(txnMarker(5, 0, 1, true, "__consumer_offsets", 1)); codes["5/__consumer_offsets-1"] != 0 {
		t.Fatalf("without a completer: %v", codes)
	}
	if leo := offsets(1).Log().LogEndOffset(); leo != 1 {
		t.Fatalf("without a completer: log end %d, want the marker at 0", leo)
	}

	c := &fakeCompleter{}
	h.rm.SetTxnMarkerCompleter(c)
	m := txnMarker(6, 2, 9, false, "__consumer_offsets", 0, 1)
	m.Topics = append(m.Topics, txnMarker(6, 2, 9, false, "t", 0).Topics...)
	if codes := h.writeMarkers(m); !maps.Equal(codes, map[string]int16{"6/__consumer_offsets-0": 0, "6/__consumer_offsets-1": 0, "6/t-0": 0}) {
		t.Fatalf("with a completer: %v", codes)
	}
	slices.Sort(c.calls)
	want := []string{
		"__consumer_offsets-0 pid=6 epoch=2 coordinator=9 commit=false",
		"__consumer_offsets-1 pid=6 epoch=2 coordinator=9 commit=false",
	}
	if !slices.Equal(c.calls, want) {
		t.Fatalf("completer calls:\n got %q\nwant %q", c.calls, want)
	}
	if leo0, leo1, leoT := offsets(0).Log().LogEndOffset(), offsets(1).Log().LogEndOffset(), h.partition("t", 0).Log().LogEndOffset(); leo0 != 0 || leo1 != 1 || leoT != 1 {
		t.Fatalf("log ends %d %d %d: the completer's partitions are not written here, t-0 is", leo0, leo1, leoT)
	}

	for _, tc := range []struct {
		err  error
		code int16
	}{
		{kerr.NotCoordinator, kerr.NotLeaderForPartition.Code},
		{fmt.Errorf("loading: %w", kerr.CoordinatorLoadInProgress), kerr.NotLeaderForPartition.Code},
		{kerr.CoordinatorNotAvailable, kerr.NotLeaderForPartition.Code},
		{kerr.TransactionCoordinatorFenced, kerr.TransactionCoordinatorFenced.Code},
		{kerr.RequestTimedOut, kerr.RequestTimedOut.Code},
	} {
		c.err = tc.err
		if codes := h.writeMarkers(txnMarker(6, 2, 9, true, "__consumer_offsets", 0)); codes["6/__consumer_offsets-0"] != tc.code {
			t.Fatalf("completer error %v: %v, want %d", tc.err, codes, tc.code)
		}
	}

	h.rm.SetTxnMarkerCompleter(nil)
	if codes := h.writeMarkers(txnMarker(6, 2, 9, true, "__consumer_offsets", 0)); codes["6/__consumer_offsets-0"] != 0 || offsets(0).Log().LogEndOffset() != 1 {
		t.Fatalf("completer removed: %v, log end %d", codes, offsets(0).Log().LogEndOffset())
	}
}

// An empty request answers an empty response.
func TestWriteTxnMarkersEmpty(t *testing.T) {
	h := newHarness(t)
	if resp := h.rm.WriteTxnMarkers(context.Background(), kmsg.NewPtrWriteTxnMarkersRequest()); len(resp.Markers) != 0 {
		t.Fatalf("empty request: %+v", resp)
	}
}
