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
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestClusterAdmin runs on three voters and a broker-only node (node 4):
// admin requests forwarded from nodes that are not the active controller,
// replica placement, and the broker-only node leading, following, and
// getting its preferred leadership back after a restart.
func TestClusterAdmin(t *testing.T) {
	// No automatic rebalance: the preferred-leader step elects by hand.
	c := brokertest.StartCluster(t, 4, brokertest.WithConfig("auto.leader.rebalance.enable=false"))
	ctx := testCtx(t, 80*time.Second)
	cl := rawClient(ctx, t, c)
	runSubtests(t, []subtest{
		{"Forwarding", func(t *testing.T) { testForwarding(ctx, t, c, cl) }},
		{"ReplicaPlacement", func(t *testing.T) { testReplicaPlacement(ctx, t, c) }},
		{"BrokerOnlyNodeAndPreferredElection", func(t *testing.T) { testBrokerOnlyNode(ctx, t, c, cl) }},
	})
}

// nonController is a voter that is not the active controller.
func nonController(t testing.TB, c *brokertest.Cluster) int32 {
	t.Helper()
	ctrl := c.Controller()
	if ctrl < 1 || ctrl > 3 {
		t.Fatalf("controller is node %d, want one of the voters 1..3", ctrl)
	}
	return 1 + ctrl%3
}

// everyNode waits until check holds for every running node's answers
// (metadata propagates to each node on its own), failing with what.
func everyNode(t testing.TB, c *brokertest.Cluster, what string, check func(id int32) bool) {
	t.Helper()
	var pending []int32
	c.WaitFor(t, 10*time.Second, what+" on every node", func() bool {
		pending = nil
		for _, id := range c.Running() {
			if !check(id) {
				pending = append(pending, id)
			}
		}
		return len(pending) == 0
	})
}

// testForwarding sends each admin change to a voter that is not the
// controller or to the broker-only node, never to the controller, and
// checks the answer and that every node then shows the change.
func testForwarding(ctx context.Context, t *testing.T, c *brokertest.Cluster, cl *kgo.Client) {
	voter, broker := nonController(t, c), int32(4)
	const topic = "forwarded"

	// CreateTopics through the voter.
	{
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 10000
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 2, 3
		req.Topics = append(req.Topics, rt)
		resp := nodeRequest(ctx, t, cl, voter, req).(*kmsg.CreateTopicsResponse)
		if len(resp.Topics) != 1 {
			t.Fatalf("CreateTopics through node %d: %d topics in the answer", voter, len(resp.Topics))
		}
		r := resp.Topics[0]
		if r.ErrorCode != 0 || r.NumPartitions != 2 || r.ReplicationFactor != 3 || r.TopicID == [16]byte{} {
			t.Fatalf("CreateTopics through node %d: code %d (%v), %d partitions, RF %d, id %x",
				voter, r.ErrorCode, kerr.ErrorForCode(r.ErrorCode), r.NumPartitions, r.ReplicationFactor, r.TopicID)
		}
		// The forwarding node waited for the topic: it knows it already.
		if md := nodeMetadata(ctx, t, cl, voter, topic); md.ErrorCode != 0 || len(md.Partitions) != 2 {
			t.Fatalf("node %d right after creating %s: code %d, %d partitions", voter, topic, md.ErrorCode, len(md.Partitions))
		}
		everyNode(t, c, topic+" with 2 partitions of 3 distinct replicas", func(id int32) bool {
			md := nodeMetadata(ctx, t, cl, id, topic)
			if md.ErrorCode != 0 || md.TopicID != r.TopicID || len(md.Partitions) != 2 {
				return false
			}
			for _, p := range md.Partitions {
				if p.Leader < 0 || len(p.Replicas) != 3 || len(distinct(p.Replicas)) != 3 {
					return false
				}
			}
			return true
		})
	}

	// CreatePartitions through the broker-only node.
	{
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.TimeoutMillis = 10000
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = topic, 4
		req.Topics = append(req.Topics, rt)
		resp := nodeRequest(ctx, t, cl, broker, req).(*kmsg.CreatePartitionsResponse)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("CreatePartitions through node %d: %+v", broker, resp.Topics)
		}
		everyNode(t, c, topic+" with 4 partitions, each led", func(id int32) bool {
			md := nodeMetadata(ctx, t, cl, id, topic)
			if md.ErrorCode != 0 || len(md.Partitions) != 4 {
				return false
			}
			for _, p := range md.Partitions {
				if p.Leader < 0 || len(distinct(p.Replicas)) != 3 {
					return false
				}
			}
			return true
		})
	}

	// IncrementalAlterConfigs through the voter.
	{
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
		rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		rc.Name, rc.Op, rc.Value = "retention.ms", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr("3600000")
		rr.Configs = append(rr.Configs, rc)
		req.Resources = append(req.Resources, rr)
		resp := nodeRequest(ctx, t, cl, voter, req).(*kmsg.IncrementalAlterConfigsResponse)
		if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
			t.Fatalf("IncrementalAlterConfigs through node %d: %+v", voter, resp.Resources)
		}
		everyNode(t, c, "retention.ms=3600000 as a dynamic topic config of "+topic, func(id int32) bool {
			req := kmsg.NewPtrDescribeConfigsRequest()
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName, rr.ConfigNames = kmsg.ConfigResourceTypeTopic, topic, []string{"retention.ms"}
			req.Resources = append(req.Resources, rr)
			resp := nodeRequest(ctx, t, cl, id, req).(*kmsg.DescribeConfigsResponse)
			if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 || len(resp.Resources[0].Configs) != 1 {
				return false
			}
			cfg := resp.Resources[0].Configs[0]
			return cfg.Value != nil && *cfg.Value == "3600000" && cfg.Source == kmsg.ConfigSourceDynamicTopicConfig
		})
	}

	// CreateACLs through the broker-only node, DeleteACLs through the voter.
	aclsOnNode := func(id int32) int {
		req := kmsg.NewPtrDescribeACLsRequest()
		req.ResourceType, req.ResourceName = kmsg.ACLResourceTypeTopic, kmsg.StringPtr(topic)
		req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
		req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		resp := nodeRequest(ctx, t, cl, id, req).(*kmsg.DescribeACLsResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("DescribeACLs on node %d: %v", id, kerr.ErrorForCode(resp.ErrorCode))
		}
		n := 0
		for _, r := range resp.Resources {
			for _, a := range r.ACLs {
				if r.ResourceName == topic && a.Principal == "User:alice" && a.Operation == kmsg.ACLOperationRead &&
					a.PermissionType == kmsg.ACLPermissionTypeAllow && a.Host == "*" {
					n++
				}
			}
		}
		return n
	}
	{
		req := kmsg.NewPtrCreateACLsRequest()
		ac := kmsg.NewCreateACLsRequestCreation()
		ac.ResourceType, ac.ResourceName, ac.ResourcePatternType = kmsg.ACLResourceTypeTopic, topic, kmsg.ACLResourcePatternTypeLiteral
		ac.Principal, ac.Host = "User:alice", "*"
		ac.Operation, ac.PermissionType = kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
		req.Creations = append(req.Creations, ac)
		resp := nodeRequest(ctx, t, cl, broker, req).(*kmsg.CreateACLsResponse)
		if len(resp.Results) != 1 || resp.Results[0].ErrorCode != 0 {
			t.Fatalf("CreateACLs through node %d: %+v", broker, resp.Results)
		}
		everyNode(t, c, "one ACL for User:alice on "+topic, func(id int32) bool { return aclsOnNode(id) == 1 })
	}
	{
		req := kmsg.NewPtrDeleteACLsRequest()
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourceName, f.ResourcePatternType = kmsg.ACLResourceTypeTopic, kmsg.StringPtr(topic), kmsg.ACLResourcePatternTypeLiteral
		f.Principal = kmsg.StringPtr("User:alice")
		f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		req.Filters = append(req.Filters, f)
		resp := nodeRequest(ctx, t, cl, voter, req).(*kmsg.DeleteACLsResponse)
		if len(resp.Results) != 1 || resp.Results[0].ErrorCode != 0 || len(resp.Results[0].MatchingACLs) != 1 {
			t.Fatalf("DeleteACLs through node %d: %+v", voter, resp.Results)
		}
		everyNode(t, c, "no ACL on "+topic, func(id int32) bool { return aclsOnNode(id) == 0 })
	}

	// DeleteTopics through the broker-only node.
	{
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.TimeoutMillis = 10000
		req.TopicNames = []string{topic}
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		resp := nodeRequest(ctx, t, cl, broker, req).(*kmsg.DeleteTopicsResponse)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("DeleteTopics through node %d: %+v", broker, resp.Topics)
		}
		everyNode(t, c, topic+" unknown", func(id int32) bool {
			return nodeMetadata(ctx, t, cl, id, topic).ErrorCode == kerr.UnknownTopicOrPartition.Code
		})
	}
}

// distinct is ids without repeats.
func distinct(ids []int32) []int32 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// testReplicaPlacement creates RF=3 topics without an assignment and
// checks, through Metadata, that every partition has three distinct
// replicas led by the first, and that replicas and leaders spread evenly
// over the four brokers (Kafka's rack-unaware assignment: round-robin
// leaders, shifted followers).
func testReplicaPlacement(ctx context.Context, t *testing.T, c *brokertest.Cluster) {
	adm := c.Admin(t)
	for _, tc := range []struct {
		topic      string
		partitions int32
	}{{"placed-8", 8}, {"placed-6", 6}} {
		resp, err := adm.CreateTopic(ctx, tc.partitions, 3, nil, tc.topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			t.Fatalf("create %s: %v", tc.topic, err)
		}
		c.WaitForISR(t, tc.topic, 3, 15*time.Second)
		parts := partitions(ctx, t, adm, tc.topic)
		if len(parts) != int(tc.partitions) {
			t.Fatalf("%s: %d partitions in metadata, want %d", tc.topic, len(parts), tc.partitions)
		}
		leaders, replicas := map[int32]int{}, map[int32]int{}
		for i := int32(0); i < tc.partitions; i++ {
			p := parts[i]
			if p.Err != nil || len(p.Replicas) != 3 || len(distinct(p.Replicas)) != 3 || p.Leader != p.Replicas[0] || !sameSet(p.ISR, p.Replicas) {
				t.Errorf("%s[%d]: replicas %v, ISR %v, leader %d, err %v: want 3 distinct replicas, all in sync, the first leading",
					tc.topic, i, p.Replicas, p.ISR, p.Leader, p.Err)
			}
			leaders[p.Leader]++
			for _, r := range p.Replicas {
				replicas[r]++
			}
		}
		// 4 brokers: each leads partitions/4 (rounded either way) and holds
		// 3*partitions/4 replicas (likewise).
		for _, tally := range []struct {
			what  string
			count map[int32]int
			total int
		}{{"leaders", leaders, int(tc.partitions)}, {"replicas", replicas, 3 * int(tc.partitions)}} {
			lo, hi := tally.total/4, (tally.total+3)/4
			for id := int32(1); id <= 4; id++ {
				if n := tally.count[id]; n < lo || n > hi {
					t.Errorf("%s: broker %d has %d %s, want %d..%d (all: %v)", tc.topic, id, n, tally.what, lo, hi, tally.count)
				}
			}
		}
		t.Logf("%s: leaders per broker %v, replicas per broker %v", tc.topic, leaders, replicas)
	}
}

// testBrokerOnlyNode checks that node 4, a raft non-voter, leads one
// partition and follows another, serves produce and fetch, survives a
// crash and restart, and that a preferred-leader election (kadm to the
// controller, and forwarded from another node) gives it back the
// leadership it lost.
func testBrokerOnlyNode(ctx context.Context, t *testing.T, c *brokertest.Cluster, cl *kgo.Client) {
	const topic = "broker-only"
	// p0 and p3 prefer node 4, which follows p1 and is no replica of p2.
	assignment := [][]int32{{4, 1, 2}, {1, 4, 3}, {2, 3, 1}, {4, 2, 3}}
	createAssigned(ctx, t, cl, 4, topic, assignment, "min.insync.replicas", "2")
	c.WaitForISR(t, topic, 3, 15*time.Second)
	adm := c.Admin(t)
	before := partitions(ctx, t, adm, topic)
	for p, want := range []int32{4, 1, 2, 4} {
		if got := before[int32(p)].Leader; got != want {
			t.Fatalf("%s[%d] is led by %d, want %d (the first replica)", topic, p, got, want)
		}
	}

	prod := c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	produce := func(p int32, from, to int) {
		t.Helper()
		var rs []*kgo.Record
		for _, v := range seq(fmt.Sprintf("p%d", p), from, to) {
			rs = append(rs, &kgo.Record{Partition: p, Value: []byte(v)})
		}
		produceSync(t, prod, rs...)
	}
	for _, p := range []int32{0, 1} {
		produce(p, 0, 100)
	}
	for _, p := range []int32{0, 1} {
		if got, want := values(readPartition(t, c, topic, p, 100)), seq(fmt.Sprintf("p%d", p), 0, 100); !slices.Equal(got, want) {
			t.Fatalf("%s[%d] read %d records, want %d in order", topic, p, len(got), len(want))
		}
	}
	// As a follower of p1, node 4 holds every acknowledged record.
	if leo := logEndOffset(c, 4, topic, 1); leo != 100 {
		t.Fatalf("node 4's replica of %s[1] ends at %d, want 100", topic, leo)
	}

	// Crash node 4: its leaderships move to the next in-sync replica.
	c.Kill(t, 4)
	c.WaitFor(t, 10*time.Second, "p0 and p3 led without node 4", func() bool {
		return c.Leader(topic, 0) == 1 && c.Leader(topic, 3) == 2
	})
	for _, p := range []int32{0, 1} {
		produce(p, 100, 150)
	}
	c.Restart(t, 4)
	c.WaitForISR(t, topic, 3, 15*time.Second)
	c.WaitFor(t, 10*time.Second, "node 4's replicas of p0 and p1 to catch up to 150", func() bool {
		return logEndOffset(c, 4, topic, 0) == 150 && logEndOffset(c, 4, topic, 1) == 150
	})

	// Back in sync, node 4 is not leading what it prefers.
	mid := partitions(ctx, t, adm, topic)
	if mid[0].Leader != 1 || mid[3].Leader != 2 {
		t.Fatalf("after node 4's restart p0 is led by %d and p3 by %d, want 1 and 2", mid[0].Leader, mid[3].Leader)
	}

	// kadm's ElectLeaders goes to the controller.
	var set kadm.TopicsSet
	set.Add(topic, 0, 1)
	res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
	if err != nil {
		t.Fatalf("elect preferred leaders: %v", err)
	}
	if r := res[topic][0]; r.Err != nil {
		t.Errorf("elect %s[0]: %v %s, want success", topic, r.Err, r.ErrMessage)
	}
	if r := res[topic][1]; !errors.Is(r.Err, kerr.ElectionNotNeeded) {
		t.Errorf("elect %s[1]: %v, want ELECTION_NOT_NEEDED (its preferred replica leads)", topic, r.Err)
	}
	if len(res[topic]) != 2 {
		t.Errorf("elect answered for %d partitions, want 2", len(res[topic]))
	}

	// The same, forwarded from a voter that is not the controller.
	{
		req := kmsg.NewPtrElectLeadersRequest()
		req.ElectionType, req.TimeoutMillis = 0, 10000
		rt := kmsg.NewElectLeadersRequestTopic()
		rt.Topic, rt.Partitions = topic, []int32{3}
		req.Topics = append(req.Topics, rt)
		via := nonController(t, c)
		resp := nodeRequest(ctx, t, cl, via, req).(*kmsg.ElectLeadersResponse)
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Errorf("ElectLeaders for %s[3] through node %d: %+v", topic, via, resp)
		}
	}

	var after kadm.PartitionDetails
	c.WaitFor(t, 10*time.Second, "the elections in metadata", func() bool {
		after = partitions(ctx, t, adm, topic)
		return after[0].Leader == 4 && after[3].Leader == 4
	})
	for p, want := range []int32{4, 1, 2, 4} {
		if got := after[int32(p)].Leader; got != want {
			t.Errorf("after the election %s[%d] is led by %d, want %d", topic, p, got, want)
		}
	}
	// An election is one leader change: epoch +1 over the failover's.
	for _, p := range []int32{0, 3} {
		if after[p].LeaderEpoch != mid[p].LeaderEpoch+1 {
			t.Errorf("%s[%d] leader epoch %d after the election, want %d", topic, p, after[p].LeaderEpoch, mid[p].LeaderEpoch+1)
		}
	}
	// Asked again, nothing is to be done.
	res, err = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
	if err != nil || !errors.Is(res[topic][0].Err, kerr.ElectionNotNeeded) {
		t.Errorf("second election of %s[0]: %v %v, want ELECTION_NOT_NEEDED", topic, err, res[topic][0].Err)
	}

	// Node 4 serves produce and fetch as leader again.
	produce(0, 150, 160)
	if got, want := values(readPartition(t, c, topic, 0, 160)), seq("p0", 0, 160); !slices.Equal(got, want) {
		t.Fatalf("%s[0] read %v, want %v", topic, got, want)
	}
}
