package replication

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestUnknownTopicWaitsForTheDeltaBeingApplied: a produce or fetch naming
// a topic this broker does not know waits while a metadata delta is being
// applied and is answered from the result (here the delta creates the
// topic); with no delta under way it is answered at once.
func TestUnknownTopicWaitsForTheDeltaBeingApplied(t *testing.T) {
	h := newHarness(t)
	end := h.rm.beginApplying() // a delta is being applied
	produced := make(chan kmsg.ProduceResponseTopicPartition, 1)
	go func() { produced <- h.produce(1, "late", 0, h.batch("x", 1)) }()
	fetched := make(chan *FetchResult, 1)
	go func() { fetched <- h.rm.Fetch(context.Background(), fetchReq(12, fp("late", 0, 0))) }()
	select {
	case <-produced:
		t.Fatal("the produce was answered before the delta being applied ended")
	case <-fetched:
		t.Fatal("the fetch was answered before the delta being applied ended")
	case <-time.After(50 * time.Millisecond):
	}
	h.createTopic("late", topicSpec{})
	end()
	select {
	case sp := <-produced:
		if sp.ErrorCode != 0 || sp.BaseOffset != 0 {
			t.Fatalf("produce after the delta: error %d base offset %d", sp.ErrorCode, sp.BaseOffset)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the produce still waits after the delta ended")
	}
	select {
	case res := <-fetched:
		if got := decodeFetch(t, res); got[0].ErrorCode != 0 {
			t.Fatalf("fetch after the delta: error %d", got[0].ErrorCode)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the fetch still waits after the delta ended")
	}

	start := time.Now()
	if sp := h.produce(1, "never", 0, h.batch("y", 1)); sp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("produce to an unknown topic: error %d", sp.ErrorCode)
	}
	if got := decodeFetch(t, h.fetch(fetchReq(12, fp("never", 0, 0)))); got[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("fetch of an unknown topic: error %d", got[0].ErrorCode)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("unknown topics with no delta under way took %v", el)
	}
}

// TestUnknownTopicCatchesUpOnReceivedMetadata: a produce or fetch naming a
// topic the broker does not know first lets the broker apply metadata it
// has received (Config.CatchUpMetadata), and is then served.
func TestUnknownTopicCatchesUpOnReceivedMetadata(t *testing.T) {
	var h *harness
	var received atomic.Bool
	received.Store(true)
	h = newHarness(t, func(c *Config) {
		c.CatchUpMetadata = func(context.Context) bool {
			if !received.CompareAndSwap(true, false) {
				return false
			}
			h.createTopic("late", topicSpec{}) // applies the received record
			return true
		}
	})
	if sp := h.produce(1, "late", 0, h.batch("x", 1)); sp.ErrorCode != 0 || sp.BaseOffset != 0 {
		t.Fatalf("produce to a topic in received metadata: error %d base offset %d", sp.ErrorCode, sp.BaseOffset)
	}
	if got := decodeFetch(t, h.fetch(fetchReq(12, fp("late", 0, 0)))); got[0].ErrorCode != 0 {
		t.Fatalf("fetch of the caught-up topic: error %d", got[0].ErrorCode)
	}
	if sp := h.produce(1, "never", 0, h.batch("y", 1)); sp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("produce to a topic nobody created: error %d", sp.ErrorCode)
	}
}
