package broker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// isrSessionTimeout is broker.session.timeout.ms in TestClusterISR: longer
// than replica.lag.time.max.ms (2000 in the harness) plus the leader's ISR
// check period (half of it), so a killed follower leaves the ISR because
// its leader sees it lag, not because the controller fenced it.
const isrSessionTimeout = 6 * time.Second

// TestClusterISR runs on three voters and a broker-only node with a long
// broker session and automatic leader rebalancing every second: ISR
// shrink and expansion with acks=all and min.insync.replicas, controlled
// shutdown under a running producer, and the automatic preferred-leader
// rebalance after the stopped node comes back.
func TestClusterISR(t *testing.T) {
	c := brokertest.StartCluster(t, 4, brokertest.WithConfig(
		fmt.Sprintf("broker.session.timeout.ms=%d", isrSessionTimeout.Milliseconds()),
		"auto.leader.rebalance.enable=true",
		"leader.imbalance.check.interval.seconds=1",
	))
	ctx := testCtx(t, 80*time.Second)
	cl := rawClient(ctx, t, c)
	runSubtests(t, []subtest{
		{"ISRShrinkAndExpand", func(t *testing.T) { testISRShrinkExpand(ctx, t, c, cl) }},
		{"ControlledShutdownAndAutoRebalance", func(t *testing.T) { testControlledShutdown(ctx, t, c) }},
	})
}

// testISRShrinkExpand kills the followers of two partitions one by one
// (node 4, then voter 2; voters 1 and 3 lead and keep the quorum) and
// checks the ISR in Metadata and what acks=all and acks=1 produces get.
func testISRShrinkExpand(ctx context.Context, t *testing.T, c *brokertest.Cluster, cl *kgo.Client) {
	const topic = "isr"
	leaders := []int32{1, 3}
	createAssigned(ctx, t, cl, 1, topic, [][]int32{{1, 4, 2}, {3, 2, 4}}, "min.insync.replicas", "2")
	c.WaitForISR(t, topic, 3, 15*time.Second)
	adm := c.Admin(t)
	prod := c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	produce := func(from, to int) {
		t.Helper()
		var rs []*kgo.Record
		for p := range int32(2) {
			for _, v := range seq(fmt.Sprintf("p%d", p), from, to) {
				rs = append(rs, &kgo.Record{Partition: p, Value: []byte(v)})
			}
		}
		produceSync(t, prod, rs...)
	}
	produce(0, 100)
	start := partitions(ctx, t, adm, topic)

	// waitISR waits until Metadata shows the ISRs, and returns how long
	// that took.
	waitISR := func(what string, want [2][]int32) time.Duration {
		t.Helper()
		begin := time.Now()
		c.WaitFor(t, 15*time.Second, what, func() bool {
			ps := partitions(ctx, t, adm, topic)
			return sameSet(ps[0].ISR, want[0]) && sameSet(ps[1].ISR, want[1])
		})
		return time.Since(begin)
	}
	// checkLagShrink: the leaders shrank the ISR (AlterPartition) because
	// the follower lagged, not the controller fencing its broker.
	checkLagShrink := func(id int32, took time.Duration) {
		t.Helper()
		if b := c.Image().Brokers[id]; b == nil || b.Fenced {
			t.Errorf("node %d is fenced when the ISR shrank: the controller removed it, not its leaders", id)
		}
		// The follower was caught up when it died; it lags only from the
		// next append on, and may be dropped replica.lag.time.max.ms (2000)
		// after its last fetch, at most replica.fetch.wait.max.ms (500)
		// before the append.
		if took < time.Second {
			t.Errorf("the ISR lost node %d %v after the first append it missed, sooner than replica.lag.time.max.ms allows", id, took)
		}
		t.Logf("the ISR lost node %d %v after the first append it missed", id, took.Round(time.Millisecond))
	}

	// Kafka keeps a dead follower that is caught up in the ISR: it leaves
	// once an append makes it lag for replica.lag.time.max.ms. The
	// acks=all produce waits for that, then succeeds with two in sync.
	c.Kill(t, 4)
	begin := time.Now()
	produce(100, 150)
	took := time.Since(begin)
	waitISR("node 4 out of both ISRs", [2][]int32{{1, 2}, {3, 2}})
	checkLagShrink(4, took)

	// With node 2 dead too, an acks=1 append makes it lag and its leaders
	// drop it. Then the ISR is below min.insync.replicas: acks=all is
	// refused before appending, acks=1 still succeeds, and the high
	// watermark stays where it was (Kafka 4 holds it under min ISR,
	// KIP-966).
	c.Kill(t, 2)
	acks1 := leaderAckClient(ctx, t, c)
	begin = time.Now()
	for p, leader := range leaders {
		if off, err := produceTo(ctx, t, acks1, leader, topic, int32(p), fmt.Sprintf("p%d-150", p)); err != nil || off != 150 {
			t.Fatalf("acks=1 to %s[%d] as node 2 dies: offset %d, %v; want offset 150", topic, p, off, err)
		}
	}
	waitISR("node 2 out of both ISRs", [2][]int32{{1}, {3}})
	checkLagShrink(2, time.Since(begin))
	for p, leader := range leaders {
		if _, err := produceTo(ctx, t, cl, leader, topic, int32(p), "rejected"); !errors.Is(err, kerr.NotEnoughReplicas) {
			t.Errorf("acks=all to %s[%d] with the ISR {%d}: %v, want NOT_ENOUGH_REPLICAS", topic, p, leader, err)
		}
		// Nothing was appended: the acks=1 batch lands at offset 151.
		off, err := produceTo(ctx, t, acks1, leader, topic, int32(p), fmt.Sprintf("p%d-151", p))
		if err != nil || off != 151 {
			t.Errorf("acks=1 to %s[%d] with the ISR {%d}: offset %d, %v; want offset 151", topic, p, leader, off, err)
		}
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		if o, _ := ends.Lookup(topic, p); o.Err != nil || o.Offset != 150 {
			t.Errorf("%s[%d] under min ISR: high watermark %d (%v), want 150", topic, p, o.Offset, o.Err)
		}
	}

	begin = time.Now()
	c.Restart(t, 4)
	c.Restart(t, 2)
	restarts := time.Since(begin)
	took = waitISR("both ISRs back to 3", [2][]int32{{1, 4, 2}, {3, 2, 4}})
	t.Logf("nodes 4 and 2 restarted in %v; the ISRs were full again %v later", restarts.Round(time.Millisecond), took.Round(time.Millisecond))
	produce(152, 162)

	// The leaders never changed: ISR changes keep the leader epoch.
	end := partitions(ctx, t, adm, topic)
	for p, leader := range leaders {
		if got := end[int32(p)]; got.Leader != leader || got.LeaderEpoch != start[int32(p)].LeaderEpoch {
			t.Errorf("%s[%d]: leader %d epoch %d, want leader %d epoch %d", topic, p, got.Leader, got.LeaderEpoch, leader, start[int32(p)].LeaderEpoch)
		}
	}
	for p := range int32(2) {
		want := seq(fmt.Sprintf("p%d", p), 0, 162)
		if got := values(readPartition(t, c, topic, p, len(want))); !slices.Equal(got, want) {
			t.Errorf("%s[%d] read %d records %v, want %d in order", topic, p, len(got), got, len(want))
		}
		c.WaitFor(t, 10*time.Second, "every replica of p"+fmt.Sprint(p)+" at 162", func() bool {
			for _, id := range end[p].Replicas {
				if logEndOffset(c, id, topic, p) != 162 {
					return false
				}
			}
			return true
		})
	}
}

// testControlledShutdown stops a node that leads partitions while an
// idempotent acks=all producer writes, checks that it led nothing and was
// in no ISR when Stop returned and that the producer lost nothing, then
// starts it again and waits for the automatic rebalance to give it back
// the partitions it prefers, with no ElectLeaders request.
func testControlledShutdown(ctx context.Context, t *testing.T, c *brokertest.Cluster) {
	const topic, numPartitions = "shutdown", 8
	adm := c.Admin(t)
	resp, err := adm.CreateTopic(ctx, numPartitions, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	c.WaitForISR(t, topic, 3, 15*time.Second)
	// The active controller leads partitions too: its controlled shutdown
	// runs while it is still the controller, then it hands the role over.
	victim := c.Controller()
	var preferred []int32
	for _, p := range c.Image().Topics[topic].Partitions {
		if p.Leader != p.Replicas[0] {
			t.Fatalf("%s[%d] led by %d, not its first replica %v", topic, p.Index, p.Leader, p.Replicas)
		}
		if p.Leader == victim {
			preferred = append(preferred, p.Index)
		}
	}
	if len(preferred) != numPartitions/4 {
		t.Fatalf("node %d leads %v of %s, want %d partitions", victim, preferred, topic, numPartitions/4)
	}

	prod := startCountedProducer(ctx, t, c, topic, "r")
	ackedNow := prod.Acked
	c.WaitFor(t, 10*time.Second, "500 acknowledged records", func() bool { return ackedNow() >= 500 })

	stopped := time.Now()
	c.Stop(t, victim)
	t.Logf("graceful stop of node %d took %v", victim, time.Since(stopped).Round(time.Millisecond))
	img := c.Image()
	for _, p := range img.Topics[topic].Partitions {
		if p.Leader == victim || p.Leader < 0 || slices.Contains(p.ISR, victim) {
			t.Errorf("when node %d's Stop returned, %s[%d] had leader %d and ISR %v: want another leader and node %d out of the ISR",
				victim, topic, p.Index, p.Leader, p.ISR, victim)
		}
	}
	if off := img.Offset; off == 0 {
		t.Fatal("no image")
	}
	// Keep producing on the survivors for a moment.
	atStop := ackedNow()
	c.WaitFor(t, 10*time.Second, "300 more acknowledged records", func() bool { return ackedNow() >= atStop+300 })
	t.Logf("300 records acknowledged %v after the stop", time.Since(stopped).Round(time.Millisecond))
	want, errs := prod.Stop(ctx, t)
	if len(errs) > 0 {
		t.Errorf("the producer saw %d failed records during the controlled shutdown, first: %v", len(errs), errs[0])
	}

	// Every acknowledged record is there, once.
	got := consumeAllOf(ctx, t, c, topic)
	lost, dups := lostAndDuplicates(want, got)
	t.Logf("%d records acknowledged (%d after the stop), %d read", len(want), len(want)-atStop, len(got))
	if lost != 0 || dups != 0 {
		t.Fatalf("acknowledged but lost: %d, duplicates: %d (of %d acknowledged)", lost, dups, len(want))
	}

	// Back from a restart, the node leads nothing until the controller's
	// rebalance, every leader.imbalance.check.interval.seconds, finds it
	// in sync again.
	restarted := time.Now()
	c.Restart(t, victim)
	t.Logf("node %d restarted in %v", victim, time.Since(restarted).Round(time.Millisecond))
	for _, p := range c.Image().Topics[topic].Partitions {
		if p.Leader == victim {
			t.Fatalf("%s[%d] led by node %d right after its restart, before it caught up", topic, p.Index, victim)
		}
	}
	back := time.Now()
	c.WaitFor(t, 15*time.Second, "every partition led by its preferred replica again", func() bool {
		for _, p := range c.Image().Topics[topic].Partitions {
			if p.Leader != p.Replicas[0] {
				return false
			}
		}
		return true
	})
	t.Logf("preferred leaders restored %v after node %d's restart", time.Since(back).Round(time.Millisecond), victim)
	// Through Metadata as clients see it, from every node.
	cl := rawClient(ctx, t, c)
	everyNode(t, c, "preferred leaders and full ISRs of "+topic, func(id int32) bool {
		md := nodeMetadata(ctx, t, cl, id, topic)
		if md.ErrorCode != 0 || len(md.Partitions) != numPartitions {
			return false
		}
		for _, p := range md.Partitions {
			if p.ErrorCode != 0 || p.Leader != p.Replicas[0] || !sameSet(p.ISR, p.Replicas) {
				return false
			}
		}
		return true
	})
}

// lostAndDuplicates compares the values read with the values
// acknowledged: lost are acknowledged values never read, duplicates are
// extra copies of any value read.
func lostAndDuplicates(acked, read []string) (lost, duplicates int) {
	seen := map[string]int{}
	for _, v := range read {
		seen[v]++
	}
	for _, v := range acked {
		if seen[v] == 0 {
			lost++
		}
	}
	for _, n := range seen {
		duplicates += n - 1
	}
	return lost, duplicates
}

// consumeAllOf reads every partition of topic from the start up to the
// end offsets ListOffsets gives now, and returns the values read.
func consumeAllOf(ctx context.Context, t testing.TB, c *brokertest.Cluster, topic string) []string {
	t.Helper()
	ends, err := c.Admin(t).ListEndOffsets(ctx, topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("list end offsets of %s: %v %v", topic, err, ends.Error())
	}
	total := 0
	ends.Each(func(o kadm.ListedOffset) { total += int(o.Offset) })
	cl := c.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	return values(pollN(testCtx(t, 20*time.Second), t, cl, total))
}
