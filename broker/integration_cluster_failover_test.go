package broker_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestClusterFailover runs on three voters and a broker-only node with the
// harness's short broker session: the group coordinator follows the
// leadership of its __consumer_offsets partition when that node dies, and
// unclean leader election stays off until a topic allows it.
func TestClusterFailover(t *testing.T) {
	c := brokertest.StartCluster(t, 4, brokertest.WithConfig("auto.leader.rebalance.enable=false"))
	ctx := testCtx(t, 80*time.Second)
	cl := rawClient(ctx, t, c)
	runSubtests(t, []subtest{
		{"GroupCoordinatorFailover", func(t *testing.T) { testGroupCoordinatorFailover(ctx, t, c, cl) }},
		{"UncleanLeaderElection", func(t *testing.T) { testUncleanLeaderElection(ctx, t, c, cl) }},
	})
}

// offsetsPartitionFor is the __consumer_offsets partition of group: the
// Java hashCode of the id made non-negative as Kafka's Utils.abs does
// (Math.abs, with Integer.MIN_VALUE as 0; clearing the sign bit instead
// places ids with a negative hash elsewhere), modulo the partition count
// (Kafka's GroupCoordinator.partitionFor).
func offsetsPartitionFor(group string, partitions int32) int32 {
	var h int32
	for _, r := range group {
		h = 31*h + int32(r)
	}
	switch {
	case h == math.MinInt32:
		h = 0
	case h < 0:
		h = -h
	}
	return h % partitions
}

// testGroupCoordinatorFailover: a member consumed and committed 300
// records; the node leading the group's offsets partition dies; the
// coordinator moves to the new leader with the same committed offsets, and
// the same member goes on with the next 300 records and none it committed.
func testGroupCoordinatorFailover(ctx context.Context, t *testing.T, c *brokertest.Cluster, cl *kgo.Client) {
	const topic, group = "orders", "order-processors"
	adm := c.Admin(t)
	createReplicatedTopic(t, adm, topic, 3, 3, "min.insync.replicas", "2")
	c.WaitForISR(t, topic, 3, 15*time.Second)
	prod := c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(prefix string) {
		t.Helper()
		var rs []*kgo.Record
		for p := range int32(3) {
			for _, v := range seq(fmt.Sprintf("%s-p%d", prefix, p), 0, 100) {
				rs = append(rs, &kgo.Record{Partition: p, Value: []byte(v)})
			}
		}
		produceSync(t, prod, rs...)
	}
	produce("before")

	member := c.Client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.HeartbeatInterval(250*time.Millisecond),
		kgo.FetchMaxWait(200*time.Millisecond))
	first := pollN(testCtx(t, 20*time.Second), t, member, 300)
	for _, r := range first {
		if string(r.Value[:6]) != "before" {
			t.Fatalf("first poll read %q", r.Value)
		}
	}
	if err := member.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil || committed.Error() != nil {
		t.Fatalf("fetch offsets: %v %v", err, committed.Error())
	}
	for p := range int32(3) {
		if o, ok := committed.Lookup(topic, p); !ok || o.At != 100 {
			t.Fatalf("%s[%d] committed at %d, want 100", topic, p, o.At)
		}
	}

	// The coordinator is the leader of the group's offsets partition.
	coordinator := func() (int32, error) {
		fc := adm.FindGroupCoordinators(ctx, group)[group]
		return fc.NodeID, fc.Err
	}
	offsetsPart := offsetsPartitionFor(group, int32(len(c.Image().Topics["__consumer_offsets"].Partitions)))
	old, err := coordinator()
	if err != nil {
		t.Fatalf("find coordinator: %v", err)
	}
	if leader := c.Leader("__consumer_offsets", offsetsPart); leader != old {
		t.Fatalf("coordinator of %s is node %d, but __consumer_offsets[%d] is led by %d", group, old, offsetsPart, leader)
	}

	c.Kill(t, old)
	var now int32
	c.WaitFor(t, 15*time.Second, "a new coordinator of "+group, func() bool {
		id, err := coordinator()
		now = id
		return err == nil && id >= 0 && id != old
	})
	if leader := c.Leader("__consumer_offsets", offsetsPart); leader != now {
		t.Errorf("new coordinator is node %d, but __consumer_offsets[%d] is led by %d", now, offsetsPart, leader)
	}
	t.Logf("coordinator moved from node %d to node %d", old, now)
	// Each node answers from the metadata it applied: wait until all agree.
	everyNode(t, c, fmt.Sprintf("node %d as the coordinator of %s", now, group), func(id int32) bool {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorKeys = group, []string{group}
		resp := nodeRequest(ctx, t, cl, id, req).(*kmsg.FindCoordinatorResponse)
		if len(resp.Coordinators) == 1 {
			return resp.Coordinators[0].ErrorCode == 0 && resp.Coordinators[0].NodeID == now
		}
		return resp.ErrorCode == 0 && resp.NodeID == now
	})
	// A new admin client, bootstrapped at a live node: kgo keeps a group's
	// coordinator cached until an error code (not a failed dial) says it
	// moved, and gives up on a request whose seed refuses the dial.
	adm = c.Node(now).Admin(t)
	moved, err := adm.FetchOffsets(ctx, group)
	if err != nil || moved.Error() != nil {
		t.Fatalf("fetch offsets from the new coordinator: %v %v", err, moved.Error())
	}
	for p := range int32(3) {
		was, _ := committed.Lookup(topic, p)
		is, ok := moved.Lookup(topic, p)
		if !ok || is.Offset != was.Offset {
			t.Errorf("%s[%d] committed offset after the failover: %+v, want %+v", topic, p, is.Offset, was.Offset)
		}
	}
	if len(moved) != len(committed) || len(moved[topic]) != 3 {
		t.Errorf("offsets after the failover cover %d topics and %d partitions, want 1 and 3", len(moved), len(moved[topic]))
	}

	// The same member continues with the new records only.
	produce("after")
	second := values(pollThroughFailover(testCtx(t, 20*time.Second), t, member, 300))
	tail, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	second = append(second, values(member.PollFetches(tail).Records())...)
	cancel()
	var want []string
	for p := range int32(3) {
		want = append(want, seq(fmt.Sprintf("after-p%d", p), 0, 100)...)
	}
	slices.Sort(want)
	slices.Sort(second)
	if !slices.Equal(second, want) {
		reread := 0
		for _, v := range second {
			if v[:6] == "before" {
				reread++
			}
		}
		t.Fatalf("after the failover the member read %d records (%d committed ones again), want the 300 new ones", len(second), reread)
	}
	if err := member.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit after the failover: %v", err)
	}
	end, err := adm.FetchOffsets(ctx, group)
	if err != nil || end.Error() != nil {
		t.Fatalf("fetch offsets: %v %v", err, end.Error())
	}
	for p := range int32(3) {
		if o, _ := end.Lookup(topic, p); o.At != 200 {
			t.Errorf("%s[%d] committed at %d after the failover, want 200", topic, p, o.At)
		}
	}
	member.Close()

	c.Restart(t, old)
	c.WaitForISR(t, topic, 3, 15*time.Second)
	c.WaitForISR(t, "__consumer_offsets", 3, 15*time.Second)
}

// testUncleanLeaderElection: a partition on voters A and C and the
// broker-only node B (replicas [A, B, C]; the controller D is none of
// them). C is cut off from A and B until it lags out of the ISR; A and B
// then die. With unclean election off the partition stays leaderless
// although C is alive; once the topic allows unclean election, C leads,
// without the records it missed.
func testUncleanLeaderElection(ctx context.Context, t *testing.T, c *brokertest.Cluster, cl *kgo.Client) {
	const topic = "unclean"
	d := c.Controller()
	var voters []int32
	for id := int32(1); id <= 3; id++ {
		if id != d {
			voters = append(voters, id)
		}
	}
	a, b, lagging := voters[0], int32(4), voters[1]
	createAssigned(ctx, t, cl, d, topic, [][]int32{{a, b, lagging}})
	c.WaitForISR(t, topic, 3, 15*time.Second)
	acks1 := leaderAckClient(ctx, t, c)

	// The newest image has the topic; node a may apply it a moment later.
	var (
		off int64
		err error
	)
	c.WaitFor(t, 10*time.Second, fmt.Sprintf("node %d to lead %s[0]", a, topic), func() bool {
		off, err = produceTo(ctx, t, cl, a, topic, 0, seq("in-sync", 0, 10)...)
		return !errors.Is(err, kerr.UnknownTopicOrPartition) && !errors.Is(err, kerr.NotLeaderForPartition)
	})
	if err != nil || off != 0 {
		t.Fatalf("acks=all to %s[0]: offset %d, %v", topic, off, err)
	}
	c.WaitFor(t, 10*time.Second, "node "+fmt.Sprint(lagging)+" to hold 10 records", func() bool {
		return logEndOffset(c, lagging, topic, 0) == 10
	})

	// Cut the lagging node from the partition's other replicas (it still
	// reaches the controller) and append: it falls out of the ISR.
	c.Net.Partition([]int32{lagging}, []int32{a, b})
	if off, err := produceTo(ctx, t, acks1, a, topic, 0, "missed-0"); err != nil || off != 10 {
		t.Fatalf("acks=1 to %s[0]: offset %d, %v", topic, off, err)
	}
	c.WaitFor(t, 15*time.Second, fmt.Sprintf("node %d out of the ISR", lagging), func() bool {
		p, ok := c.Image().Partition(topic, 0)
		return ok && sameSet(p.ISR, []int32{a, b})
	})
	if off, err := produceTo(ctx, t, cl, a, topic, 0, seq("missed", 1, 11)...); err != nil || off != 11 {
		t.Fatalf("acks=all to %s[0] with ISR {%d,%d}: offset %d, %v", topic, a, b, off, err)
	}

	c.Kill(t, b)
	c.Kill(t, a)
	c.WaitFor(t, 15*time.Second, topic+"[0] leaderless", func() bool { return c.Leader(topic, 0) == -1 })
	c.Net.Heal()
	p, _ := c.Image().Partition(topic, 0)
	if slices.Contains(p.ISR, lagging) {
		t.Fatalf("%s[0] went offline with node %d in its ISR %v", topic, lagging, p.ISR)
	}
	epoch := p.LeaderEpoch

	// Unclean election is off: the partition stays offline although a
	// replica is alive, and producing fails.
	c.WaitFor(t, 10*time.Second, fmt.Sprintf("node %d unfenced", lagging), func() bool {
		br := c.Image().Brokers[lagging]
		return br != nil && !br.Fenced
	})
	time.Sleep(time.Second) // ten rounds of the controller's unclean-election check
	md := nodeMetadata(ctx, t, cl, lagging, topic)
	if len(md.Partitions) != 1 || md.Partitions[0].Leader != -1 || md.Partitions[0].ErrorCode != kerr.LeaderNotAvailable.Code {
		t.Fatalf("metadata of %s[0] from node %d with unclean election off: %+v, want leader -1, LEADER_NOT_AVAILABLE", topic, lagging, md.Partitions)
	}
	if _, err := produceTo(ctx, t, cl, lagging, topic, 0, "refused"); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("produce to node %d, an out-of-sync replica of offline %s[0]: %v, want NOT_LEADER_OR_FOLLOWER", lagging, topic, err)
	}

	// Allowed for the topic, the controller elects the live replica.
	adm := c.Admin(t)
	alter, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "unclean.leader.election.enable", Value: kadm.StringPtr("true")}}, topic)
	if err == nil {
		var r kadm.AlterConfigsResponse
		r, err = alter.On(topic, nil)
		if err == nil {
			err = r.Err
		}
	}
	if err != nil {
		t.Fatalf("allow unclean election on %s: %v", topic, err)
	}
	c.WaitFor(t, 10*time.Second, fmt.Sprintf("node %d leading %s[0]", lagging, topic), func() bool {
		return c.Leader(topic, 0) == lagging
	})
	p, _ = c.Image().Partition(topic, 0)
	if !slices.Equal(p.ISR, []int32{lagging}) || p.LeaderEpoch != epoch+1 {
		t.Errorf("after the unclean election %s[0] has ISR %v and leader epoch %d, want [%d] and %d", topic, p.ISR, p.LeaderEpoch, lagging, epoch+1)
	}
	// The records it missed are gone: the next one lands at offset 10.
	c.WaitFor(t, 10*time.Second, fmt.Sprintf("node %d to take produce requests", lagging), func() bool {
		off, err = produceTo(ctx, t, cl, lagging, topic, 0, "unclean-0")
		return err == nil
	})
	if off != 10 {
		t.Errorf("first record after the unclean election at offset %d, want 10", off)
	}
	want := append(seq("in-sync", 0, 10), "unclean-0")
	if got := values(readPartition(t, c, topic, 0, len(want))); !slices.Equal(got, want) {
		t.Errorf("%s[0] reads %v, want %v", topic, got, want)
	}
}

// pollThroughFailover polls cl until n records arrived. Unlike pollN it
// logs fetch errors instead of failing: kgo reports the failed dials and
// rejoins of its group management through PollFetches while it finds the
// new coordinator, and retries them itself.
func pollThroughFailover(ctx context.Context, t testing.TB, cl *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	var out []*kgo.Record
	errs := 0
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records before %v", len(out), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) {
			if errs++; errs <= 5 {
				t.Logf("fetch %s[%d] while the coordinator moves: %v", topic, p, err)
			}
		})
		out = append(out, fs.Records()...)
	}
	return out
}
