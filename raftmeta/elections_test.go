package raftmeta

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/clock"
)

// TestElections drives broker registration, heartbeats, session expiry,
// controlled shutdown, AlterPartition and leader elections through the
// controller's RPC entry points, on a manual clock, and prints what each
// answered and the resulting brokers and partitions. Regenerate with
// -rewrite.
//
//	register id= [incarnation=] [cluster=]
//	heartbeat id= [epoch=] [offset=N|current] [shutdown] [fence]
//	advance d=<duration>
//	tick                           fence expired sessions, unclean elections
//	create-topic name= assignment=1,2,3;2,3,1 [k=v config...]
//	config topic= key= [value=]    (no value: delete; topic "" = broker default)
//	alter-partition broker= [epoch=] topic= p= [leader-epoch=] [partition-epoch=] isr=1,2 [version=]
//	elect type=preferred|unclean [topic= p=]
//	rebalance
func TestElections(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	cfg := Config{NodeID: 1, Clock: clk, Rand: rand.NewChaCha8([32]byte{2})}
	cfg.setDefaults()
	log := &memLog{fsm: NewFSM("test", nil), leader: true}
	c := newController(&cfg, log, cfg.Logger)
	ctx := context.Background()
	last := ""
	datadriven.RunTest(t, "testdata/elections", func(t *testing.T, td *datadriven.TestData) string {
		args := map[string]string{}
		flags := map[string]bool{}
		for _, a := range td.CmdArgs {
			if len(a.Vals) > 0 {
				args[a.Key] = a.Vals[0]
			} else {
				flags[a.Key] = true
			}
		}
		num := func(k string, def int64) int64 {
			v, ok := args[k]
			if !ok {
				return def
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				td.Fatalf(t, "%s=%s: %v", k, v, err)
			}
			return n
		}
		img := log.Image()
		epochOf := func(id int32) int64 {
			if b, ok := img.Brokers[id]; ok {
				return b.Epoch
			}
			return -1
		}
		var out string
		switch td.Cmd {
		case "register":
			id := int32(num("id", 0))
			req := kmsg.NewPtrBrokerRegistrationRequest()
			req.Version = 2
			req.BrokerID = id
			req.ClusterID = "test"
			if v, ok := args["cluster"]; ok {
				req.ClusterID = v
			}
			req.IncarnationID = testID(int(num("incarnation", int64(id))))
			l := kmsg.NewBrokerRegistrationRequestListener()
			l.Name, l.Host, l.Port = "PLAINTEXT", "127.0.0.1", uint16(9090+id)
			req.Listeners = append(req.Listeners, l)
			resp := c.BrokerRegistration(ctx, req)
			out = fmt.Sprintf("error=%s epoch=%d\n", codeName(resp.ErrorCode), resp.BrokerEpoch)
		case "heartbeat":
			id := int32(num("id", 0))
			req := kmsg.NewPtrBrokerHeartbeatRequest()
			req.Version = 1
			req.BrokerID = id
			req.BrokerEpoch = num("epoch", epochOf(id))
			if args["offset"] == "current" {
				req.CurrentMetadataOffset = int64(img.Offset)
			} else {
				req.CurrentMetadataOffset = num("offset", 0)
			}
			req.WantShutdown = flags["shutdown"]
			req.WantFence = flags["fence"]
			resp := c.BrokerHeartbeat(ctx, req)
			out = fmt.Sprintf("error=%s caught-up=%v fenced=%v should-shutdown=%v\n",
				codeName(resp.ErrorCode), resp.IsCaughtUp, resp.IsFenced, resp.ShouldShutdown)
		case "advance":
			d, err := time.ParseDuration(args["d"])
			if err != nil {
				td.Fatalf(t, "%v", err)
			}
			clk.Advance(d)
			return fmt.Sprintf("now +%s\n", clk.Now().Sub(time.Unix(1000, 0)))
		case "tick":
			fenced, err := c.FenceStaleBrokers(ctx)
			if err != nil {
				td.Fatalf(t, "%v", err)
			}
			unclean, err := c.ElectUncleanLeaders(ctx)
			if err != nil {
				td.Fatalf(t, "%v", err)
			}
			out = fmt.Sprintf("fenced=%d unclean-elections=%d\n", fenced, unclean)
		case "create-topic":
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = args["name"], -1, -1
			for i, a := range strings.Split(args["assignment"], ";") {
				ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
				ra.Partition, ra.Replicas = int32(i), parseInt32s(a)
				rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
			}
			for _, k := range slices.Sorted(maps.Keys(args)) {
				if k != "name" && k != "assignment" {
					cc := kmsg.NewCreateTopicsRequestTopicConfig()
					cc.Name, cc.Value = k, kmsg.StringPtr(args[k])
					rt.Configs = append(rt.Configs, cc)
				}
			}
			resp := c.CreateTopics(ctx, createReq(7, rt))
			out = fmt.Sprintf("error=%s %s\n", codeName(resp.Topics[0].ErrorCode), deref(resp.Topics[0].ErrorMessage))
		case "config":
			req := kmsg.NewPtrIncrementalAlterConfigsRequest()
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, args["topic"]
			if args["topic"] == "" {
				rr.ResourceType = kmsg.ConfigResourceTypeBroker
			}
			rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			rc.Name = args["key"]
			if v, ok := args["value"]; ok {
				rc.Value = kmsg.StringPtr(v)
			} else {
				rc.Op = kmsg.IncrementalAlterConfigOpDelete
			}
			rr.Configs = append(rr.Configs, rc)
			req.Resources = append(req.Resources, rr)
			resp := c.IncrementalAlterConfigs(ctx, req)
			out = fmt.Sprintf("error=%s\n", codeName(resp.Resources[0].ErrorCode))
		case "alter-partition":
			resp := c.AlterPartition(ctx, alterPartitionReq(img, args, num))
			out = formatAlterPartition(resp)
		case "elect":
			req := kmsg.NewPtrElectLeadersRequest()
			req.Version = 2
			req.TimeoutMillis = 5000
			if args["type"] == "unclean" {
				req.ElectionType = electionTypeUnclean
			}
			if topic, ok := args["topic"]; ok {
				req.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: topic, Partitions: []int32{int32(num("p", 0))}}}
			}
			resp := c.ElectLeaders(ctx, req)
			var b strings.Builder
			fmt.Fprintf(&b, "error=%s\n", codeName(resp.ErrorCode))
			for _, rt := range resp.Topics {
				for _, rp := range rt.Partitions {
					fmt.Fprintf(&b, "%s-%d: %s\n", rt.Topic, rp.Partition, codeName(rp.ErrorCode))
				}
			}
			out = b.String()
		case "rebalance":
			n, err := c.RebalanceLeaders(ctx)
			if err != nil {
				td.Fatalf(t, "%v", err)
			}
			out = fmt.Sprintf("moved=%d\n", n)
		case "state":
			last = ""
		default:
			td.Fatalf(t, "unknown command %s", td.Cmd)
		}
		state := formatClusterState(log.Image())
		if state == last {
			return out + "(no change)\n"
		}
		last = state
		return out + state
	})
}

// alterPartitionReq builds an AlterPartition request; epochs default to
// the partition's current ones and the broker's current epoch.
func alterPartitionReq(img *Image, args map[string]string, num func(string, int64) int64) *kmsg.AlterPartitionRequest {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = int16(num("version", 3))
	req.BrokerID = int32(num("broker", 0))
	var be int64 = -1
	if b, ok := img.Brokers[req.BrokerID]; ok {
		be = b.Epoch
	}
	req.BrokerEpoch = num("epoch", be)
	rt := kmsg.NewAlterPartitionRequestTopic()
	rt.Topic = args["topic"]
	if t, ok := img.Topics[rt.Topic]; ok {
		rt.TopicID = t.ID
	}
	if _, ok := args["topic-id"]; ok {
		rt.TopicID = testID(int(num("topic-id", 0)))
	}
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.Partition = int32(num("p", 0))
	var le, pe int64
	if p, ok := img.Partition(rt.Topic, rp.Partition); ok {
		le, pe = int64(p.LeaderEpoch), int64(p.PartitionEpoch)
	}
	rp.LeaderEpoch = int32(num("leader-epoch", le))
	rp.PartitionEpoch = int32(num("partition-epoch", pe))
	rp.LeaderRecoveryState = int8(num("recovery", 0))
	isr := parseInt32s(args["isr"])
	if req.Version >= 3 {
		for _, id := range isr {
			m := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
			m.BrokerID, m.BrokerEpoch = id, -1
			if b, ok := img.Brokers[id]; ok {
				m.BrokerEpoch = b.Epoch
			}
			if v, ok := args[fmt.Sprintf("epoch%d", id)]; ok {
				m.BrokerEpoch, _ = strconv.ParseInt(v, 10, 64)
			}
			rp.NewEpochISR = append(rp.NewEpochISR, m)
		}
	} else {
		rp.NewISR = isr
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func formatAlterPartition(resp *kmsg.AlterPartitionResponse) string {
	var b strings.Builder
	fmt.Fprintf(&b, "error=%s\n", codeName(resp.ErrorCode))
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				fmt.Fprintf(&b, "p%d: %s\n", rp.Partition, codeName(rp.ErrorCode))
				continue
			}
			fmt.Fprintf(&b, "p%d: leader=%d leader-epoch=%d isr=%v partition-epoch=%d\n", rp.Partition, rp.LeaderID, rp.LeaderEpoch, rp.ISR, rp.PartitionEpoch)
		}
	}
	return b.String()
}

// formatClusterState prints brokers and partitions compactly.
func formatClusterState(img *Image) string {
	var b strings.Builder
	for _, id := range slices.Sorted(maps.Keys(img.Brokers)) {
		br := img.Brokers[id]
		state := "unfenced"
		switch {
		case br.Fenced:
			state = "fenced"
		case br.InControlledShutdown:
			state = "controlled-shutdown"
		}
		if br.Fenced && br.InControlledShutdown {
			state = "fenced,controlled-shutdown"
		}
		fmt.Fprintf(&b, "broker %d epoch=%d %s\n", id, br.Epoch, state)
	}
	for _, name := range img.TopicNames() {
		for _, p := range img.Topics[name].Partitions {
			fmt.Fprintf(&b, "%s-%d replicas=%v isr=%v leader=%d leader-epoch=%d partition-epoch=%d\n",
				name, p.Index, p.Replicas, p.ISR, p.Leader, p.LeaderEpoch, p.PartitionEpoch)
		}
	}
	return b.String()
}
