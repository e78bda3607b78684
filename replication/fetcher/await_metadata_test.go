package fetcher

import (
	"context"
	"testing"

	"github.com/strait-io/strait/storage"
)

// TestAwaitMetadataBeforeEachRound: a round waits for the metadata being
// applied, so a partition that metadata adds to the fetcher is in the
// round's fetch rather than the next one's.
func TestAwaitMetadataBeforeEachRound(t *testing.T) {
	c := newClock()
	l0, l1 := logWith(t, c, "0:e1"), logWith(t, c, "0:e1")
	tp1 := storage.TopicPartition{Topic: tp0.Topic, Partition: tp0.Partition + 1}
	ep := &mockEndPoint{leader: leader2, fetch: func(req *FetchRequest) (map[storage.TopicPartition]*FetchData, error) {
		out := map[storage.TopicPartition]*FetchData{}
		for tp := range req.Partitions {
			out[tp] = data(nil, 1, 0)
		}
		return out, nil
	}}
	f := newFetcher(ep, c, map[storage.TopicPartition]*storage.Log{tp0: l0, tp1: l1})
	init := func(tp storage.TopicPartition) map[storage.TopicPartition]InitialFetchState {
		return map[storage.TopicPartition]InitialFetchState{tp: {Leader: leader2, CurrentLeaderEpoch: 1, InitOffset: 1}}
	}
	f.AddPartitions(init(tp0))
	waits := 0
	f.cfg.AwaitMetadata = func(context.Context) {
		// The delta being applied assigns tp1 to this fetcher.
		if waits++; waits == 1 {
			f.AddPartitions(init(tp1))
		}
	}
	if !f.DoWork(context.Background()) {
		t.Fatal("the round sent no fetch")
	}
	if waits != 1 {
		t.Fatalf("AwaitMetadata ran %d times in one round, want 1", waits)
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if len(ep.fetches) != 1 || len(ep.fetches[0].Partitions) != 2 {
		t.Fatalf("fetches %+v: want one carrying both partitions", ep.fetches)
	}
}
