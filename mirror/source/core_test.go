package source_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// mirrorWithCore runs the replication fetcher core on the endpoint, the
// way the driver will: one manager for the mirror, each partition handed to
// the fetcher of its source leader, a local log per partition as the
// replica, starting from the (empty) log end.
func mirrorWithCore(t *testing.T, ctx context.Context, src *source.Cluster, ids map[storage.TopicPartition]storage.TopicID) (*fetcher.Manager, map[storage.TopicPartition]*storage.Log) {
	t.Helper()
	logs := map[storage.TopicPartition]*storage.Log{}
	parts := map[storage.TopicPartition]fetcher.InitialFetchState{}
	for tp, id := range ids {
		logs[tp] = newLocalLog(t, tp)
		leader, _, err := src.Leader(ctx, tp)
		if err != nil {
			t.Fatal(err)
		}
		// CurrentLeaderEpoch is the destination partition's epoch; the
		// endpoint sends the source's.
		parts[tp] = fetcher.InitialFetchState{TopicID: [16]byte(id), Leader: leader, CurrentLeaderEpoch: 3, InitOffset: -1}
	}
	m := fetcher.NewManager(fetcher.ManagerConfig{
		Name:        "MirrorFetcher-m",
		NewEndPoint: src.NewEndPoint,
		Replicas: func(tp storage.TopicPartition) (fetcher.Replica, error) {
			l, ok := logs[tp]
			if !ok {
				return nil, fmt.Errorf("no local replica of %s", tp)
			}
			return l, nil
		},
		Backoff: 50 * time.Millisecond,
	})
	if err := m.AddFetcherForPartitions(parts); err != nil {
		t.Fatal(err)
	}
	m.Start(ctx)
	t.Cleanup(m.Shutdown)
	return m, logs
}

// TestCoreMirrorsStraitSource wires the endpoint into the real fetcher
// core and mirrors a Strait source into local logs while producers keep
// writing: once caught up, each local log holds the source's batches byte
// for byte at the same offsets, with the same high watermark. Partition 0
// lost its first records on the source before mirroring started: the core
// restarts the copy at the source's log start and the skip is counted.
func TestCoreMirrorsStraitSource(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	b := brokertest.Start(t)
	adm := b.Admin(t)
	id := createTopic(t, ctx, adm, "mirrored", 2, 1)
	produce(t, ctx, []string{b.Addr()}, "mirrored", 2, 100)
	tp0 := storage.TopicPartition{Topic: "mirrored", Partition: 0}
	tp1 := storage.TopicPartition{Topic: "mirrored", Partition: 1}
	src0 := sourceLog(t, b, tp0)
	batches := splitBatches(t, readLog(t, src0, 0))
	cut := batches[len(batches)/3].BaseOffset()
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: "mirrored", Partition: 0, At: cut})
	if dr, err := adm.DeleteRecords(ctx, os); err != nil || dr.Error() != nil {
		t.Fatalf("delete records: %v %v", err, dr.Error())
	}

	src, ev := newSource(t, []string{b.Addr()})
	m, logs := mirrorWithCore(t, ctx, src, map[storage.TopicPartition]storage.TopicID{tp0: id, tp1: id})
	if got := len(m.Fetchers()); got != 1 {
		t.Fatalf("%d fetchers, want one for the single source broker", got)
	}
	// More data while the mirror runs.
	produce(t, ctx, []string{b.Addr()}, "mirrored", 2, 100)

	for _, tp := range []storage.TopicPartition{tp0, tp1} {
		srcLog := sourceLog(t, b, tp)
		hw := srcLog.HighWatermark()
		waitFor(t, 20*time.Second, tp.String()+" to catch up", func() bool { return logs[tp].LogEndOffset() == hw })
		start := srcLog.LogStartOffset()
		if got := logs[tp].LogStartOffset(); got != start {
			t.Fatalf("%s: local log starts at %d, the source's at %d", tp, got, start)
		}
		sameBatches(t, tp.String(), readLog(t, logs[tp], start), readLog(t, srcLog, start))
		waitFor(t, 5*time.Second, tp.String()+" high watermark", func() bool { return logs[tp].HighWatermark() == hw })
		if st, _ := src.Status(tp); st.HighWatermark != hw || st.Err != nil {
			t.Fatalf("%s: status %+v, want hw %d", tp, st, hw)
		}
	}
	if s, _ := src.Status(tp0); s.OffsetsSkipped != cut {
		t.Fatalf("%d offsets skipped, want %d", s.OffsetsSkipped, cut)
	}
	if got := ev.skips(); len(got) != 1 || got[0] != (skip{tp0, 0, cut}) {
		t.Fatalf("skips %+v, want [0, %d) of %s", got, cut, tp0)
	}
	if f := m.Failed().Partitions(); len(f) != 0 {
		t.Fatalf("failed partitions %v", f)
	}
	if errs := ev.errors(tp1); len(errs) != 0 {
		t.Fatalf("%s: errors %v", tp1, errs)
	}
}

// TestCoreMirrorsKfakeSource: the same through the core with kfake as the
// source (transactions included), with the partition leaders moving while
// the mirror runs; the copy equals what a plain consumer of kfake reads.
func TestCoreMirrorsKfakeSource(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	kc := startKfake(t)
	seeds := kc.ListenAddrs()
	id := kfakeTopic(t, kc, "mirrored", 3)
	produce(t, ctx, seeds, "mirrored", 3, 60, kgo.RequiredAcks(kgo.AllISRAcks()))
	transact(t, ctx, seeds, "mirrored", 3, 30)

	src, ev := newSource(t, seeds, func(c *source.Config) { c.MetadataMinInterval = 10 * time.Millisecond })
	ids := map[storage.TopicPartition]storage.TopicID{}
	for p := range int32(3) {
		ids[storage.TopicPartition{Topic: "mirrored", Partition: p}] = id
	}
	m, logs := mirrorWithCore(t, ctx, src, ids)

	// Move every leader once while more data arrives.
	var wg sync.WaitGroup
	wg.Go(func() {
		for p := range int32(3) {
			if err := kc.MoveTopicPartition("mirrored", p, (kc.LeaderFor("mirrored", p)+1)%3); err != nil {
				t.Errorf("move: %v", err)
			}
			time.Sleep(30 * time.Millisecond)
		}
	})
	produce(t, ctx, seeds, "mirrored", 3, 60, kgo.RequiredAcks(kgo.AllISRAcks()))
	wg.Wait()
	transact(t, ctx, seeds, "mirrored", 3, 30)

	plain, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	records, control := 0, 0
	for tp := range ids {
		hw := kc.PartitionInfo(tp.Topic, tp.Partition).HighWatermark
		waitFor(t, 20*time.Second, tp.String()+" to catch up", func() bool { return logs[tp].LogEndOffset() == hw })
		got := readLog(t, logs[tp], 0)
		sameBatches(t, tp.String(), got, plainFetch(t, ctx, plain, kc.LeaderFor(tp.Topic, tp.Partition), tp, id, 0, hw))
		st := statsOf(t, got)
		records += st.records
		control += st.control
		if s, _ := src.Status(tp); s.Leader != kc.LeaderFor(tp.Topic, tp.Partition) {
			t.Errorf("%s: status leader %d, kfake leader %d", tp, s.Leader, kc.LeaderFor(tp.Topic, tp.Partition))
		}
		for _, err := range ev.errors(tp) {
			if source.IsFatal(err) {
				t.Errorf("%s: fatal error %v", tp, err)
			}
		}
	}
	if want := 2*6*60 + 4*30 + 4*3; records != want || control != 12 {
		t.Fatalf("mirrored %d records (%d control batches), want %d (12)", records, control, want)
	}
	if f := m.Failed().Partitions(); len(f) != 0 {
		t.Fatalf("failed partitions %v", f)
	}
}
