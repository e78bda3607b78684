package source_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/storage"
)

// TestStraitClusterSourceFollowsLeader: the source is a three-node Strait
// cluster; its partition leader is killed mid-stream and the endpoint
// carries on from the new leader, copying every batch byte for byte as the
// new leader stores it, including the batches written in the new epoch.
func TestStraitClusterSourceFollowsLeader(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c := brokertest.StartCluster(t, 3)
	id := createTopic(t, ctx, c.Admin(t), "replicated", 1, 3)
	c.WaitForISR(t, "replicated", 3, 20*time.Second)
	tp := storage.TopicPartition{Topic: "replicated", Partition: 0}

	prod := c.Client(t, kgo.DefaultProduceTopic("replicated"), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	next := 0
	write := func(n int) {
		t.Helper()
		var recs []*kgo.Record
		for range n {
			recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, "record %d", next)})
			next++
			if len(recs) == 25 {
				if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
					t.Fatalf("produce: %v", err)
				}
				recs = recs[:0]
			}
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	write(300)

	src, ev := newSource(t, c.Addrs(), func(cfg *source.Config) { cfg.MetadataMinInterval = 20 * time.Millisecond })
	ep := endpoint(t, ctx, src, tp)
	oldLeader := ep.Broker().ID
	if want := c.Leader("replicated", 0); oldLeader != want {
		t.Fatalf("endpoint named after %d, the leader is %d", oldLeader, want)
	}
	_, oldEpoch, err := src.Leader(ctx, tp)
	if err != nil {
		t.Fatal(err)
	}
	before := fetchAll(t, ctx, ep, tp, id, 0, -1, 300)

	// The endpoint keeps long-polling the leader while it dies.
	type result struct {
		c   copied
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := copyRange(ctx, ep, tp, id, before.nextOffset, before.lastEpoch, 600)
		done <- result{c, err}
	}()
	time.Sleep(200 * time.Millisecond)
	killed := time.Now()
	c.Kill(t, oldLeader)
	c.WaitFor(t, 20*time.Second, "a new leader of replicated-0", func() bool {
		l := c.Leader("replicated", 0)
		return l >= 0 && l != oldLeader
	})
	newLeader := c.Leader("replicated", 0)
	elected := time.Since(killed)
	write(300)
	written := time.Since(killed)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	after := res.c

	// The first request after the kill went to the dead broker (or to a
	// follower that heard of the new leader first): a retriable error,
	// reported, never a fatal one.
	if after.retries == 0 {
		t.Fatal("no error answer after the leader was killed")
	}
	t.Logf("after killing node %d: %d error answers %v, %d errors reported; new leader %d elected after %v, 300 more written after %v, copied after %v",
		oldLeader, after.retries, after.codes, len(ev.errors(tp)), newLeader, elected.Round(time.Millisecond),
		written.Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
	for code := range after.codes {
		if code != kerr.NetworkException.Code && code != kerr.NotLeaderForPartition.Code && code != kerr.LeaderNotAvailable.Code &&
			code != kerr.UnknownLeaderEpoch.Code {
			t.Errorf("unexpected error answer %v", kerr.ErrorForCode(code))
		}
	}
	for _, err := range ev.errors(tp) {
		var perr *source.PartitionError
		if !errors.As(err, &perr) || source.IsFatal(err) {
			t.Errorf("reported %v", err)
		}
	}
	s, _ := src.Status(tp)
	if s.Leader != newLeader || s.LeaderEpoch <= oldEpoch || s.Err != nil || s.HighWatermark != 600 {
		t.Fatalf("status %+v, want leader %d above epoch %d at hw 600", s, newLeader, oldEpoch)
	}
	if after.lastEpoch != s.LeaderEpoch {
		t.Fatalf("last batch epoch %d, want the new leader's epoch %d", after.lastEpoch, s.LeaderEpoch)
	}
	l, ok := c.Node(newLeader).Node().LogManager().Log(tp)
	if !ok {
		t.Fatalf("no log on node %d", newLeader)
	}
	sameBatches(t, "across the failover", append(before.data, after.data...), readLog(t, l, 0))
	if st := statsOf(t, append(before.data, after.data...)); st.records != 600 {
		t.Fatalf("copied %d records, want 600", st.records)
	}
}
