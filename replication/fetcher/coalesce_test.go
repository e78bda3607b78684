package fetcher

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

// answering is a KafkaEndPoint whose leader answers every fetch with n
// bytes of records for its first partition, or fails when n < 0.
func answering(n *int) *KafkaEndPoint {
	return &KafkaEndPoint{
		ReplicaID: 2, MaxWaitMs: 500, MinBytes: 1, MaxBytes: 10 << 20, PartitionMaxBytes: 1 << 20,
		CoalesceMinBytes: 128 << 10, CoalesceWaitMs: 3,
		Send: func(_ context.Context, kreq kmsg.Request) (kmsg.Response, error) {
			if *n < 0 {
				return nil, errors.New("test: connection reset")
			}
			req := kreq.(*kmsg.FetchRequest)
			resp := req.ResponseKind().(*kmsg.FetchResponse)
			resp.Version = req.Version
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic, rt.TopicID = req.Topics[0].Topic, req.Topics[0].TopicID
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition, rp.RecordBatches = req.Topics[0].Partitions[0].Partition, make([]byte, *n)
			rt.Partitions = append(rt.Partitions, rp)
			resp.Topics = append(resp.Topics, rt)
			return resp, nil
		},
	}
}

// TestFetchCoalescesWhileTheLeaderStreams: a follower's fetch asks for
// replica.fetch.min.bytes with replica.fetch.wait.max.ms until an answer
// carries at least half of the coalescing size; it then asks for that size
// with the coalescing wait, and goes back after a small answer or a failed
// fetch. A zero coalescing wait never changes the fetch.
func TestFetchCoalescesWhileTheLeaderStreams(t *testing.T) {
	parts := []FetchPartition{{TP: storage.TopicPartition{Topic: "t", Partition: 0}, TopicID: [16]byte{1}}}
	bounds := func(e *KafkaEndPoint) [2]int32 {
		req := e.BuildFetch(parts).Request
		return [2]int32{req.MinBytes, req.MaxWaitMillis}
	}
	kafkas, coalesced := [2]int32{1, 500}, [2]int32{128 << 10, 3}

	var n int
	e := answering(&n)
	steps := []struct {
		answer int // bytes the leader answers the fetch with; -1 fails it
		next   [2]int32
	}{
		{0, kafkas},
		{1 << 10, kafkas},
		{64 << 10, coalesced}, // half the coalescing size: streaming
		{200 << 10, coalesced},
		{10 << 10, kafkas}, // the wait ran out with little: back
		{100 << 10, coalesced},
		{-1, kafkas}, // a failed fetch starts over
	}
	if got := bounds(e); got != kafkas {
		t.Fatalf("first fetch: MinBytes, MaxWaitMillis = %v, want %v", got, kafkas)
	}
	for i, s := range steps {
		n = s.answer
		_, err := e.Fetch(context.Background(), e.BuildFetch(parts))
		if (err != nil) != (s.answer < 0) {
			t.Fatalf("step %d: fetch error %v", i, err)
		}
		if got := bounds(e); got != s.next {
			t.Fatalf("step %d: after an answer of %d bytes the fetch asks MinBytes, MaxWaitMillis = %v, want %v", i, s.answer, got, s.next)
		}
	}

	// The configured wait bounds the coalescing one, and a zero
	// coalescing wait (replica.fetch.coalesce.wait.ms=0) is Kafka's fetch.
	short := answering(&n)
	short.MaxWaitMs = 2
	off := answering(&n)
	off.CoalesceWaitMs = 0
	n = 1 << 20
	for _, e := range []*KafkaEndPoint{short, off} {
		if _, err := e.Fetch(context.Background(), e.BuildFetch(parts)); err != nil {
			t.Fatal(err)
		}
	}
	if got := bounds(short); got != [2]int32{128 << 10, 2} {
		t.Fatalf("with replica.fetch.wait.max.ms=2: %v", got)
	}
	if got := bounds(off); got != kafkas {
		t.Fatalf("with coalescing off: %v", got)
	}
}
