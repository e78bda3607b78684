package fetcher

import (
	"testing"

	"github.com/strait-io/strait/storage"
)

// fakeQuota is a follower throttle whose state the test sets.
type fakeQuota struct {
	throttled map[storage.TopicPartition]bool
	exceeded  bool
	recorded  int64
}

func (q *fakeQuota) IsThrottled(tp storage.TopicPartition) bool { return q.throttled[tp] }
func (q *fakeQuota) IsQuotaExceeded() bool                      { return q.exceeded }
func (q *fakeQuota) Record(n int64)                             { q.recorded += n }

// TestFollowerThrottle: while the follower quota is exceeded, a fetch
// leaves out a throttled partition that is not in sync (Kafka's
// ReplicaFetcherThread.shouldFollowerThrottle) but keeps an unthrottled
// one, and a throttled one in sync (lag 0), so acks=all never waits on the
// throttle. Bytes appended for throttled partitions are recorded.
func TestFollowerThrottle(t *testing.T) {
	c := newClock()
	tp1 := storage.TopicPartition{Topic: "t", Partition: 1}
	tpFree := storage.TopicPartition{Topic: "free", Partition: 0}
	logs := map[storage.TopicPartition]*storage.Log{tp0: logWith(t, c, "0:e1"), tp1: logWith(t, c, "0:e1"), tpFree: logWith(t, c, "0:e1")}
	q := &fakeQuota{throttled: map[storage.TopicPartition]bool{tp0: true, tp1: true}}
	ep := &mockEndPoint{leader: leader2}
	f := newFetcher(ep, c, logs)
	f.cfg.Quota = q
	init := InitialFetchState{Leader: leader2, CurrentLeaderEpoch: 1, InitOffset: 1}
	f.AddPartitions(map[storage.TopicPartition]InitialFetchState{tp0: init, tp1: init, tpFree: init})

	// Under the quota every partition is fetched; tp1 catches up (lag 0),
	// tp0 stays behind the leader's high watermark.
	req := f.PollFetch()
	if req == nil || len(req.Partitions) != 3 {
		t.Fatalf("under the quota: fetch %+v, want all 3 partitions", req)
	}
	b0, b1 := batches(t, "1-2:e1"), batches(t, "1:e1")
	f.CompleteFetch(req, map[storage.TopicPartition]*FetchData{
		tp0: data(b0, 10, 0), tp1: data(b1, 2, 0), tpFree: data(nil, 1, 0),
	}, nil)
	if q.recorded != int64(len(b0)+len(b1)) {
		t.Fatalf("recorded %d throttled bytes, want %d", q.recorded, len(b0)+len(b1))
	}

	q.exceeded = true
	req = f.PollFetch()
	if req == nil {
		t.Fatal("quota exceeded: no fetch at all, want the unthrottled and in-sync partitions")
	}
	if _, ok := req.Partitions[tp0]; ok {
		t.Fatalf("quota exceeded: the throttled partition behind the leader was fetched: %+v", req.Partitions)
	}
	for _, tp := range []storage.TopicPartition{tp1, tpFree} {
		if _, ok := req.Partitions[tp]; !ok {
			t.Fatalf("quota exceeded: %s (in sync or unthrottled) was left out: %+v", tp, req.Partitions)
		}
	}
	q.exceeded = false
	if req = f.PollFetch(); req == nil || len(req.Partitions) != 3 {
		t.Fatalf("quota back under: fetch %+v, want all 3 partitions", req)
	}
}
