package raftmeta

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// reassignController has brokers 1-4 and topic t, one partition on [1 2]
// led by 1.
func reassignController(t *testing.T) *Controller {
	t.Helper()
	c, _ := newTestController(t, Config{}, 1, 2, 3, 4)
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "t", -1, -1
	rt.ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{{Partition: 0, Replicas: []int32{1, 2}}}
	mustCreate(t, c, rt)
	return c
}

// reassign asks for one partition's target (nil: cancel) and returns its
// error code.
func reassign(t *testing.T, c *Controller, topic string, p int32, replicas []int32) int16 {
	t.Helper()
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Partition, rp.Replicas = p, replicas
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := c.AlterPartitionReassignments(context.Background(), req)
	return resp.Topics[0].Partitions[0].ErrorCode
}

// partitionState prints the partition as the tests compare it.
func partitionState(p *Partition) string {
	return fmt.Sprintf("replicas=%v adding=%v removing=%v isr=%v leader=%d leader-epoch=%d", p.Replicas, p.AddingReplicas,
		p.RemovingReplicas, p.ISR, p.Leader, p.LeaderEpoch)
}

func tp0(t *testing.T, c *Controller) *Partition {
	t.Helper()
	p, ok := c.log.Image().Partition("t", 0)
	if !ok {
		t.Fatal("no t-0")
	}
	return p
}

// expandISR has the partition's leader ask for isr, as its AlterPartition
// would once the followers caught up, and returns the error code.
func expandISR(t *testing.T, c *Controller, isr ...int32) int16 {
	t.Helper()
	img := c.log.Image()
	p := tp0(t, c)
	args := map[string]string{"topic": "t"}
	num := func(k string, def int64) int64 {
		if k == "broker" {
			return int64(p.Leader)
		}
		return def
	}
	for i, id := range isr {
		if i > 0 {
			args["isr"] += ","
		}
		args["isr"] += fmt.Sprint(id)
	}
	resp := c.AlterPartition(context.Background(), alterPartitionReq(img, args, num))
	if resp.ErrorCode != 0 {
		return resp.ErrorCode
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

func TestReassignMoveCompletesWhenCaughtUp(t *testing.T) {
	c := reassignController(t)
	if code := reassign(t, c, "t", 0, []int32{2, 3}); code != 0 {
		t.Fatalf("reassign: %s", codeName(code))
	}
	// The target then the removed replica; 3 catches up out of the ISR.
	if got, want := partitionState(tp0(t, c)), "replicas=[2 3 1] adding=[3] removing=[1] isr=[1 2] leader=1 leader-epoch=0"; got != want {
		t.Fatalf("during the move\n got %s\nwant %s", got, want)
	}
	list := ListPartitionReassignments(c.log.Image(), kmsg.NewPtrListPartitionReassignmentsRequest())
	if len(list.Topics) != 1 || fmt.Sprint(list.Topics[0].Partitions[0].AddingReplicas, list.Topics[0].Partitions[0].RemovingReplicas) != "[3] [1]" {
		t.Fatalf("list: %+v", list.Topics)
	}
	// Leader 1 adds 3 to the ISR: the move completes, 1 leaves and the
	// first target replica leads in a new epoch.
	if code := expandISR(t, c, 1, 2, 3); code != kerr.NewLeaderElected.Code {
		t.Fatalf("completing AlterPartition: %s, want NEW_LEADER_ELECTED", codeName(code))
	}
	if got, want := partitionState(tp0(t, c)), "replicas=[2 3] adding=[] removing=[] isr=[2 3] leader=2 leader-epoch=1"; got != want {
		t.Fatalf("after the move\n got %s\nwant %s", got, want)
	}
	if list := ListPartitionReassignments(c.log.Image(), kmsg.NewPtrListPartitionReassignmentsRequest()); len(list.Topics) != 0 {
		t.Fatalf("list after completion: %+v", list.Topics)
	}
}

func TestReassignAddReplicaKeepsLeaderEpoch(t *testing.T) {
	c := reassignController(t)
	if code := reassign(t, c, "t", 0, []int32{1, 2, 3}); code != 0 {
		t.Fatal(codeName(code))
	}
	if code := expandISR(t, c, 1, 2, 3); code != 0 {
		t.Fatal(codeName(code))
	}
	// Nothing left the assignment: no new leader epoch.
	if got, want := partitionState(tp0(t, c)), "replicas=[1 2 3] adding=[] removing=[] isr=[1 2 3] leader=1 leader-epoch=0"; got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
}

func TestReassignImmediateCompletion(t *testing.T) {
	c := reassignController(t)
	// A reorder needs nothing to catch up.
	if code := reassign(t, c, "t", 0, []int32{2, 1}); code != 0 {
		t.Fatal(codeName(code))
	}
	if got, want := partitionState(tp0(t, c)), "replicas=[2 1] adding=[] removing=[] isr=[1 2] leader=1 leader-epoch=0"; got != want {
		t.Fatalf("reorder\n got %s\nwant %s", got, want)
	}
	// Dropping the leader: done at once, 2 leads a new epoch.
	if code := reassign(t, c, "t", 0, []int32{2}); code != 0 {
		t.Fatal(codeName(code))
	}
	if got, want := partitionState(tp0(t, c)), "replicas=[2] adding=[] removing=[] isr=[2] leader=2 leader-epoch=1"; got != want {
		t.Fatalf("shrink\n got %s\nwant %s", got, want)
	}
	// The same assignment again changes nothing.
	before := tp0(t, c).PartitionEpoch
	if code := reassign(t, c, "t", 0, []int32{2}); code != 0 || tp0(t, c).PartitionEpoch != before {
		t.Fatalf("no-op: %s, partition epoch %d -> %d", codeName(code), before, tp0(t, c).PartitionEpoch)
	}
}

func TestReassignCancel(t *testing.T) {
	c := reassignController(t)
	if code := reassign(t, c, "t", 0, nil); code != kerr.NoReassignmentInProgress.Code {
		t.Fatalf("cancel without a move: %s", codeName(code))
	}
	if code := reassign(t, c, "t", 0, []int32{3, 4}); code != 0 {
		t.Fatal(codeName(code))
	}
	if got, want := partitionState(tp0(t, c)), "replicas=[3 4 1 2] adding=[3 4] removing=[1 2] isr=[1 2] leader=1 leader-epoch=0"; got != want {
		t.Fatalf("during\n got %s\nwant %s", got, want)
	}
	if code := reassign(t, c, "t", 0, nil); code != 0 {
		t.Fatal(codeName(code))
	}
	// Back to the original replicas; 3 and 4 left, so a new epoch.
	if got, want := partitionState(tp0(t, c)), "replicas=[1 2] adding=[] removing=[] isr=[1 2] leader=1 leader-epoch=1"; got != want {
		t.Fatalf("cancelled\n got %s\nwant %s", got, want)
	}
}

func TestReassignErrors(t *testing.T) {
	c := reassignController(t)
	ctx := context.Background()
	if err := c.write(ctx, func(img *Image) []Record { return c.cluster.fenceRecords(img, img.Brokers[4]) }); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		topic    string
		p        int32
		replicas []int32
		want     *kerr.Error
	}{
		{"unknown topic", "nope", 0, []int32{1}, kerr.UnknownTopicOrPartition},
		{"unknown partition", "t", 3, []int32{1}, kerr.UnknownTopicOrPartition},
		{"empty", "t", 0, []int32{}, kerr.InvalidReplicaAssignment},
		{"duplicate", "t", 0, []int32{1, 1}, kerr.InvalidReplicaAssignment},
		{"unregistered broker", "t", 0, []int32{1, 9}, kerr.InvalidReplicaAssignment},
		{"fenced new broker", "t", 0, []int32{1, 4}, kerr.InvalidReplicaAssignment},
		{"negative broker", "t", 0, []int32{-1, 2}, kerr.InvalidReplicaAssignment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code := reassign(t, c, tc.topic, tc.p, tc.replicas); code != tc.want.Code {
				t.Fatalf("got %s, want %s", codeName(code), tc.want.Message)
			}
		})
	}
	if got, want := partitionState(tp0(t, c)), "replicas=[1 2] adding=[] removing=[] isr=[1 2] leader=1 leader-epoch=0"; got != want {
		t.Fatalf("refused requests changed the partition\n got %s\nwant %s", got, want)
	}
	// v1 without a replication factor change (KIP-860).
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.Version, req.AllowReplicationFactorChange = 1, false
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = "t"
	rt.Partitions = []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: 0, Replicas: []int32{1, 2, 3}}, {Partition: 0, Replicas: []int32{2, 3}}}
	req.Topics = append(req.Topics, rt)
	resp := c.AlterPartitionReassignments(ctx, req)
	if got := resp.Topics[0].Partitions; got[0].ErrorCode != kerr.InvalidReplicationFactor.Code || got[1].ErrorCode != 0 {
		t.Fatalf("rf change refused, same rf taken: got %s / %s", codeName(got[0].ErrorCode), codeName(got[1].ErrorCode))
	}
}

func TestReassignSurvivesSnapshot(t *testing.T) {
	c := reassignController(t)
	if code := reassign(t, c, "t", 0, []int32{2, 3}); code != 0 {
		t.Fatal(codeName(code))
	}
	img := c.log.Image()
	fsm := NewFSM("test", nil)
	if err := fsm.applyRecords(1, ImageRecords(img)); err != nil {
		t.Fatal(err)
	}
	p, _ := fsm.Image().Partition("t", 0)
	if got, want := partitionState(p), partitionState(tp0(t, c)); got != want {
		t.Fatalf("restored\n got %s\nwant %s", got, want)
	}
}

func TestPartitionRecordWithoutReassignmentKeepsVersion0(t *testing.T) {
	// Logs written before reassignment existed hold version 0 records;
	// a partition not being reassigned is still written so.
	r := &PartitionRecord{PartitionID: 1, TopicID: Uuid{1}, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1}
	if b := EncodeRecord(nil, r); b[1] != 0 {
		t.Fatalf("version %d", b[1])
	}
	ch := &PartitionChangeRecord{PartitionID: 1, TopicID: Uuid{1}, Leader: NoLeaderChange, ISR: []int32{1}}
	if b := EncodeRecord(nil, ch); b[1] != 0 {
		t.Fatalf("change version %d", b[1])
	}
}

func TestUnregisterBroker(t *testing.T) {
	c := reassignController(t)
	ctx := context.Background()
	req := kmsg.NewPtrUnregisterBrokerRequest()
	req.BrokerID = 9
	if resp := c.UnregisterBroker(ctx, req); resp.ErrorCode != kerr.BrokerIDNotRegistered.Code {
		t.Fatalf("unknown broker: %s", codeName(resp.ErrorCode))
	}
	req.BrokerID = 1
	if resp := c.UnregisterBroker(ctx, req); resp.ErrorCode != 0 {
		t.Fatalf("unregister: %s", codeName(resp.ErrorCode))
	}
	img := c.log.Image()
	if _, ok := img.Brokers[1]; ok {
		t.Fatal("broker 1 still registered")
	}
	// It left the ISR and its leadership moved.
	if got, want := partitionState(tp0(t, c)), "replicas=[1 2] adding=[] removing=[] isr=[2] leader=2 leader-epoch=1"; got != want {
		t.Fatalf("\n got %s\nwant %s", got, want)
	}
	// Placement no longer counts it.
	mustCreate(t, c, newTopic("later", 6, 3))
	for _, p := range c.log.Image().Topics["later"].Partitions {
		for _, r := range p.Replicas {
			if r == 1 {
				t.Fatalf("new partition %d placed on the unregistered broker: %v", p.Index, p.Replicas)
			}
		}
	}
	// A move off the unregistered broker works.
	if code := reassign(t, c, "t", 0, []int32{2, 3}); code != 0 {
		t.Fatal(codeName(code))
	}
}
