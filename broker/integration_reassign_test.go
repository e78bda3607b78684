package broker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage"
)

// reassignSessionTimeout is broker.session.timeout.ms in
// TestPartitionReassignment: long enough that a crashed node stays
// registered and unfenced while a move to it is started, so the move
// waits for it (the controller refuses to add a fenced broker).
const reassignSessionTimeout = 20 * time.Second

// TestPartitionReassignment runs KIP-455 on three nodes through kadm and
// kafka-go: adding a replica, moving a partition off its leader under an
// idempotent acks=all producer (nothing acknowledged lost or duplicated),
// a move to a down broker that waits, is listed, keeps Metadata and
// acks=all working, is cancelled, and completes once the broker is back,
// the errors, and UnregisterBroker of a stopped broker.
func TestPartitionReassignment(t *testing.T) {
	c := brokertest.StartCluster(t, 3, brokertest.WithConfig(
		fmt.Sprintf("broker.session.timeout.ms=%d", reassignSessionTimeout.Milliseconds())))
	ctx := testCtx(t, 150*time.Second)
	cl := rawClient(ctx, t, c)
	adm := kadm.NewClient(cl)
	runSubtests(t, []subtest{
		{"AddReplica", func(t *testing.T) { testReassignAddReplica(ctx, t, c, cl, adm) }},
		{"MoveLeaderUnderLoad", func(t *testing.T) { testReassignUnderLoad(ctx, t, c, cl, adm) }},
		{"Errors", func(t *testing.T) { testReassignErrors(ctx, t, adm) }},
		{"WaitCancelAndRestart", func(t *testing.T) { testReassignWaitCancelRestart(ctx, t, c, cl, adm) }},
		{"UnregisterBroker", func(t *testing.T) { testUnregisterBroker(ctx, t, c, cl, adm) }},
	})
}

// reassign asks for the targets through kadm and fails on any error.
func reassign(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, targets map[int32][]int32) {
	t.Helper()
	req := kadm.AlterPartitionAssignmentsReq{}
	for p, r := range targets {
		req.Assign(topic, p, r)
	}
	resps, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		t.Fatalf("AlterPartitionAssignments: %v", err)
	}
	for _, r := range resps.Sorted() {
		if r.Err != nil {
			t.Fatalf("AlterPartitionAssignments %s[%d]: %v %s", r.Topic, r.Partition, r.Err, r.ErrMessage)
		}
	}
}

// waitReassigned waits until every running node sees topic[p] with
// exactly the replicas, in order, no reassignment and all of them in the
// ISR, and each running replica took the leader and epoch it names.
func waitReassigned(t *testing.T, c *brokertest.Cluster, topic string, p int32, replicas []int32) {
	t.Helper()
	c.WaitFor(t, 30*time.Second, fmt.Sprintf("%s[%d] on %v", topic, p, replicas), func() bool {
		for _, id := range c.Running() {
			n := c.Node(id).Node()
			pp, ok := n.Image().Partition(topic, p)
			if !ok || !slices.Equal(pp.Replicas, replicas) || pp.Reassigning() || !sameSet(pp.ISR, replicas) || pp.Leader < 0 {
				return false
			}
			if slices.Contains(replicas, id) {
				r, ok := n.Replicas().Partition(storage.TopicPartition{Topic: topic, Partition: p})
				if !ok || r.Leader() != pp.Leader || r.LeaderEpoch() != pp.LeaderEpoch {
					return false
				}
			}
		}
		return true
	})
}

// localLEO is node id's log end offset of topic[p], -1 if it hosts none.
func localLEO(c *brokertest.Cluster, id int32, topic string, p int32) int64 {
	n := c.Node(id).Node()
	if n == nil || n.Replicas() == nil {
		return -1
	}
	r, ok := n.Replicas().Partition(storage.TopicPartition{Topic: topic, Partition: p})
	if !ok {
		return -1
	}
	return r.Log().LogEndOffset()
}

func testReassignAddReplica(ctx context.Context, t *testing.T, c *brokertest.Cluster, cl *kgo.Client, adm *kadm.Client) {
	const topic = "reassign-add"
	createAssigned(ctx, t, cl, 1, topic, [][]int32{{1, 2}})
	c.WaitForISR(t, topic, 2, 15*time.Second)
	prod := c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	var rs []*kgo.Record
	for _, v := range seq("add", 0, 200) {
		rs = append(rs, &kgo.Record{Value: []byte(v)})
	}
	produceSync(t, prod, rs...)
	reassign(ctx, t, adm, topic, map[int32][]int32{0: {1, 2, 3}})
	waitReassigned(t, c, topic, 0, []int32{1, 2, 3})
	// Node 3 caught up as a follower before it joined the ISR.
	if leo := localLEO(c, 3, topic, 0); leo != 200 {
		t.Fatalf("node 3 has log end offset %d, want 200", leo)
	}
	if got := partitions(ctx, t, adm, topic)[0]; !slices.Equal(got.Replicas, []int32{1, 2, 3}) || got.Leader != 1 {
		t.Fatalf("metadata: replicas %v leader %d", got.Replicas, got.Leader)
	}
}

// testReassignUnderLoad moves [1 2] to [3 2] while an idempotent acks=all
// producer runs: 1, the leader, leaves, and 3, the new preferred replica,
// leads. Every acknowledged record is read back exactly once.
func testReassignUnderLoad(ctx context.Context, t *testing.T, c *brokertest.Cluster, cl *kgo.Client, adm *kadm.Client) {
	const topic = "reassign-move"
	createAssigned(ctx, t, cl, 1, topic, [][]int32{{1, 2}}, "min.insync.replicas", "2")
	c.WaitForISR(t, topic, 2, 15*time.Second)
	prod := c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0), kgo.MaxBufferedRecords(64))
	var (
		mu    sync.Mutex
		acked []string
		fails int
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprintf("mv-%06d", i)
			prod.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					fails++
					return
				}
				acked = append(acked, v)
			})
		}
	}()
	countAcked := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	c.WaitFor(t, 20*time.Second, "200 records acknowledged before the move", func() bool { return countAcked() >= 200 })
	reassign(ctx, t, adm, topic, map[int32][]int32{0: {3, 2}})
	waitReassigned(t, c, topic, 0, []int32{3, 2})
	if l := c.Leader(topic, 0); l != 3 {
		t.Fatalf("leader %d after the move, want 3 (the first target replica)", l)
	}
	before := countAcked()
	c.WaitFor(t, 20*time.Second, "200 more records acknowledged after the move", func() bool { return countAcked() >= before+200 })
	close(stop)
	<-done
	if err := prod.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	mu.Lock()
	want := slices.Clone(acked)
	t.Logf("acknowledged %d records, %d failed", len(want), fails)
	mu.Unlock()
	// Read the whole log back from the new replicas: records whose ack
	// failed may be in it too.
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	got := readPartition(t, c, topic, 0, int(end.Offset))
	seen := map[string]int{}
	for _, r := range got {
		seen[string(r.Value)]++
	}
	lost, dup := 0, 0
	for _, v := range want {
		switch seen[v] {
		case 0:
			lost++
		case 1:
		default:
			dup++
		}
	}
	if lost != 0 || dup != 0 {
		t.Fatalf("lost %d, duplicated %d of %d acknowledged records", lost, dup, len(want))
	}
	// The removed replica's log is gone from node 1.
	c.WaitFor(t, 10*time.Second, "node 1 to delete its replica", func() bool { return localLEO(c, 1, topic, 0) == -1 })
}

func testReassignErrors(ctx context.Context, t *testing.T, adm *kadm.Client) {
	const topic = "reassign-add" // [1 2 3]
	for _, tc := range []struct {
		name     string
		topic    string
		p        int32
		replicas []int32
		want     error
	}{
		{"unknown topic", "nope", 0, []int32{1}, kerr.UnknownTopicOrPartition},
		{"unknown partition", topic, 7, []int32{1}, kerr.UnknownTopicOrPartition},
		{"empty", topic, 0, []int32{}, kerr.InvalidReplicaAssignment},
		{"duplicate", topic, 0, []int32{1, 1}, kerr.InvalidReplicaAssignment},
		{"unregistered broker", topic, 0, []int32{1, 9}, kerr.InvalidReplicaAssignment},
		{"cancel without a move", topic, 0, nil, kerr.NoReassignmentInProgress},
	} {
		req := kadm.AlterPartitionAssignmentsReq{}
		req.Assign(tc.topic, tc.p, tc.replicas)
		resps, err := adm.AlterPartitionAssignments(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := resps[tc.topic][tc.p]; !errors.Is(got.Err, tc.want) {
			t.Errorf("%s: %v (%s), want %v", tc.name, got.Err, got.ErrMessage, tc.want)
		}
	}
}

// listAll is ListPartitionReassignments with null topics: every move.
func listAll(ctx context.Context, t *testing.T, cl *kgo.Client) []kmsg.ListPartitionReassignmentsResponseTopic {
	t.Helper()
	resp, err := kmsg.NewPtrListPartitionReassignmentsRequest().RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("ListPartitionReassignments: %v %v", err, kerr.ErrorForCode(resp.ErrorCode))
	}
	return resp.Topics
}

// testReassignWaitCancelRestart moves partitions to node 3 while it is
// down: the move waits and is listed (kadm, kafka-go, null topics),
// Metadata and acks=all keep working with the old ISR, kafka-go cancels
// one, and the other completes once node 3 is back.
func testReassignWaitCancelRestart(ctx context.Context, t *testing.T, c *brokertest.Cluster, cl *kgo.Client, adm *kadm.Client) {
	const topic = "reassign-wait"
	createAssigned(ctx, t, cl, 1, topic, [][]int32{{1, 2}, {2, 1}}, "min.insync.replicas", "2")
	c.WaitForISR(t, topic, 2, 15*time.Second)
	c.Kill(t, 3)
	// kafka-go sends its admin requests to the controller Metadata names:
	// wait for a live one, and give it its own transport (the default one
	// caches metadata).
	c.WaitFor(t, 20*time.Second, "a controller other than node 3", func() bool {
		id := c.Controller()
		return id == 1 || id == 2
	})
	// kafka-go starts one move, kadm the other.
	kg := &kafka.Client{Addr: kafka.TCP(c.Node(1).Addr(), c.Node(2).Addr()), Timeout: 20 * time.Second, Transport: &kafka.Transport{}}
	kres, err := kg.AlterPartitionReassignments(ctx, &kafka.AlterPartitionReassignmentsRequest{
		Topic: topic, Assignments: []kafka.AlterPartitionReassignmentsRequestAssignment{{PartitionID: 0, BrokerIDs: []int{1, 3}}},
	})
	if err != nil || kres.Error != nil || len(kres.PartitionResults) != 1 || kres.PartitionResults[0].Error != nil {
		t.Fatalf("kafka-go AlterPartitionReassignments: %v %+v", err, kres)
	}
	reassign(ctx, t, adm, topic, map[int32][]int32{1: {3, 1}})

	// Both wait for node 3: listed with their adding and removing replicas.
	lists, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{topic: {0: {}, 1: {}}})
	if err != nil {
		t.Fatal(err)
	}
	got0, got1 := lists[topic][0], lists[topic][1]
	if fmt.Sprint(got0.Replicas, got0.AddingReplicas, got0.RemovingReplicas) != "[1 3 2] [3] [2]" ||
		fmt.Sprint(got1.Replicas, got1.AddingReplicas, got1.RemovingReplicas) != "[3 1 2] [3] [2]" {
		t.Fatalf("kadm list: %+v / %+v", got0, got1)
	}
	if all := listAll(ctx, t, cl); len(all) != 1 || all[0].Topic != topic || len(all[0].Partitions) != 2 {
		t.Fatalf("list of every move: %+v", all)
	}
	klist, err := kg.ListPartitionReassignments(ctx, &kafka.ListPartitionReassignmentsRequest{
		Topics: map[string]kafka.ListPartitionReassignmentsRequestTopic{topic: {PartitionIndexes: []int{0, 1}}},
	})
	if err != nil || klist.Error != nil || len(klist.Topics[topic].Partitions) != 2 {
		t.Fatalf("kafka-go ListPartitionReassignments: %v %+v", err, klist)
	}
	// Metadata lists the partitions with every replica; acks=all with
	// min.insync.replicas=2 is answered by the ISR [1 2].
	if ps := partitions(ctx, t, adm, topic); !slices.Equal(ps[0].Replicas, []int32{1, 3, 2}) || !sameSet(ps[0].ISR, []int32{1, 2}) {
		t.Fatalf("metadata during the move: %+v", ps[0])
	}
	prod := c.Client(t, kgo.SeedBrokers(c.Node(1).Addr(), c.Node(2).Addr()), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var rs []*kgo.Record
	for p := range int32(2) {
		for _, v := range seq(fmt.Sprintf("wait%d", p), 0, 50) {
			rs = append(rs, &kgo.Record{Partition: p, Value: []byte(v)})
		}
	}
	produceSync(t, prod, rs...)

	// kafka-go sends nil BrokerIDs as an empty list, not null: refused as
	// Kafka refuses it, and the move goes on.
	kres, err = kg.AlterPartitionReassignments(ctx, &kafka.AlterPartitionReassignmentsRequest{
		Topic: topic, Assignments: []kafka.AlterPartitionReassignmentsRequestAssignment{{PartitionID: 0, BrokerIDs: nil}},
	})
	if err != nil || kres.Error != nil || !errors.Is(kres.PartitionResults[0].Error, kafka.InvalidReplicaAssignment) {
		t.Fatalf("kafka-go empty target: %v %+v", err, kres)
	}
	// kadm cancels partition 0 (a null target): back to [1 2].
	cancel := kadm.AlterPartitionAssignmentsReq{}
	cancel.Assign(topic, 0, nil)
	if resps, err := adm.AlterPartitionAssignments(ctx, cancel); err != nil || resps[topic][0].Err != nil {
		t.Fatalf("cancel: %v %+v", err, resps)
	}
	if pp, _ := c.Image().Partition(topic, 0); !slices.Equal(pp.Replicas, []int32{1, 2}) || pp.Reassigning() {
		t.Fatalf("after cancel: replicas %v adding %v removing %v", pp.Replicas, pp.AddingReplicas, pp.RemovingReplicas)
	}

	// Node 3 comes back: the move still in the metadata log completes,
	// and 3, the first target replica, leads.
	c.Restart(t, 3)
	waitReassigned(t, c, topic, 1, []int32{3, 1})
	c.WaitFor(t, 30*time.Second, "node 3 to lead partition 1", func() bool { return c.Leader(topic, 1) == 3 })
	if leo := localLEO(c, 3, topic, 1); leo != 50 {
		t.Fatalf("node 3 has %d records of partition 1, want 50", leo)
	}
	if all := listAll(ctx, t, cl); len(all) != 0 {
		t.Fatalf("moves left: %+v", all)
	}
}

// testUnregisterBroker moves every replica off node 3, stops it and
// unregisters it: DescribeCluster no longer lists it and new topics are
// not placed on it.
func testUnregisterBroker(ctx context.Context, t *testing.T, c *brokertest.Cluster, cl *kgo.Client, adm *kadm.Client) {
	img := c.Image()
	for _, name := range img.TopicNames() {
		for _, p := range img.Topics[name].Partitions {
			if !slices.Contains(p.Replicas, 3) {
				continue
			}
			target := slices.DeleteFunc(slices.Clone(p.Replicas), func(r int32) bool { return r == 3 })
			for _, r := range []int32{1, 2} {
				if !slices.Contains(target, r) {
					target = append(target, r)
					break
				}
			}
			reassign(ctx, t, adm, name, map[int32][]int32{p.Index: target})
		}
	}
	c.WaitFor(t, 30*time.Second, "no replica left on node 3", func() bool {
		for _, tp := range c.Image().Topics {
			for _, p := range tp.Partitions {
				if slices.Contains(p.Replicas, 3) {
					return false
				}
			}
		}
		return true
	})
	c.Stop(t, 3)
	cl12 := c.Client(t, kgo.SeedBrokers(c.Node(1).Addr(), c.Node(2).Addr()))
	unregister := func(id int32) int16 {
		req := kmsg.NewPtrUnregisterBrokerRequest()
		req.BrokerID = id
		resp, err := req.RequestWith(ctx, cl12)
		if err != nil {
			t.Fatalf("UnregisterBroker: %v", err)
		}
		return resp.ErrorCode
	}
	if code := unregister(3); code != 0 {
		t.Fatalf("UnregisterBroker 3: %v", kerr.ErrorForCode(code))
	}
	if code := unregister(3); code != kerr.BrokerIDNotRegistered.Code {
		t.Fatalf("UnregisterBroker 3 again: %v", kerr.ErrorForCode(code))
	}
	brokers, err := kadm.NewClient(cl12).ListBrokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ids := brokers.NodeIDs(); !slices.Equal(ids, []int32{1, 2}) {
		t.Fatalf("DescribeCluster lists %v after unregistering 3", ids)
	}
	// Placement counts registered brokers only: three replicas no longer
	// fit (a stopped broker still registered would get one, out of the
	// ISR until it is back).
	resp, err := kadm.NewClient(cl12).CreateTopic(ctx, 1, 3, nil, "rf3-after-unregister")
	if err == nil {
		err = resp.Err
	}
	if !errors.Is(err, kerr.InvalidReplicationFactor) {
		t.Fatalf("RF 3 on two registered brokers: %v", err)
	}
	createReplicatedTopic(t, kadm.NewClient(cl12), "after-unregister", 6, 2)
	for _, p := range c.Image().Topics["after-unregister"].Partitions {
		if slices.Contains(p.Replicas, 3) {
			t.Fatalf("partition %d placed on the unregistered broker: %v", p.Index, p.Replicas)
		}
	}
}
