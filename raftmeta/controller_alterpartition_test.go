package raftmeta

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// alterPartitionController has brokers 1-4 and topic t with replicas
// [1 2 3 4] led by 1; broker 4 was fenced (ISR [1 2 3], partition epoch 1)
// and broker 3 is in controlled shutdown (still in the ISR).
func alterPartitionController(t *testing.T) (*Controller, *memLog) {
	t.Helper()
	c, log := newTestController(t, Config{}, 1, 2, 3, 4)
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "t", -1, -1
	rt.ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{{Partition: 0, Replicas: []int32{1, 2, 3, 4}}}
	mustCreate(t, c, rt)
	ctx := context.Background()
	if err := c.write(ctx, func(img *Image) []Record { return c.cluster.fenceRecords(img, img.Brokers[4]) }); err != nil {
		t.Fatal(err)
	}
	if err := c.write(ctx, func(img *Image) []Record {
		return []Record{&BrokerRegistrationChangeRecord{BrokerID: 3, BrokerEpoch: img.Brokers[3].Epoch, InControlledShutdown: 1}}
	}); err != nil {
		t.Fatal(err)
	}
	return c, log
}

func TestAlterPartitionValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		args string // alterPartitionReq arguments
		want string // formatAlterPartition, one line per partition after the first
		// wantState is t-0 afterwards when it changed.
		wantState string
	}{
		{"shrink", "broker=1 topic=t p=0 isr=1,2", "error=NONE p0: leader=1 leader-epoch=0 isr=[1 2] partition-epoch=2",
			"replicas=[1 2 3 4] isr=[1 2] leader=1 leader-epoch=0 partition-epoch=2"},
		{"shrink v0 by name", "broker=1 topic=t p=0 isr=2,1 version=0", "error=NONE p0: leader=1 leader-epoch=0 isr=[2 1] partition-epoch=2",
			"replicas=[1 2 3 4] isr=[2 1] leader=1 leader-epoch=0 partition-epoch=2"},
		{"no change", "broker=1 topic=t p=0 isr=1,2,3", "error=NONE p0: leader=1 leader-epoch=0 isr=[1 2 3] partition-epoch=1", ""},
		{"stale broker epoch", "broker=1 epoch=99 topic=t p=0 isr=1,2", "error=STALE_BROKER_EPOCH", ""},
		{"unregistered broker", "broker=7 epoch=1 topic=t p=0 isr=1,2", "error=STALE_BROKER_EPOCH", ""},
		{"unknown topic id", "broker=1 topic=t topic-id=9 p=0 isr=1,2", "error=NONE p0: UNKNOWN_TOPIC_ID", ""},
		{"unknown topic name v1", "broker=1 topic=nope p=0 isr=1,2 version=1", "error=NONE p0: UNKNOWN_TOPIC_OR_PARTITION", ""},
		{"unknown partition", "broker=1 topic=t p=5 isr=1,2", "error=NONE p5: UNKNOWN_TOPIC_OR_PARTITION", ""},
		{"leader epoch ahead", "broker=1 topic=t p=0 leader-epoch=1 isr=1,2", "error=NONE p0: NOT_CONTROLLER", ""},
		{"partition epoch ahead", "broker=1 topic=t p=0 partition-epoch=2 isr=1,2", "error=NONE p0: NOT_CONTROLLER", ""},
		{"leader epoch behind", "broker=1 topic=t p=0 leader-epoch=-1 isr=1,2", "error=NONE p0: FENCED_LEADER_EPOCH", ""},
		{"not the leader", "broker=2 topic=t p=0 isr=1,2", "error=NONE p0: INVALID_REQUEST", ""},
		{"partition epoch behind", "broker=1 topic=t p=0 partition-epoch=0 isr=1,2", "error=NONE p0: INVALID_UPDATE_VERSION", ""},
		{"not a replica", "broker=1 topic=t p=0 isr=1,5", "error=NONE p0: INVALID_REQUEST", ""},
		{"leader left out", "broker=1 topic=t p=0 isr=2", "error=NONE p0: INVALID_REQUEST", ""},
		{"repeated member", "broker=1 topic=t p=0 isr=1,2,2", "error=NONE p0: INVALID_REQUEST", ""},
		{"recovering", "broker=1 topic=t p=0 isr=1 recovery=1", "error=NONE p0: INVALID_REQUEST", ""},
		{"fenced member", "broker=1 topic=t p=0 isr=1,2,4", "error=NONE p0: INELIGIBLE_REPLICA", ""},
		{"fenced member v1", "broker=1 topic=t p=0 isr=1,2,4 version=1", "error=NONE p0: OPERATION_NOT_ATTEMPTED", ""},
		{"shutting down member", "broker=1 topic=t p=0 isr=1,2,3", "error=NONE p0: INELIGIBLE_REPLICA", ""},
		{"member epoch mismatch", "broker=1 topic=t p=0 isr=1,2 epoch2=1", "error=NONE p0: INELIGIBLE_REPLICA", ""},
		{"member epoch unchecked", "broker=1 topic=t p=0 isr=1,2 epoch2=-1", "error=NONE p0: leader=1 leader-epoch=0 isr=[1 2] partition-epoch=2",
			"replicas=[1 2 3 4] isr=[1 2] leader=1 leader-epoch=0 partition-epoch=2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, log := alterPartitionController(t)
			if tc.name == "no change" {
				// Broker 3 is not shutting down for this case: its ISR is
				// the current one.
				if err := c.write(context.Background(), func(img *Image) []Record {
					return []Record{&RegisterBrokerRecord{BrokerID: 3, IncarnationID: img.Brokers[3].IncarnationID,
						BrokerEpoch: img.Brokers[3].Epoch + 100, EndPoints: img.Brokers[3].Endpoints}}
				}); err != nil {
					t.Fatal(err)
				}
			}
			img := log.Image()
			before := formatClusterState(img)
			proposals := log.proposals()
			args := map[string]string{}
			for _, f := range strings.Fields(tc.args) {
				k, v, _ := strings.Cut(f, "=")
				args[k] = v
			}
			num := func(k string, def int64) int64 {
				if v, ok := args[k]; ok {
					n, err := strconv.ParseInt(v, 10, 64)
					if err != nil {
						t.Fatal(err)
					}
					return n
				}
				return def
			}
			resp := c.AlterPartition(context.Background(), alterPartitionReq(img, args, num))
			if got := strings.Join(strings.Fields(strings.ReplaceAll(formatAlterPartition(resp), "\n", " ")), " "); got != tc.want {
				t.Fatalf("answer %q, want %q", got, tc.want)
			}
			after := log.Image()
			if tc.wantState == "" {
				if formatClusterState(after) != before || log.proposals() != proposals {
					t.Fatalf("the metadata changed:\n%s", formatClusterState(after))
				}
				return
			}
			p, _ := after.Partition("t", 0)
			got := fmt.Sprintf("replicas=%v isr=%v leader=%d leader-epoch=%d partition-epoch=%d", p.Replicas, p.ISR, p.Leader, p.LeaderEpoch, p.PartitionEpoch)
			if got != tc.wantState {
				t.Fatalf("t-0 %s, want %s", got, tc.wantState)
			}
		})
	}
}

func TestAlterPartitionNotController(t *testing.T) {
	c, log := alterPartitionController(t)
	log.mu.Lock()
	log.leader = false
	log.mu.Unlock()
	args := map[string]string{"broker": "1", "topic": "t", "p": "0", "isr": "1,2"}
	resp := c.AlterPartition(context.Background(), alterPartitionReq(log.Image(), args, func(k string, def int64) int64 {
		if v, ok := args[k]; ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
		return def
	}))
	if got := formatAlterPartition(resp); got != "error=NOT_CONTROLLER\n" {
		t.Fatalf("answer %q", got)
	}
}
