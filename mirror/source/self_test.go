package source_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// TestSourceWithTheLocalClusterIDIsRefused: a source that answers Metadata
// with the destination's own cluster id is the destination itself (a
// bootstrap list pointing back at it). Every request that would route a
// partition there fails with ErrSelfMirror, and nothing is fetched; the
// same source seen from a cluster with another id serves as usual.
func TestSourceWithTheLocalClusterIDIsRefused(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	kc := startKfake(t, kfake.ClusterID("strait-self"))
	seeds := kc.ListenAddrs()
	id := kfakeTopic(t, kc, "orders", 1)
	produce(t, ctx, seeds, "orders", 1, 10)
	tp := storage.TopicPartition{Topic: "orders", Partition: 0}

	self, ev := newSource(t, seeds, func(c *source.Config) { c.LocalClusterID = "strait-self" })
	wantSelf := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, source.ErrSelfMirror) || !source.IsFatal(err) {
			t.Fatalf("%s: %v, want ErrSelfMirror (fatal)", what, err)
		}
	}
	_, err := self.ClusterID(ctx)
	wantSelf("ClusterID", err)
	_, err = self.Topics(ctx, "orders")
	wantSelf("Topics", err)
	_, _, err = self.Leader(ctx, tp)
	wantSelf("Leader", err)
	_, _, err = self.LastMirroredEpoch(ctx, "orders", 0)
	wantSelf("LastMirroredEpoch", err)
	ep, err := self.NewEndPoint(fetcher.BrokerEndPoint{ID: 0})
	if err != nil {
		t.Fatal(err)
	}
	data, err := ep.Fetch(ctx, &fetcher.FetchRequest{Partitions: map[storage.TopicPartition]fetcher.FetchPartition{
		tp: fetchPart(tp, id, 0, -1)}})
	wantSelf("Fetch", err)
	if len(data) != 0 {
		t.Fatalf("Fetch returned %d partitions from the local cluster", len(data))
	}
	if !ev.anyError(tp, source.ErrSelfMirror) {
		t.Fatalf("the fetch did not report ErrSelfMirror for %s: %v", tp, ev.errors(tp))
	}
	var se *source.SelfMirrorError
	if !errors.As(err, &se) || se.ClusterID != "strait-self" || se.Mirror != "m" {
		t.Fatalf("error %v does not name the mirror and the cluster id", err)
	}

	other, _ := newSource(t, seeds, func(c *source.Config) { c.LocalClusterID = "another-cluster" })
	got, err := other.ClusterID(ctx)
	if err != nil || got != "strait-self" {
		t.Fatalf("ClusterID from another cluster = %q, %v", got, err)
	}
	fetchAll(t, ctx, endpoint(t, ctx, other, tp), tp, id, 0, -1, 10)
}
