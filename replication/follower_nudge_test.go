package replication

import (
	"context"
	"testing"
	"time"
)

// TestFollowerFetchNudgedByNewPartition: a follower's long poll on the
// partitions it fetches ends when a partition it has not fetched yet in
// this leadership gets data, so its next fetch can carry that partition;
// once it fetches the partition, appends there no longer end its polls of
// the others.
func TestFollowerFetchNudgedByNewPartition(t *testing.T) {
	h := newHarness(t)
	h.createTopic("old", topicSpec{replicas: []int32{localNode, 2}})
	h.mustProduce("old", 0, "o", 1, 0)
	follow := func(topic string, offset int64) {
		req := fetchReq(12, fp(topic, 0, offset))
		req.ReplicaID = 2
		if got := decodeFetch(t, h.fetch(req))[0]; got.ErrorCode != 0 {
			t.Fatalf("follower fetch of %s: error %d", topic, got.ErrorCode)
		}
	}
	follow("old", 0)
	poll := func() (chan *FetchResult, context.CancelFunc) {
		req := fetchReq(12, fp("old", 0, 1))
		req.ReplicaID, req.MaxWaitMillis, req.MinBytes = 2, 20000, 1
		ctx, cancel := context.WithCancel(context.Background())
		ch := make(chan *FetchResult, 1)
		go func() { ch <- h.rm.Fetch(ctx, req) }()
		time.Sleep(20 * time.Millisecond)
		select {
		case <-ch:
			t.Fatal("the long poll answered with nothing to say")
		default:
		}
		return ch, cancel
	}

	ch, cancel := poll()
	defer cancel()
	// Assigned, but nothing to fetch yet: the poll goes on.
	h.createTopic("new", topicSpec{replicas: []int32{localNode, 2}})
	select {
	case <-ch:
		t.Fatal("creating a partition ended the follower's poll")
	case <-time.After(30 * time.Millisecond):
	}
	if sp := h.produce(1, "new", 0, h.batch("n", 1)); sp.ErrorCode != 0 {
		t.Fatalf("produce to new: error %d", sp.ErrorCode)
	}
	select {
	case res := <-ch:
		if got := decodeFetch(t, res)[0]; got.ErrorCode != 0 || len(got.offsets) != 0 {
			t.Fatalf("nudged poll: error %d offsets %v, want an empty answer", got.ErrorCode, got.offsets)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("data on a partition the follower does not fetch yet did not end its poll")
	}

	// The follower now fetches the new partition too: appends there wake
	// only fetches that include it.
	follow("new", 0)
	ch, cancel2 := poll()
	defer cancel2()
	if sp := h.produce(1, "new", 0, h.batch("m", 1)); sp.ErrorCode != 0 {
		t.Fatalf("produce to new: error %d", sp.ErrorCode)
	}
	select {
	case <-ch:
		t.Fatal("an append to a partition the follower fetches elsewhere ended its poll of old")
	case <-time.After(50 * time.Millisecond):
	}
	h.mustProduce("old", 0, "p", 1, 1)
	select {
	case res := <-ch:
		if got := decodeFetch(t, res)[0]; len(got.offsets) != 1 || got.offsets[0] != 1 {
			t.Fatalf("poll woken by its own partition: offsets %v", got.offsets)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an append to old did not wake the poll")
	}
}
