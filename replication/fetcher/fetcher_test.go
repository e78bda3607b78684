package fetcher

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage"
)

var leader2 = BrokerEndPoint{ID: 2, Host: "127.0.0.2", Port: 9092}

func TestAddPartitions(t *testing.T) {
	c := newClock()
	withEpochs := logWith(t, c, "0-2:e3")
	bare := newLog(t, c)
	tp1 := storage.TopicPartition{Topic: "t", Partition: 1}
	f := newFetcher(&mockEndPoint{leader: leader2}, c, map[storage.TopicPartition]*storage.Log{tp0: withEpochs, tp1: bare})
	f.AddPartitions(map[storage.TopicPartition]InitialFetchState{
		tp0: {Leader: leader2, CurrentLeaderEpoch: 5, InitOffset: 3},
		tp1: {Leader: leader2, CurrentLeaderEpoch: 5, InitOffset: 0},
	})
	// Truncation on fetch: a log with epochs fetches at once, from its
	// end, with its latest epoch; a log without truncates to the HW.
	if st := mustState(t, f, tp0); st.Phase != Fetching || st.FetchOffset != 3 || st.LastFetchedEpoch != 3 || st.Lag != -1 {
		t.Fatalf("with epochs: %v", st)
	}
	if st := mustState(t, f, tp1); st.Phase != Truncating || st.FetchOffset != 0 || st.LastFetchedEpoch != NoEpoch {
		t.Fatalf("without epochs: %v", st)
	}
	// The same epoch keeps the state; a new one replaces it.
	f.AddPartitions(map[storage.TopicPartition]InitialFetchState{tp0: {Leader: leader2, CurrentLeaderEpoch: 5, InitOffset: 0}})
	if st := mustState(t, f, tp0); st.FetchOffset != 3 {
		t.Fatalf("same epoch re-added: %v", st)
	}
	f.AddPartitions(map[storage.TopicPartition]InitialFetchState{tp0: {Leader: leader2, CurrentLeaderEpoch: 6, InitOffset: -1}})
	if st := mustState(t, f, tp0); st.FetchOffset != 3 || st.CurrentLeaderEpoch != 6 {
		t.Fatalf("new epoch, negative init offset: %v", st)
	}
	// Without truncation on fetch everything truncates first.
	g := newFetcher(&mockEndPoint{leader: leader2, noTrunc: true}, c, map[storage.TopicPartition]*storage.Log{tp0: withEpochs})
	g.AddPartitions(map[storage.TopicPartition]InitialFetchState{tp0: {Leader: leader2, CurrentLeaderEpoch: 5, InitOffset: 3}})
	if st := mustState(t, g, tp0); st.Phase != Truncating || st.LastFetchedEpoch != NoEpoch {
		t.Fatalf("no truncation on fetch: %v", st)
	}
	if got := f.RemovePartitions([]storage.TopicPartition{tp1, {Topic: "x"}}); len(got) != 1 || f.PartitionCount() != 1 {
		t.Fatalf("remove: %v, %d left", got, f.PartitionCount())
	}
}

func TestFetchAppends(t *testing.T) {
	c := newClock()
	l := logWith(t, c, "0-1:e1")
	ep := &mockEndPoint{leader: leader2}
	f := newFetcher(ep, c, map[storage.TopicPartition]*storage.Log{tp0: l})
	f.AddPartitions(map[storage.TopicPartition]InitialFetchState{tp0: {TopicID: [16]byte{7}, Leader: leader2, CurrentLeaderEpoch: 2, InitOffset: 2}})
	req := f.PollFetch()
	if req == nil || len(req.Partitions) != 1 {
		t.Fatalf("fetch request: %+v", req)
	}
	if p := req.Partitions[tp0]; p.FetchOffset != 2 || p.LastFetchedEpoch != 1 || p.CurrentLeaderEpoch != 2 || p.TopicID != [16]byte{7} || p.LogStartOffset != 0 {
		t.Fatalf("fetch partition: %+v", p)
	}
	// Two whole batches and a cut-off third: the partial one is dropped.
	recs := batches(t, "2-3:e2 4:e2")
	partial := batches(t, "5-6:e2")
	resp := map[storage.TopicPartition]*FetchData{tp0: data(append(recs, partial[:len(partial)-3]...), 4, 0)}
	if resets := f.CompleteFetch(req, resp, nil); len(resets) != 0 {
		t.Fatalf("resets: %v", resets)
	}
	if l.LogEndOffset() != 5 || l.HighWatermark() != 4 {
		t.Fatalf("LEO %d HW %d, want 5 and 4", l.LogEndOffset(), l.HighWatermark())
	}
	if st := mustState(t, f, tp0); st.FetchOffset != 5 || st.LastFetchedEpoch != 2 || st.Lag != 0 || st.Phase != Fetching {
		t.Fatalf("after append: %v", st)
	}
	// A lower leader HW (a new leader catching up) does not lower ours;
	// the leader's log start offset is followed.
	req = f.PollFetch()
	f.CompleteFetch(req, map[storage.TopicPartition]*FetchData{tp0: data(nil, 2, 3)}, nil)
	if l.HighWatermark() != 4 || l.LogStartOffset() != 3 {
		t.Fatalf("HW %d log start %d, want 4 and 3", l.HighWatermark(), l.LogStartOffset())
	}
	// An answer for a fetch offset the partition has left is ignored.
	stale := f.PollFetch()
	f.CompleteFetch(f.PollFetch(), map[storage.TopicPartition]*FetchData{tp0: data(batches(t, "5:e2"), 6, 3)}, nil)
	f.CompleteFetch(stale, map[storage.TopicPartition]*FetchData{tp0: data(batches(t, "5:e2"), 6, 3)}, nil)
	if l.LogEndOffset() != 6 {
		t.Fatalf("LEO %d after a stale answer, want 6", l.LogEndOffset())
	}
}

func TestFetchDivergingEpoch(t *testing.T) {
	c := newClock()
	// Vanlightly's case F: the follower forked in epoch 2 after offset 0.
	l := logWith(t, c, "0:e1 1-2:e2")
	f := newFetcher(&mockEndPoint{leader: leader2}, c, map[storage.TopicPartition]*storage.Log{tp0: l})
	f.AddPartitions(map[storage.TopicPartition]InitialFetchState{tp0: {Leader: leader2, CurrentLeaderEpoch: 3, InitOffset: 3}})
	req := f.PollFetch()
	f.CompleteFetch(req, map[storage.TopicPartition]*FetchData{tp0: diverging(1, 2)}, nil)
	if l.LogEndOffset() != 1 {
		t.Fatalf("truncated to %d, want 1", l.LogEndOffset())
	}
	if st := mustState(t, f, tp0); st.FetchOffset != 1 || st.LastFetchedEpoch != 1 || st.Phase != Fetching {
		t.Fatalf("after truncation: %v", st)
	}
}

// Without truncation on fetch, OffsetForLeaderEpoch rounds find the
// divergence point, repeating while the leader answers an epoch the
// follower lacks (KIP-279).
func TestTruncationRounds(t *testing.T) {
	c := newClock()
	l := logWith(t, c, "0:e1 1-2:e3")
	ep := &mockEndPoint{leader: leader2, noTrunc: true}
	leaderEpochs := map[int32]EpochEndOffset{3: {LeaderEpoch: 2, EndOffset: 3}, 1: {LeaderEpoch: 1, EndOffset: 1}}
	ep.epochs = func(parts map[storage.TopicPartition]EpochRequest) (map[storage.TopicPartition]EpochEndOffset, error) {
		return map[storage.TopicPartition]EpochEndOffset{tp0: leaderEpochs[parts[tp0].LeaderEpoch]}, nil
	}
	ep.fetch = func(*FetchRequest) (map[storage.TopicPartition]*FetchData, error) { return nil, nil }
	f := newFetcher(ep, c, map[storage.TopicPartition]*storage.Log{tp0: l})
	f.AddPartitions(map[storage.TopicPartition]InitialFetchState{tp0: {Leader: leader2, CurrentLeaderEpoch: 5, InitOffset: 3}})
	if f.PollFetch() != nil {
		t.Fatal("a truncating partition was fetched")
	}
	ctx := context.Background()
	f.DoWork(ctx)
	if l.LogEndOffset() != 1 {
		t.Fatalf("first round truncated to %d, want 1", l.LogEndOffset())
	}
	if st := mustState(t, f, tp0); st.Phase != Truncating || st.FetchOffset != 1 {
		t.Fatalf("after the intermediate truncation: %v", st)
	}
	f.DoWork(ctx)
	if st := mustState(t, f, tp0); st.Phase != Fetching || st.FetchOffset != 1 || l.LogEndOffset() != 1 {
		t.Fatalf("after the final round: %v, LEO %d", st, l.LogEndOffset())
	}
	if len(ep.epochReq) != 2 || ep.epochReq[0][tp0] != (EpochRequest{5, 3}) || ep.epochReq[1][tp0] != (EpochRequest{5, 1}) {
		t.Fatalf("epoch requests: %v", ep.epochReq)
	}
	// An answer for an epoch the partition has left is dropped.
	f.AddPartitions(map[storage.TopicPartition]InitialFetchState{tp0: {Leader: leader2, CurrentLeaderEpoch: 6, InitOffset: 1}})
	req := f.PollTruncation()
	f.AddPartitions(map[storage.TopicPartition]InitialFetchState{tp0: {Leader: leader2, CurrentLeaderEpoch: 7, InitOffset: 1}})
	f.CompleteTruncation(req, map[storage.TopicPartition]EpochEndOffset{tp0: {LeaderEpoch: 0, EndOffset: 0}}, nil)
	if l.LogEndOffset() != 1 {
		t.Fatalf("a stale answer truncated to %d", l.LogEndOffset())
	}
}

func TestTruncateToHighWatermarkWithoutEpochs(t *testing.T) {
	c := newClock()
	// Batches without a partition leader epoch (an old message format)
	// leave the epoch cache empty: the high watermark is the only safe
	// truncation point (Kafka's truncateToHighWatermark).
	l := logWith(t, c, "0-4:e-1")
	if _, ok := l.LatestEpoch(); ok {
		t.Fatal("the log has an epoch")
	}
	f := newFetcher(&mockEndPoint{leader: leader2}, c, map[storage.TopicPartition]*storage.Log{tp0: l})
	f.AddPartitions(map[storage.TopicPartition]InitialFetchState{tp0: {Leader: leader2, CurrentLeaderEpoch: 1, InitOffset: 2}})
	if st := mustState(t, f, tp0); st.Phase != Truncating {
		t.Fatalf("added: %v", st)
	}
	if req := f.PollTruncation(); req != nil {
		t.Fatalf("a log without epochs sent %v", req)
	}
	if st := mustState(t, f, tp0); st.Phase != Fetching || st.FetchOffset != 2 || l.LogEndOffset() != 2 {
		t.Fatalf("after the HW truncation: %v, LEO %d", st, l.LogEndOffset())
	}
}

func TestOffsetOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		leaderStart, leaderEnd int64
		wantStart, wantEnd     int64
	}{
		{"leader deleted past us", 20, 30, 20, 20},
		{"we are ahead of the leader", 0, 3, 0, 3},
		{"in range after all", 2, 30, 0, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			l := logWith(t, c, "0-4:e1")
			ep := &mockEndPoint{leader: leader2}
			ep.fetch = func(*FetchRequest) (map[storage.TopicPartition]*FetchData, error) {
				return map[storage.TopicPartition]*FetchData{tp0: errData(kerr.OffsetOutOfRange.Code)}, nil
			}
			ep.offsets = func(_ storage.TopicPartition, ts int64) (OffsetAndEpoch, error) {
				if ts == storage.EarliestTimestamp {
					return OffsetAndEpoch{Offset: tc.leaderStart}, nil
				}
				return OffsetAndEpoch{Offset: tc.leaderEnd}, nil
			}
			f := newFetcher(ep, c, map[storage.TopicPartition]*storage.Log{tp0: l})
			f.AddPartitions(map[storage.TopicPartition]InitialFetchState{tp0: {Leader: leader2, CurrentLeaderEpoch: 2, InitOffset: 5}})
			f.DoWork(context.Background())
			if l.LogStartOffset() != tc.wantStart || l.LogEndOffset() != tc.wantEnd {
				t.Fatalf("log [%d, %d), want [%d, %d)", l.LogStartOffset(), l.LogEndOffset(), tc.wantStart, tc.wantEnd)
			}
			if st := mustState(t, f, tp0); st.FetchOffset != tc.wantEnd || st.Phase != Fetching || st.IsDelayed(c.Now()) {
				t.Fatalf("state: %v", st)
			}
		})
	}
}

func TestFetchErrors(t *testing.T) {
	c := newClock()
	l := logWith(t, c, "0-4:e1")
	ep := &mockEndPoint{leader: leader2}
	f := newFetcher(ep, c, map[storage.TopicPartition]*storage.Log{tp0: l})
	add := func(epoch int32) {
		f.AddPartitions(map[storage.TopicPartition]InitialFetchState{tp0: {Leader: leader2, CurrentLeaderEpoch: epoch, InitOffset: 5}})
	}
	add(2)
	// A retriable partition error backs the partition off for the backoff.
	f.CompleteFetch(f.PollFetch(), map[storage.TopicPartition]*FetchData{tp0: errData(kerr.NotLeaderForPartition.Code)}, nil)
	if st := mustState(t, f, tp0); !st.IsDelayed(c.Now()) || f.PollFetch() != nil {
		t.Fatalf("not delayed: %v", st)
	}
	c.Advance(time.Second)
	if f.PollFetch() == nil {
		t.Fatal("still delayed after the backoff")
	}
	// A request error backs off everything.
	f.CompleteFetch(f.PollFetch(), nil, errors.New("connection reset"))
	if f.PollFetch() != nil {
		t.Fatal("fetched right after a request error")
	}
	c.Advance(time.Second)
	// FENCED_LEADER_EPOCH for the epoch followed: wait for new metadata.
	req := f.PollFetch()
	f.CompleteFetch(req, map[storage.TopicPartition]*FetchData{tp0: errData(kerr.FencedLeaderEpoch.Code)}, nil)
	if _, ok := f.State(tp0); ok || !f.cfg.Failed.Contains(tp0) {
		t.Fatal("a fenced partition was not marked failed")
	}
	add(3)
	if f.cfg.Failed.Contains(tp0) {
		t.Fatal("re-adding did not clear the failure")
	}
	// Data for a partition at an offset its log is not at fails it
	// (Kafka's offset mismatch).
	req = f.PollFetch()
	if _, err := l.TruncateTo(4); err != nil {
		t.Fatal(err)
	}
	f.CompleteFetch(req, map[storage.TopicPartition]*FetchData{tp0: data(batches(t, "5:e3"), 6, 0)}, nil)
	if !f.cfg.Failed.Contains(tp0) {
		t.Fatal("an offset mismatch did not fail the partition")
	}
}

// Run copies from a leader until the replica caught up, and stops with
// its context.
func TestRunCopies(t *testing.T) {
	c := newClock()
	l := newLog(t, c)
	leaderLog := logWith(t, c, "0-9:e1 10-19:e2")
	ep := &mockEndPoint{leader: leader2}
	ep.fetch = func(req *FetchRequest) (map[storage.TopicPartition]*FetchData, error) {
		p := req.Partitions[tp0]
		info, err := leaderLog.Read(p.FetchOffset, 200, storage.FetchLogEnd, true)
		if err != nil {
			return nil, err
		}
		buf := make([]byte, info.Records.Size)
		if err := info.Records.ReadInto(buf); err != nil {
			return nil, err
		}
		return map[storage.TopicPartition]*FetchData{tp0: data(buf, leaderLog.LogEndOffset(), 0)}, nil
	}
	f := newFetcher(ep, c, map[storage.TopicPartition]*storage.Log{tp0: l})
	f.AddPartitions(map[storage.TopicPartition]InitialFetchState{tp0: {Leader: leader2, CurrentLeaderEpoch: 2, InitOffset: 0}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for l.HighWatermark() != 20 {
		if time.Now().After(deadline) {
			t.Fatalf("not caught up: LEO %d HW %d", l.LogEndOffset(), l.HighWatermark())
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if ep, ok := l.LatestEpoch(); !ok || ep != 2 || l.LogEndOffset() != 20 {
		t.Fatalf("latest epoch %d, LEO %d", ep, l.LogEndOffset())
	}
}
