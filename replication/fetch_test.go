package replication

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

func TestFetchReadsData(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{partitions: 2})
	h.mustProduce("t", 0, "a", 3, 0)
	h.mustProduce("t", 0, "b", 2, 3)
	h.mustProduce("t", 1, "c", 1, 0)
	res := decodeFetch(t, h.fetch(fetchReq(12, fp("t", 0, 1), fp("t", 1, 0))))
	if len(res) != 2 {
		t.Fatalf("%d partitions", len(res))
	}
	p0, p1 := res[0], res[1]
	// Reading from offset 1 returns the whole batch holding it, as Kafka does.
	if p0.ErrorCode != 0 || p0.HighWatermark != 5 || p0.LastStableOffset != 5 || p0.LogStartOffset != 0 ||
		!slices.Equal(p0.offsets, []int64{0, 1, 2, 3, 4}) || p0.values[3] != "b-0" || p0.PreferredReadReplica != -1 {
		t.Fatalf("partition 0: %+v offsets %v values %v", p0.FetchResponseTopicPartition, p0.offsets, p0.values)
	}
	if p1.ErrorCode != 0 || p1.HighWatermark != 1 || !slices.Equal(p1.values, []string{"c-0"}) {
		t.Fatalf("partition 1: %+v values %v", p1.FetchResponseTopicPartition, p1.values)
	}
	if p0.batches[0].PartitionLeaderEpoch != 0 {
		t.Fatalf("batch leader epoch %d, want 0", p0.batches[0].PartitionLeaderEpoch)
	}
	if h.metrics.out["t"] == 0 {
		t.Fatal("bytes out not counted")
	}
	// One response topic for consecutive partitions of a topic.
	r := h.fetch(fetchReq(12, fp("t", 0, 5), fp("t", 1, 1)))
	if len(r.Resp.Topics) != 1 || len(r.Resp.Topics[0].Partitions) != 2 {
		t.Fatalf("topics %+v", r.Resp.Topics)
	}
}

func TestFetchPartitionErrors(t *testing.T) {
	h := newHarness(t)
	topic := h.createTopic("t", topicSpec{epoch: 5})
	h.createTopic("not-here", topicSpec{replicas: []int32{2}, leader: 2, epoch: 3})
	h.mustProduce("t", 0, "a", 3, 0)
	withEpoch := func(p fetchPart, e int32) fetchPart { p.currentEpoch = e; return p }
	for _, tc := range []struct {
		name    string
		version int16
		part    fetchPart
		code    int16
		leader  int32
	}{
		{"out of range above", 12, fp("t", 0, 4), kerr.OffsetOutOfRange.Code, -1},
		{"out of range negative", 12, fp("t", 0, -1), kerr.OffsetOutOfRange.Code, -1},
		{"unknown topic", 12, fp("nope", 0, 0), kerr.UnknownTopicOrPartition.Code, -1},
		{"unknown partition", 12, fp("t", 3, 0), kerr.UnknownTopicOrPartition.Code, -1},
		{"not hosted", 12, fp("not-here", 0, 0), kerr.NotLeaderForPartition.Code, 2},
		{"fenced epoch", 12, withEpoch(fp("t", 0, 0), 4), kerr.FencedLeaderEpoch.Code, 1},
		{"unknown epoch", 12, withEpoch(fp("t", 0, 0), 6), kerr.UnknownLeaderEpoch.Code, -1},
		{"fenced epoch v11 has no CurrentLeader", 11, withEpoch(fp("t", 0, 0), 4), kerr.FencedLeaderEpoch.Code, -1},
	} {
		res := decodeFetch(t, h.fetch(fetchReq(tc.version, tc.part)))
		p := res[0]
		if p.ErrorCode != tc.code || p.HighWatermark != -1 || p.LogStartOffset != -1 || len(p.values) != 0 {
			t.Fatalf("%s: error %d HW %d logStart %d values %v, want %d -1 -1 none", tc.name, p.ErrorCode, p.HighWatermark, p.LogStartOffset, p.values, tc.code)
		}
		if p.CurrentLeader.LeaderID != tc.leader {
			t.Fatalf("%s: CurrentLeader %+v, want leader %d", tc.name, p.CurrentLeader, tc.leader)
		}
	}
	// The current epoch is accepted.
	if res := decodeFetch(t, h.fetch(fetchReq(12, withEpoch(fp("t", 0, 0), 5)))); res[0].ErrorCode != 0 || len(res[0].values) != 3 {
		t.Fatalf("current epoch: %+v", res[0].FetchResponseTopicPartition)
	}

	// v13 addresses topics by id.
	req := fetchReq(13, fp("", 0, 0))
	req.Topics[0].TopicID = topic.ID
	res := decodeFetch(t, h.fetch(req))
	if res[0].ErrorCode != 0 || len(res[0].values) != 3 || h.fetch(req).Resp.Topics[0].TopicID != topic.ID {
		t.Fatalf("by topic id: %+v", res[0].FetchResponseTopicPartition)
	}
	req.Topics[0].TopicID = [16]byte{9}
	if res := decodeFetch(t, h.fetch(req)); res[0].ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown topic id: error %d", res[0].ErrorCode)
	}
}

func TestFetchIsolation(t *testing.T) {
	h := newHarness(t)
	// Node 2 in the ISR holds the high watermark back.
	h.createTopic("t", topicSpec{replicas: []int32{localNode, 2}})
	h.mustProduce("t", 0, "a", 2, 0)
	follower := fetchReq(12, fp("t", 0, 2))
	follower.ReplicaID = 2
	decodeFetch(t, h.fetch(follower)) // node 2 now has offsets 0-1: HW 2
	h.mustProduce("t", 0, "b", 2, 2)

	consumer := decodeFetch(t, h.fetch(fetchReq(12, fp("t", 0, 0))))[0]
	if consumer.HighWatermark != 2 || !slices.Equal(consumer.offsets, []int64{0, 1}) {
		t.Fatalf("read_uncommitted: HW %d offsets %v, want 2 and [0 1]", consumer.HighWatermark, consumer.offsets)
	}
	// Past the high watermark a consumer gets nothing, not an error.
	if c := decodeFetch(t, h.fetch(fetchReq(12, fp("t", 0, 3))))[0]; c.ErrorCode != 0 || len(c.offsets) != 0 {
		t.Fatalf("consumer past HW: %+v", c.FetchResponseTopicPartition)
	}
	follower = fetchReq(12, fp("t", 0, 0))
	follower.ReplicaID = 2
	if f := decodeFetch(t, h.fetch(follower))[0]; !slices.Equal(f.offsets, []int64{0, 1, 2, 3}) {
		t.Fatalf("follower reads to the LEO: offsets %v", f.offsets)
	}
	// v15 carries the replica id in ReplicaState; an unknown replica is
	// told to retry.
	stranger := fetchReq(15, fp("", 0, 0))
	stranger.Topics[0].TopicID = h.img.Topics["t"].ID
	stranger.ReplicaState.ID = 3
	if f := decodeFetch(t, h.fetch(stranger))[0]; f.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("unassigned replica: error %d", f.ErrorCode)
	}
}

func TestFetchReadCommitted(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{})
	h.mustProduce("t", 0, "plain", 2, 0)
	p := h.partition("t", 0)
	txn := h.batchSpec(record.BatchSpec{ProducerID: 50, ProducerEpoch: 0, BaseSequence: 0, Transactional: true}, "txn", 2, 0)
	if _, err := p.appendRecordsToLeader(txn, record.OriginClient, 1); err != nil {
		t.Fatal(err)
	}
	h.mustProduce("t", 0, "after", 1, 4)

	committed := fetchReq(12, fp("t", 0, 0))
	committed.IsolationLevel = 1
	c := decodeFetch(t, h.fetch(committed))[0]
	if c.HighWatermark != 5 || c.LastStableOffset != 2 || !slices.Equal(c.offsets, []int64{0, 1}) || len(c.AbortedTransactions) != 0 {
		t.Fatalf("open transaction: HW %d LSO %d offsets %v aborted %v", c.HighWatermark, c.LastStableOffset, c.offsets, c.AbortedTransactions)
	}
	if u := decodeFetch(t, h.fetch(fetchReq(12, fp("t", 0, 0))))[0]; len(u.offsets) != 5 {
		t.Fatalf("read_uncommitted sees the open transaction: offsets %v", u.offsets)
	}
	abort := record.EndTxnMarkerBatch(record.ControlBatchSpec{ProducerID: 50, ProducerEpoch: 0, Timestamp: h.clock.Now().UnixMilli()}, false, 0)
	if _, err := h.rm.AppendCoordinator(context.Background(), storage.TopicPartition{Topic: "t"}, abort); err != nil {
		t.Fatal(err)
	}
	c = decodeFetch(t, h.fetch(committed))[0]
	if c.LastStableOffset != 6 || len(c.AbortedTransactions) != 1 || c.AbortedTransactions[0].ProducerID != 50 || c.AbortedTransactions[0].FirstOffset != 2 {
		t.Fatalf("aborted transaction: LSO %d aborted %+v", c.LastStableOffset, c.AbortedTransactions)
	}
	if !slices.Equal(c.offsets, []int64{0, 1, 2, 3, 4, 5}) || c.values[4] != "after-0" {
		t.Fatalf("read_committed after the abort: offsets %v values %v (5 is the abort marker)", c.offsets, c.values)
	}
}

func TestFetchMaxBytes(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{partitions: 2})
	for p := int32(0); p < 2; p++ {
		for i := 0; i < 2; i++ {
			if sp := h.produce(1, "t", p, h.batchSpec(record.BatchSpec{}, "v", 1, 1000)); sp.ErrorCode != 0 {
				t.Fatal(sp.ErrorCode)
			}
		}
	}
	small := func(p fetchPart) fetchPart { p.maxBytes = 100; return p }
	// PartitionMaxBytes below one batch: the first partition with data still
	// returns one whole batch; the next returns nothing rather than a part.
	res := decodeFetch(t, h.fetch(fetchReq(12, small(fp("t", 0, 0)), small(fp("t", 1, 0)))))
	if !slices.Equal(res[0].offsets, []int64{0}) || len(res[1].offsets) != 0 || res[1].ErrorCode != 0 {
		t.Fatalf("partition max bytes: %v and %v", res[0].offsets, res[1].offsets)
	}
	// MaxBytes for the whole response.
	req := fetchReq(12, fp("t", 0, 0), fp("t", 1, 0))
	req.MaxBytes = 1500
	res = decodeFetch(t, h.fetch(req))
	if !slices.Equal(res[0].offsets, []int64{0}) || len(res[1].offsets) != 0 {
		t.Fatalf("max bytes: %v and %v", res[0].offsets, res[1].offsets)
	}
	req.MaxBytes = 1 << 20
	res = decodeFetch(t, h.fetch(req))
	if !slices.Equal(res[0].offsets, []int64{0, 1}) || !slices.Equal(res[1].offsets, []int64{0, 1}) {
		t.Fatalf("room for all: %v and %v", res[0].offsets, res[1].offsets)
	}
}

func TestFetchLongPoll(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{partitions: 2})
	poll := func(ctx context.Context, maxWait int32, minBytes int32) (chan *FetchResult, time.Time) {
		req := fetchReq(12, fp("t", 0, 0), fp("t", 1, 0))
		req.MaxWaitMillis, req.MinBytes = maxWait, minBytes
		ch := make(chan *FetchResult, 1)
		start := time.Now()
		go func() { ch <- h.rm.Fetch(ctx, req) }()
		return ch, start
	}

	// Times out after MaxWait with nothing.
	ch, start := poll(context.Background(), 60, 1)
	res := <-ch
	if el := time.Since(start); el < 60*time.Millisecond {
		t.Fatalf("answered after %v, before MaxWait", el)
	}
	if got := decodeFetch(t, res); len(got[0].offsets)+len(got[1].offsets) != 0 {
		t.Fatal("data from empty partitions")
	}

	// Woken by an append to any fetched partition, long before MaxWait.
	ch, start = poll(context.Background(), 20000, 1)
	time.Sleep(20 * time.Millisecond)
	select {
	case <-ch:
		t.Fatal("answered without data or timeout")
	default:
	}
	h.mustProduce("t", 1, "x", 2, 0)
	select {
	case res := <-ch:
		got := decodeFetch(t, res)
		if !slices.Equal(got[1].values, []string{"x-0", "x-1"}) || got[1].HighWatermark != 2 {
			t.Fatalf("woken fetch: %+v", got[1])
		}
		if el := time.Since(start); el > 10*time.Second {
			t.Fatalf("took %v", el)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the append did not wake the long poll")
	}

	// MinBytes larger than one append: it waits for more.
	ch, _ = poll(context.Background(), 20000, 300)
	h.mustProduce("t", 0, "small", 1, 0)
	select {
	case <-ch:
		t.Fatal("answered below MinBytes")
	case <-time.After(30 * time.Millisecond):
	}
	if sp := h.produce(1, "t", 0, h.batchSpec(record.BatchSpec{}, "big", 1, 400)); sp.ErrorCode != 0 {
		t.Fatal(sp.ErrorCode)
	}
	select {
	case res := <-ch:
		if got := decodeFetch(t, res); len(got[0].offsets) != 2 {
			t.Fatalf("offsets %v", got[0].offsets)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("MinBytes reached but the fetch did not answer")
	}

	// Leadership moving away answers at once: a client that knows the
	// epoch is fenced (with the new leader, v12+)...
	pollEpoch := func(version int16) chan *FetchResult {
		p := fp("t", 0, 1)
		p.currentEpoch = h.partition("t", 0).LeaderEpoch()
		req := fetchReq(version, p)
		req.MaxWaitMillis, req.MinBytes = 20000, 1<<20
		ch := make(chan *FetchResult, 1)
		go func() { ch <- h.rm.Fetch(context.Background(), req) }()
		return ch
	}
	ch = pollEpoch(12)
	time.Sleep(10 * time.Millisecond)
	h.changePartition("t", 0, func(p *raftmeta.Partition) { p.Leader, p.LeaderEpoch = 2, 1; p.Replicas = []int32{localNode, 2} })
	select {
	case res := <-ch:
		if got := decodeFetch(t, res); got[0].ErrorCode != kerr.FencedLeaderEpoch.Code || got[0].CurrentLeader.LeaderID != 2 || got[0].CurrentLeader.LeaderEpoch != 1 {
			t.Fatalf("after leadership moved: %+v", got[0].FetchResponseTopicPartition)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the leadership change did not end the long poll")
	}
	// A pre-v11 consumer must read from the leader: NOT_LEADER_OR_FOLLOWER.
	// From v11 a consumer may read a follower up to its high watermark
	// (KIP-392).
	if got := decodeFetch(t, h.fetch(fetchReq(10, fp("t", 0, 0))))[0]; got.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("v10 fetch from a follower: error %d", got.ErrorCode)
	}
	if got := decodeFetch(t, h.fetch(fetchReq(12, fp("t", 0, 0))))[0]; got.ErrorCode != 0 || len(got.offsets) != 2 {
		t.Fatalf("v12 fetch from a follower: error %d offsets %v", got.ErrorCode, got.offsets)
	}

	// Server shutdown (context cancellation) releases the poll.
	ctx, cancel := context.WithCancel(context.Background())
	ch, _ = poll(ctx, 60000, 1<<20)
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("cancellation did not end the long poll")
	}
}

func TestFetchLongPollStop(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{})
	req := fetchReq(12, fp("t", 0, 0))
	req.MaxWaitMillis, req.MinBytes = 60000, 1
	done := make(chan struct{})
	go func() { h.rm.Fetch(context.Background(), req); close(done) }()
	time.Sleep(10 * time.Millisecond)
	h.rm.Stop()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not release the long poll")
	}
}

// KIP-320/595: a fetcher whose last fetched epoch ended earlier here gets
// DivergingEpoch and no data.
func TestFetchDivergingEpoch(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{epoch: 1})
	h.mustProduce("t", 0, "e1", 3, 0) // epoch 1: offsets 0-2
	h.changePartition("t", 0, func(p *raftmeta.Partition) { p.LeaderEpoch = 3 })
	h.mustProduce("t", 0, "e3", 2, 3) // epoch 3: offsets 3-4
	last := func(offset int64, epoch int32) fetchPart {
		p := fp("t", 0, offset)
		p.lastFetchEpoch = epoch
		return p
	}
	for _, tc := range []struct {
		name       string
		part       fetchPart
		code       int16
		divEpoch   int32
		divEnd     int64
		wantValues int
	}{
		{"epoch 2 never existed here", last(5, 2), 0, 1, 3, 0},
		{"epoch 1 ended before the fetch offset", last(4, 1), 0, 1, 3, 0},
		{"consistent at the epoch boundary", last(3, 1), 0, -1, -1, 2},
		{"consistent in the latest epoch", last(4, 3), 0, -1, -1, 2},
		{"an epoch above every known one", last(4, 7), kerr.OffsetOutOfRange.Code, -1, -1, 0},
	} {
		res := decodeFetch(t, h.fetch(fetchReq(12, tc.part)))[0]
		if res.ErrorCode != tc.code || res.DivergingEpoch.Epoch != tc.divEpoch || res.DivergingEpoch.EndOffset != tc.divEnd || len(res.values) != tc.wantValues {
			t.Fatalf("%s: error %d diverging %+v values %v", tc.name, res.ErrorCode, res.DivergingEpoch, res.values)
		}
		if tc.divEpoch >= 0 && res.HighWatermark != 5 {
			t.Fatalf("%s: a diverging answer still carries the HW: %d", tc.name, res.HighWatermark)
		}
	}
	// A diverging partition answers a long poll at once.
	req := fetchReq(12, last(5, 2))
	req.MaxWaitMillis, req.MinBytes = 20000, 1
	start := time.Now()
	h.fetch(req)
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("diverging long poll waited %v", el)
	}
}

// The epoch cache learns a new leader epoch with its first append; until
// then OffsetForLeaderEpoch and divergence checks answer as if the epoch
// had been assigned when leadership began (Kafka's makeLeader).
func TestNewLeaderEpochBeforeAppend(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{epoch: 1})
	h.mustProduce("t", 0, "e1", 3, 0)
	h.changePartition("t", 0, func(p *raftmeta.Partition) { p.LeaderEpoch = 4 })
	for _, tc := range []struct {
		req, epoch int32
		end        int64
	}{
		{4, 4, 3}, {3, 1, 3}, {1, 1, 3}, {5, -1, -1}, {0, 0, 0},
	} {
		resp := h.rm.OffsetForLeaderEpoch(context.Background(), offsetForEpochReq("t", 0, -1, tc.req))
		sp := resp.Topics[0].Partitions[0]
		if sp.ErrorCode != 0 || sp.LeaderEpoch != tc.epoch || sp.EndOffset != tc.end {
			t.Fatalf("epoch %d: got %d/%d err %d, want %d/%d", tc.req, sp.LeaderEpoch, sp.EndOffset, sp.ErrorCode, tc.epoch, tc.end)
		}
	}
	p := fp("t", 0, 3)
	p.lastFetchEpoch = 1
	if res := decodeFetch(t, h.fetch(fetchReq(12, p)))[0]; res.ErrorCode != 0 || res.DivergingEpoch.Epoch != -1 {
		t.Fatalf("consistent fetch in the new epoch: %+v", res.FetchResponseTopicPartition)
	}
}

func TestFetchFirstEntryIncomplete(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{partitions: 2})
	h.mustProduce("t", 0, "a", 1, 0)
	if sp := h.produce(1, "t", 1, h.batchSpec(record.BatchSpec{}, "big", 1, 5000)); sp.ErrorCode != 0 {
		t.Fatal(sp.ErrorCode)
	}
	small := fp("t", 1, 0)
	small.maxBytes = 100
	res := h.fetch(fetchReq(12, fp("t", 0, 0), small))
	got := decodeFetch(t, res)
	if len(got[0].values) != 1 || res.Slices[0][1].Size != 0 {
		t.Fatalf("a partial first batch must be dropped: %v, slice %d bytes", got[0].values, res.Slices[0][1].Size)
	}
}

func TestFetchConcurrentWithProducers(t *testing.T) {
	h := newHarness(t)
	const producers, perProducer, parts = 4, 40, 2
	h.createTopic("t", topicSpec{partitions: parts})
	var wg sync.WaitGroup
	for i := 0; i < producers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < perProducer; j++ {
				acks := []int16{-1, 1, 0}[j%3]
				if sp := h.produce(acks, "t", int32(j%parts), h.batch("p", 1+j%3)); sp.ErrorCode != 0 {
					t.Errorf("produce: %d", sp.ErrorCode)
					return
				}
			}
		}(i)
	}
	want := int64(0)
	for j := 0; j < perProducer; j++ {
		if j%parts == 0 {
			want += int64(1 + j%3)
		}
	}
	want *= producers
	// Long-poll consumers follow partition 0 until they have every record,
	// checking offsets arrive in order without gaps, below the high
	// watermark each answer reports, and that the offset after the last
	// one is never out of range (storage's TestReadWhileAnAppendPublishesItsBatch
	// holds the window this test once failed in, 36 of 1000 runs: a read
	// returned a batch whose append had not yet published the log end).
	for c := 0; c < 3; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next, prevHW := int64(0), int64(-1)
			deadline := time.Now().Add(20 * time.Second)
			for next < want && time.Now().Before(deadline) {
				at := next
				req := fetchReq(12, fp("t", 0, at))
				req.MaxWaitMillis, req.MinBytes = 500, 1
				res := h.rm.Fetch(context.Background(), req)
				got := decodeFetch(t, res)[0]
				if got.ErrorCode != 0 {
					t.Errorf("fetch at %d: error %d (the previous answer's high watermark %d)", at, got.ErrorCode, prevHW)
					return
				}
				for _, off := range got.offsets {
					if off < next {
						continue // the batch holding next starts before it
					}
					if off != next {
						t.Errorf("gap: got offset %d, want %d", off, next)
						return
					}
					if off >= got.HighWatermark {
						t.Errorf("fetch at %d returned offset %d, not below the high watermark %d it reports",
							at, off, got.HighWatermark)
						return
					}
					next++
				}
				prevHW = got.HighWatermark
			}
			if next != want {
				t.Errorf("consumer reached %d of %d", next, want)
			}
		}()
	}
	wg.Wait()
	if leo := h.partition("t", 0).Log().LogEndOffset(); leo != want {
		t.Fatalf("LEO %d, want %d", leo, want)
	}
	if !strings.HasPrefix(h.partition("t", 0).tp.String(), "t-0") {
		t.Fatal(h.partition("t", 0).tp.String())
	}
}

// A consumer tailing a partition while producers append fetches the offset
// after the last record it got. Every record a fetch returns must lie below
// the high watermark that answer reports, and so below the log end offset
// the next fetch finds: a read once returned a batch whose append had
// published the segment's bytes but not yet the log end offset, and the
// consumer's next fetch answered OFFSET_OUT_OF_RANGE (a kgo consumer with
// auto.offset.reset=earliest went back to offset 0).
func TestFetchTailNeverPastHighWatermark(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{})
	var (
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	batch := h.batch("p", 2)
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				resp := h.rm.Produce(context.Background(), produceReq(11, 1, "t", 0, slices.Clone(batch)))
				if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
					t.Errorf("produce: error %d", code)
					return
				}
			}
		}()
	}
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()
	var next, fetches int64
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); fetches++ {
		at := next
		got := decodeFetch(t, h.fetch(fetchReq(12, fp("t", 0, at))))[0]
		if got.ErrorCode != 0 {
			t.Fatalf("fetch %d at %d, an offset the previous answer led to: error %d", fetches, at, got.ErrorCode)
		}
		for _, off := range got.offsets {
			if off >= got.HighWatermark {
				t.Fatalf("fetch %d at %d returned offset %d, not below the high watermark %d it reports (LSO %d)",
					fetches, at, off, got.HighWatermark, got.LastStableOffset)
			}
			if off >= next {
				next = off + 1
			}
		}
	}
	if next == 0 {
		t.Fatal("the consumer read nothing")
	}
}

// The consumer's side of storage's TestReadWhileAnAppendPublishesItsBatch:
// a fetch that lands while an append has published its batch's bytes but
// not yet the log end offset. The append of an abort marker is held where
// it creates the segment's transaction index, between the two. A fetch
// must return nothing at or past the high watermark it reports, and the
// fetch a consumer makes next, from after the last record it got, must
// not be OFFSET_OUT_OF_RANGE: with auto.offset.reset=earliest a kgo
// consumer goes back to the log start, offset 0, on that answer.
func TestFetchDuringAnUnpublishedAppend(t *testing.T) {
	efs := vfs.WithErrors(vfs.OS{}, nil)
	h := newHarnessFS(t, efs, t.TempDir())
	h.createTopic("t", topicSpec{})
	h.mustProduce("t", 0, "a", 3, 0)
	h.appendTxn("t", 0, 7, 0, 0, "txn", 2) // offsets 3-4, open
	hw := h.partition("t", 0).Log().HighWatermark()
	if hw != 5 {
		t.Fatalf("high watermark %d, want 5", hw)
	}

	pause := vfs.PauseOn(vfs.OpCreate, storage.TxnIndexFileSuffix)
	efs.SetInjector(pause.Injector())
	defer pause.Release()
	markers := make(chan *kmsg.WriteTxnMarkersResponse, 1)
	go func() {
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		req.Version, req.Markers = 1, []kmsg.WriteTxnMarkersRequestMarker{txnMarker(7, 0, 0, false, "t", 0)}
		markers <- h.rm.WriteTxnMarkers(context.Background(), req)
	}()
	<-pause.Paused // the marker is in the segment at offset 5; the log end is still 5

	got := decodeFetch(t, h.fetch(fetchReq(12, fp("t", 0, 0))))[0]
	if got.ErrorCode != 0 || got.HighWatermark != hw {
		t.Fatalf("fetch at 0: error %d, high watermark %d, want 0 and %d", got.ErrorCode, got.HighWatermark, hw)
	}
	next := int64(0)
	for _, b := range got.batches {
		if last := b.FirstOffset + int64(b.LastOffsetDelta); last >= got.HighWatermark {
			t.Fatalf("fetch at 0 returned batch %d-%d, not below the high watermark %d it reports", b.FirstOffset, last, got.HighWatermark)
		}
		next = b.FirstOffset + int64(b.LastOffsetDelta) + 1
	}
	if again := decodeFetch(t, h.fetch(fetchReq(12, fp("t", 0, next))))[0]; again.ErrorCode != 0 {
		t.Fatalf("fetch at %d, after the last record the previous answer returned: error %d", next, again.ErrorCode)
	}

	pause.Release()
	if codes := markerCodes(t, <-markers); codes["7/t-0"] != 0 {
		t.Fatalf("abort marker: %v", codes)
	}
	if leo := h.partition("t", 0).Log().LogEndOffset(); leo != 6 {
		t.Fatalf("log end %d after the marker, want 6", leo)
	}
}
