package syncer

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/raftmeta"
)

// kfakeClient starts a kfake cluster with topic orders (2 partitions)
// holding n records in each partition, and a client of it.
func kfakeClient(t *testing.T, n int) *kgo.Client {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	for p := int32(0); p < 2; p++ {
		for i := 0; i < n; i++ {
			if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "orders", Partition: p, Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return cl
}

// TestSyncShareGroupOffsets: the share group step copies a source share
// group's start offsets of the mirrored topics to the destination,
// clamped into the destination's log, and leaves a share group that is
// consuming on the destination alone (KIP-1279 §6, ShareGroupOffsetSyncError).
func TestSyncShareGroupOffsets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srcCl, dstCl := kfakeClient(t, 20), kfakeClient(t, 10)
	src, dst := kadm.NewClient(srcCl), kadm.NewClient(dstCl)
	set := func(adm *kadm.Client, group string, offs map[int32]int64) {
		t.Helper()
		var o kadm.Offsets
		for p, at := range offs {
			o.Add(kadm.Offset{Topic: "orders", Partition: p, At: at, LeaderEpoch: -1})
		}
		resp, err := adm.AlterShareGroupOffsets(ctx, group, o)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatalf("alter %s: %v", group, err)
		}
	}
	set(src, "reports", map[int32]int64{0: 4, 1: 15}) // p1 beyond the destination's end (10)
	set(src, "busy", map[int32]int64{0: 7})
	set(src, "skipped", map[int32]int64{0: 3})

	// busy consumes on the destination: its progress there stays.
	set(dst, "busy", map[int32]int64{0: 1})
	consumer, err := kgo.NewClient(kgo.SeedBrokers(dstCl.OptValue(kgo.SeedBrokers).([]string)...), kgo.ShareGroup("busy"), kgo.ConsumeTopics("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	for {
		listed, err := dst.ListGroupsByType(ctx, []string{"share"})
		if err != nil {
			t.Fatal(err)
		}
		if l, ok := listed["busy"]; ok && !groupInactive(l.State) {
			break
		}
		fetchCtx, fc := context.WithTimeout(ctx, 200*time.Millisecond)
		consumer.PollFetches(fetchCtx)
		fc()
		if ctx.Err() != nil {
			t.Fatal("busy never became active on the destination")
		}
	}

	settings, err := parseSettings(map[string]string{"mirror.groups.exclude": "skipped"})
	if err != nil {
		t.Fatal(err)
	}
	s := &Syncer{src: src, dst: dst, logger: slog.New(slog.DiscardHandler)}
	v := &mirrorView{set: settings, active: map[string]*raftmeta.Topic{"orders": {Name: "orders"}}}
	if failed := s.syncShareGroups(ctx, v); failed != 0 {
		t.Fatalf("%d failures", failed)
	}
	described, err := dst.DescribeShareGroupOffsets(ctx, "reports", "busy", "skipped")
	if err != nil {
		t.Fatal(err)
	}
	start := func(g string, p int32) int64 {
		o, ok := described[g].Offsets.Lookup("orders", p)
		if !ok {
			return -1
		}
		return o.StartOffset
	}
	for _, c := range []struct {
		group string
		p     int32
		want  int64
	}{
		{"reports", 0, 4},  // as on the source
		{"reports", 1, 10}, // clamped to the destination's end
		{"busy", 0, 1},     // active on the destination: not overwritten
		{"skipped", 0, -1}, // excluded by mirror.groups.exclude
	} {
		if got := start(c.group, c.p); got != c.want {
			t.Errorf("%s orders/%d start offset %d on the destination, want %d", c.group, c.p, got, c.want)
		}
	}
	if got := s.Stats().ShareOffsetsAltered; got != 2 {
		t.Errorf("ShareOffsetsAltered %d, want 2", got)
	}
	// A second round finds nothing to change.
	if failed := s.syncShareGroups(ctx, v); failed != 0 || s.Stats().ShareOffsetsAltered != 2 {
		t.Fatalf("second round: %d failures, %d altered", failed, s.Stats().ShareOffsetsAltered)
	}
}
