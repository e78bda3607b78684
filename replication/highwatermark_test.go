package replication

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/strait-io/strait/raftmeta"
)

func TestHighWatermark(t *testing.T) {
	in := func(leo int64) followerProgress { return followerProgress{logEndOffset: leo, counts: true} }
	out := func(leo int64) followerProgress { return followerProgress{logEndOffset: leo} }
	for _, tc := range []struct {
		name      string
		leo       int64
		isr       int
		minISR    int
		followers []followerProgress
		hw        int64
		ok        bool
	}{
		{"leader alone", 10, 1, 1, nil, 10, true},
		{"a follower behind", 10, 2, 1, []followerProgress{in(7)}, 7, true},
		{"the slowest follower", 10, 3, 1, []followerProgress{in(7), in(4)}, 4, true},
		{"a follower that never fetched", 10, 2, 1, []followerProgress{in(-1)}, -1, true},
		{"a follower ahead does not raise it", 5, 2, 1, []followerProgress{in(7)}, 5, true},
		{"followers the leader does not wait for are ignored", 10, 1, 1, []followerProgress{out(3)}, 10, true},
		{"below min ISR", 10, 1, 2, []followerProgress{in(10)}, 0, false},
	} {
		hw, ok := highWatermark(tc.leo, tc.isr, tc.minISR, tc.followers)
		if hw != tc.hw || ok != tc.ok {
			t.Fatalf("%s: got %d %v, want %d %v", tc.name, hw, ok, tc.hw, tc.ok)
		}
	}
	// Against a naive definition: the largest offset every counted
	// follower has, at most the leader's log end offset.
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 1000; i++ {
		leo := rng.Int64N(100)
		var fs []followerProgress
		for n := rng.IntN(4); n > 0; n-- {
			fs = append(fs, followerProgress{logEndOffset: rng.Int64N(110) - 1, counts: rng.IntN(2) == 0})
		}
		hw, _ := highWatermark(leo, 1, 1, fs)
		naive := leo
		for off := int64(-1); off <= leo; off++ {
			all := true
			for _, f := range fs {
				if f.counts && f.logEndOffset < off {
					all = false
				}
			}
			if all {
				naive = off
			}
		}
		if hw != naive {
			t.Fatalf("leo %d followers %v: %d, naive %d", leo, fs, hw, naive)
		}
	}
	if got := effectiveMinISR(3, 1); got != 1 {
		t.Fatalf("effective min ISR capped at the replica count: %d", got)
	}
	if got := effectiveMinISR(0, 3); got != 1 {
		t.Fatalf("effective min ISR at least 1: %d", got)
	}
}

// Producers, long-poll fetchers and leadership flips together, for the
// race detector: every acknowledged acks=all record must be readable.
func TestConcurrentLeadershipChanges(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{replicas: []int32{localNode, 2}, isr: []int32{localNode}})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var (
		mu    sync.Mutex
		acked []int64
	)
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				req := produceReq(11, -1, "t", 0, h.batch("c", 1))
				req.TimeoutMillis = 200
				sp := h.rm.Produce(context.Background(), req).Topics[0].Partitions[0]
				if sp.ErrorCode == 0 {
					mu.Lock()
					acked = append(acked, sp.BaseOffset)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			req := fetchReq(12, fp("t", 0, 0))
			req.MaxWaitMillis, req.MinBytes = 20, 1<<20
			h.rm.Fetch(context.Background(), req)
		}
	}()
	for e := int32(1); e <= 20; e++ {
		leader := localNode
		if e%2 == 0 {
			leader = 2
		}
		h.changePartition("t", 0, func(p *raftmeta.Partition) { p.Leader, p.LeaderEpoch = leader, e })
		time.Sleep(time.Millisecond)
	}
	h.changePartition("t", 0, func(p *raftmeta.Partition) { p.Leader, p.LeaderEpoch = localNode, 21 })
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) > 0 })
	close(stop)
	wg.Wait()
	p := h.partition("t", 0)
	if len(acked) == 0 {
		t.Fatal("nothing was acknowledged")
	}
	for _, off := range acked {
		if off >= p.HighWatermark() {
			t.Fatalf("acknowledged offset %d is not below the HW %d", off, p.HighWatermark())
		}
	}
}
