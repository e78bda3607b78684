package fetcher

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/strait-io/strait/storage"
)

// refusingReplica refuses the first refusals appends with err, as the
// mirror's replica refuses batches above its leader epoch.
type refusingReplica struct {
	*storage.Log
	refusals int
	err      error
	calls    int
}

func (r *refusingReplica) AppendAsFollower(records []byte) (storage.AppendInfo, error) {
	r.calls++
	if r.refusals > 0 {
		r.refusals--
		return storage.AppendInfo{}, r.err
	}
	return r.Log.AppendAsFollower(records)
}

// An append refused with ErrRetryAppend keeps the partition at its fetch
// offset, backed off; after the backoff the same offset is fetched again
// and appended. Any other append error fails the partition.
func TestRetryAppend(t *testing.T) {
	c := newClock()
	rep := &refusingReplica{Log: logWith(t, c, "0-1:e1"), refusals: 2,
		err: fmt.Errorf("source epoch 7 above leader epoch 5: %w", ErrRetryAppend)}
	ep := &mockEndPoint{leader: leader2}
	ep.fetch = func(req *FetchRequest) (map[storage.TopicPartition]*FetchData, error) {
		if off := req.Partitions[tp0].FetchOffset; off != 2 {
			return nil, fmt.Errorf("fetch at %d, want 2", off)
		}
		return map[storage.TopicPartition]*FetchData{tp0: data(batches(t, "2-3:e7"), 4, 0)}, nil
	}
	f := New(Config{EndPoint: ep, Clock: c, Backoff: time.Second,
		Replicas: func(storage.TopicPartition) (Replica, error) { return rep, nil }})
	f.AddPartitions(map[storage.TopicPartition]InitialFetchState{tp0: {Leader: leader2, CurrentLeaderEpoch: 5, InitOffset: 2}})
	for i := 1; i <= 2; i++ {
		req := f.PollFetch()
		if req == nil {
			t.Fatalf("round %d: no fetch", i)
		}
		resp, err := ep.Fetch(t.Context(), req)
		if resets := f.CompleteFetch(req, resp, err); len(resets) != 0 {
			t.Fatalf("round %d: resets %v", i, resets)
		}
		st := mustState(t, f, tp0)
		if st.FetchOffset != 2 || st.Phase != Fetching || !st.IsDelayed(c.Now()) || rep.LogEndOffset() != 2 || rep.HighWatermark() != 0 {
			t.Fatalf("round %d: state %v LEO %d HW %d", i, st, rep.LogEndOffset(), rep.HighWatermark())
		}
		if f.cfg.Failed.Contains(tp0) || f.PollFetch() != nil {
			t.Fatalf("round %d: failed or fetched while backing off", i)
		}
		c.Advance(time.Second)
	}
	req := f.PollFetch()
	resp, err := ep.Fetch(t.Context(), req)
	f.CompleteFetch(req, resp, err)
	if st := mustState(t, f, tp0); st.FetchOffset != 4 || st.LastFetchedEpoch != 7 || rep.LogEndOffset() != 4 || rep.calls != 3 {
		t.Fatalf("after the refusals: state %v LEO %d, %d appends", st, rep.LogEndOffset(), rep.calls)
	}

	// Another error fails the partition.
	rep.refusals, rep.err = 1, errors.New("disk on fire")
	ep.fetch = func(req *FetchRequest) (map[storage.TopicPartition]*FetchData, error) {
		return map[storage.TopicPartition]*FetchData{tp0: data(batches(t, "4:e7"), 5, 0)}, nil
	}
	req = f.PollFetch()
	resp, err = ep.Fetch(t.Context(), req)
	f.CompleteFetch(req, resp, err)
	if _, ok := f.State(tp0); ok || !f.cfg.Failed.Contains(tp0) || rep.LogEndOffset() != 4 {
		t.Fatalf("a non-retriable append error: state kept %v, failed %v, LEO %d", ok, f.cfg.Failed.Contains(tp0), rep.LogEndOffset())
	}
}
