package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// logSpec builds batches from "0-1:e1 2:e3": one batch per range, with
// that partition leader epoch.
// Records are valued by offset and epoch, so the same batch on two
// replicas is byte for byte the same, as replication makes it.
func logSpec(t *testing.T, spec string) []byte {
	t.Helper()
	var out []byte
	for _, part := range strings.Fields(spec) {
		var first, last int64
		var epoch int32
		if _, err := fmt.Sscanf(part, "%d-%d:e%d", &first, &last, &epoch); err != nil {
			if _, err := fmt.Sscanf(part, "%d:e%d", &first, &epoch); err != nil {
				t.Fatalf("bad spec %q", part)
			}
			last = first
		}
		var recs []record.Record
		for off := first; off <= last; off++ {
			v := []byte(fmt.Sprintf("o%de%d", off, epoch))
			recs = append(recs, record.Record{KeyLen: -1, Value: v, ValueLen: int32(len(v))})
		}
		b, err := record.Build(record.BatchSpec{BaseOffset: first, PartitionLeaderEpoch: epoch, ProducerID: record.NoProducerID,
			ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence, BaseTimestamp: 1_700_000_000_000}, recs, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}

// divergence is a leader election after which followers' logs may have
// diverged: the logs each replica holds, the epoch the leader leads in,
// and the offset each follower must truncate to.
type divergence struct {
	name        string
	leader      string
	leaderEpoch int32
	followers   []string
	want        []int64
}

// runDivergence writes the logs, makes node 1 leader in leaderEpoch and
// runs the followers' fetchers over the simulated network until every
// log equals the leader's; the smallest log end offset a follower reached
// is where it truncated.
func runDivergence(t *testing.T, tc divergence, truncationOnFetch bool) {
	t.Helper()
	n := 1 + len(tc.followers)
	c, err := newCluster(Options{Seed: 1, Replicas: n, MinISR: 1}, func(c *Cluster, ids []int32) {
		c.net.faulty, c.noTruncationOnFetch = false, !truncationOnFetch
		for i := range ids {
			ids[i] = int32(i + 1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	write := func(id int32, spec string) {
		p, ok := c.node(id).partition()
		if !ok {
			t.Fatalf("node %d has no replica", id)
		}
		if spec == "" {
			return
		}
		if _, err := p.Log().AppendAsFollower(logSpec(t, spec)); err != nil {
			t.Fatalf("node %d: %v", id, err)
		}
	}
	// Every replica first follows a placeholder leader so no fetcher runs
	// while the logs are written.
	write(1, tc.leader)
	for i, f := range tc.followers {
		write(int32(i+2), f)
	}
	c.ctrl.changePartition("the election under test", func(p *raftmeta.Partition) {
		p.Leader, p.LeaderEpoch = 1, tc.leaderEpoch
	})
	leader, _ := c.node(1).partition()
	minLEO := make([]int64, len(tc.followers))
	for i := range tc.followers {
		p, _ := c.node(int32(i + 2)).partition()
		minLEO[i] = p.Log().LogEndOffset()
	}
	for step := 0; step < 100; step++ {
		for _, nd := range c.nodes[1:] {
			c.stepFetchers(nd)
			for len(nd.tasks) > 0 {
				c.runTask(nd)
			}
		}
		for len(c.nodes[0].tasks) > 0 {
			c.runTask(c.nodes[0])
		}
		if err := c.advance(); err != nil {
			t.Fatal(c.fail(err))
		}
		done := true
		for i := range tc.followers {
			p, _ := c.node(int32(i + 2)).partition()
			minLEO[i] = min(minLEO[i], p.Log().LogEndOffset())
			if p.Log().LogEndOffset() != leader.Log().LogEndOffset() {
				done = false
			}
		}
		if done && step > 2 {
			break
		}
	}
	want := readValues(t, leader.Log())
	for i := range tc.followers {
		p, _ := c.node(int32(i + 2)).partition()
		if got := readValues(t, p.Log()); !slices.Equal(got, want) {
			t.Fatalf("follower %d's log %v, leader's %v", i+2, got, want)
		}
		if minLEO[i] != tc.want[i] {
			t.Fatalf("follower %d truncated to %d, want %d", i+2, minLEO[i], tc.want[i])
		}
	}
}

func readValues(t *testing.T, l *storage.Log) []string {
	t.Helper()
	bs, err := readBatches(l, l.LogStartOffset(), l.LogEndOffset())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range bs {
		vs, err := batchValues(b)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			out = append(out, fmt.Sprintf("%d:e%d:%s", b.BaseOffset()+int64(i), b.PartitionLeaderEpoch(), v))
		}
	}
	return out
}

// The divergence cases of KIP-101, KIP-279 and Vanlightly's
// kafka-tlaplus "3. Detecting and avoiding log divergence" (cases A-G):
// each follower truncates to exactly the offset they prescribe, with
// truncation on fetch (DivergingEpoch, KIP-595) and with OffsetForLeaderEpoch.
func TestDivergence(t *testing.T) {
	cases := []divergence{
		// KIP-101 scenario 1: B restarted with m2 above its HW; the
		// leader's epoch 0 ends at 2, so B keeps m2 (the pre-KIP-101
		// truncation to the HW lost it).
		{name: "kip101-1", leader: "0-1:e0", leaderEpoch: 1, followers: []string{"0-1:e0"}, want: []int64{2}},
		// KIP-101 scenario 2: A wrote m2 at 1 in epoch 0 and crashed; B
		// led epoch 1 and wrote m3 at 1. A drops m2.
		{name: "kip101-2", leader: "0:e0 1:e1", leaderEpoch: 2, followers: []string{"0:e0 1:e0"}, want: []int64{1}},
		// KIP-279 fast double failover: A led epoch 1 (offsets 0-2), B led
		// epoch 2 briefly (offset 1), C leads epoch 3 from offset 1. Both
		// truncate to 1.
		{name: "kip279-double-failover", leader: "0:e1 1:e3", leaderEpoch: 4,
			followers: []string{"0:e1 1-2:e1", "0:e1 1:e2"}, want: []int64{1, 1}},
		// KIP-279: the leader answers with an epoch (2) the follower never
		// had; the follower truncates to the end of its epoch below (1)
		// and asks again.
		{name: "kip279-unknown-epoch", leader: "0:e1 1-2:e2 3:e4", leaderEpoch: 5,
			followers: []string{"0:e1 1-2:e3"}, want: []int64{1}},
		{name: "vanlightly-A-behind-same-epoch", leader: "0-1:e1 2-3:e1", leaderEpoch: 2, followers: []string{"0-1:e1"}, want: []int64{2}},
		{name: "vanlightly-B-behind-higher-epoch", leader: "0-1:e1 2-3:e2", leaderEpoch: 3, followers: []string{"0-1:e1"}, want: []int64{2}},
		{name: "vanlightly-C-ahead-same-epoch", leader: "0-1:e1", leaderEpoch: 2, followers: []string{"0-1:e1 2-3:e1"}, want: []int64{2}},
		{name: "vanlightly-D-ahead-higher-epoch", leader: "0-1:e1", leaderEpoch: 3, followers: []string{"0-1:e1 2-3:e2"}, want: []int64{2}},
		{name: "vanlightly-E-forked", leader: "0-1:e1 2-3:e3", leaderEpoch: 4, followers: []string{"0-1:e1 2-3:e2"}, want: []int64{2}},
		{name: "vanlightly-F-forked", leader: "0:e1 1:e1", leaderEpoch: 3, followers: []string{"0:e1 1-2:e2"}, want: []int64{1}},
		{name: "vanlightly-G-no-common-epoch", leader: "0:e1 1:e3", leaderEpoch: 4, followers: []string{"0:e2"}, want: []int64{0}},
	}
	for _, tc := range cases {
		for _, onFetch := range []bool{true, false} {
			mode := "DivergingEpoch"
			if !onFetch {
				mode = "OffsetForLeaderEpoch"
			}
			t.Run(tc.name+"/"+mode, func(t *testing.T) { runDivergence(t, tc, onFetch) })
		}
	}
}

// OFFSET_OUT_OF_RANGE: the leader's log starts after the follower's ends
// (retention deleted what the follower lacks), so the follower restarts
// its log at the leader's start (Kafka's fetchOffsetAndTruncate).
func TestOffsetOutOfRangeRestartsTheLog(t *testing.T) {
	for _, onFetch := range []bool{true, false} {
		c, err := newCluster(Options{Seed: 1, Replicas: 2, MinISR: 1}, func(c *Cluster, ids []int32) {
			c.net.faulty, c.noTruncationOnFetch = false, !onFetch
			ids[0], ids[1] = 1, 2
		})
		if err != nil {
			t.Fatal(err)
		}
		lp, _ := c.node(1).partition()
		fp, _ := c.node(2).partition()
		if err := lp.Log().TruncateFullyAndStartAt(10); err != nil {
			t.Fatal(err)
		}
		if _, err := lp.Log().AppendAsFollower(logSpec(t, "10-12:e0")); err != nil {
			t.Fatal(err)
		}
		if _, err := fp.Log().AppendAsFollower(logSpec(t, "0-4:e0")); err != nil {
			t.Fatal(err)
		}
		c.ctrl.changePartition("elect node 1", func(p *raftmeta.Partition) { p.Leader, p.LeaderEpoch = 1, 1 })
		for step := 0; step < 30; step++ {
			c.stepFetchers(c.node(2))
			for _, n := range c.nodes {
				for len(n.tasks) > 0 {
					c.runTask(n)
				}
			}
			if err := c.advance(); err != nil {
				t.Fatal(c.fail(err))
			}
		}
		if got, want := readValues(t, fp.Log()), readValues(t, lp.Log()); !slices.Equal(got, want) || fp.Log().LogStartOffset() != 10 {
			t.Fatalf("truncation on fetch %v: follower [%d, %d) %v, leader %v", onFetch, fp.Log().LogStartOffset(),
				fp.Log().LogEndOffset(), got, want)
		}
	}
}
