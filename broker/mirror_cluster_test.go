package broker_test

import (
	"slices"
	"testing"
	"time"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// TestMirrorCluster drives the mirror RPCs of a three-node destination
// through a node that is not the active controller: forwarding, pattern
// resolution against a one-node source, DescribeMirrors collecting every
// partition from the brokers leading them, the __mirror_state RPCs routed
// to their coordinators, and BumpLeaderEpochs.
func TestMirrorCluster(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	src := brokertest.Start(t)
	ids := sourceTopicIDs(ctx, t, src.Admin(t), map[string]int32{"orders": 6})
	c := brokertest.StartCluster(t, 3, brokertest.WithConfig("mirror.state.topic.num.partitions=4", "default.replication.factor=3"))
	cl := rawClient(ctx, t, c, mirrorOpt)
	ctrl := c.Controller()
	via := int32(1)
	if via == ctrl {
		via = 2
	}
	createTopic(t, c.Admin(t), "plain", 1)

	runSubtests(t, []subtest{
		{"CreateListForwarded", func(t *testing.T) {
			createMirrorVia(ctx, t, cl, via, "m", src.Addr())
			c.WaitFor(t, 10*time.Second, "m on every node", func() bool {
				for _, b := range c.Nodes() {
					if _, ok := b.Node().Image().Mirrors["m"]; !ok {
						return false
					}
				}
				return true
			})
			for _, id := range c.Running() {
				resp := brokerRequest[*mirrormsg.ListMirrorsResponse](ctx, t, cl, id, mirrormsg.NewPtrListMirrorsRequest())
				if resp.ErrorCode != 0 || len(resp.Mirrors) != 1 || resp.Mirrors[0].MirrorName != "m" || resp.Mirrors[0].SourceBootstrap != src.Addr() {
					t.Fatalf("ListMirrors on %d: %+v", id, resp)
				}
			}
		}},
		{"StartForwarded", func(t *testing.T) {
			req := mirrormsg.NewPtrStartMirrorTopicsRequest()
			req.MirrorName, req.TimeoutMs, req.IncludePatterns = "m", 10000, []string{"ord.rs"}
			resp := brokerRequest[*mirrormsg.StartMirrorTopicsResponse](ctx, t, cl, via, req)
			if resp.ErrorCode != 0 || !slices.Equal(startTopicsResult(resp), []string{"orders:"}) {
				t.Fatalf("StartMirrorTopics via %d: %s %v", via, errName(resp.ErrorCode), startTopicsResult(resp))
			}
			checkMirrorTopic(t, c.Node(via).Node().Image(), "orders", ids["orders"], 6, "m")
			c.WaitForISR(t, "orders", 3, 15*time.Second)
		}},
		{"DescribeFanOut", func(t *testing.T) {
			// Every partition once, each from its leader: the manager of
			// the leader has a state for it once its first record is
			// written.
			var last *mirrormsg.DescribeMirrorsResponse
			c.WaitFor(t, 20*time.Second, "every partition of orders described by its leader", func() bool {
				last = brokerRequest[*mirrormsg.DescribeMirrorsResponse](ctx, t, cl, via, mirrormsg.NewPtrDescribeMirrorsRequest())
				if len(last.Mirrors) != 1 || len(last.Mirrors[0].Topics) != 1 {
					return false
				}
				ps := last.Mirrors[0].Topics[0].Partitions
				if len(ps) != 6 {
					t.Fatalf("%d partitions described: %s", len(ps), describeShape(last.Mirrors[0]))
				}
				for i, p := range ps {
					if p.PartitionIndex != int32(i) {
						t.Fatalf("partition %d described as %d", i, p.PartitionIndex)
					}
					if p.State == partition.StateUnknown.String() {
						return false
					}
				}
				return true
			})
			// LocalOnly: each broker describes the partitions it leads
			// and no other.
			img := c.Node(via).Node().Image()
			total := 0
			for _, id := range c.Running() {
				req := mirrormsg.NewPtrDescribeMirrorsRequest()
				req.MirrorNames, req.LocalOnly = []string{"m"}, true
				resp := brokerRequest[*mirrormsg.DescribeMirrorsResponse](ctx, t, cl, id, req)
				if len(resp.Mirrors) != 1 || resp.Mirrors[0].ErrorCode != 0 || len(resp.Mirrors[0].Topics) != 1 {
					t.Fatalf("LocalOnly on %d: %+v", id, resp)
				}
				for _, p := range resp.Mirrors[0].Topics[0].Partitions {
					if l := img.Topics["orders"].Partitions[p.PartitionIndex].Leader; l != id {
						t.Errorf("broker %d described orders-%d, led by %d", id, p.PartitionIndex, l)
					}
					total++
				}
			}
			if total != 6 {
				t.Fatalf("LocalOnly answers described %d partitions, want 6", total)
			}
		}},
		{"ReassignMirrorPartition", func(t *testing.T) { testReassignMirrorPartition(ctx, t, src, c, cl) }},
		{"StatesRouted", func(t *testing.T) {
			img := c.Node(via).Node().Image()
			coord := coordinatorOf(t, img, "m", "plain", 0)
			other := coord%3 + 1
			epoch := img.Topics["plain"].Partitions[0].LeaderEpoch
			if got := writeState(ctx, t, cl, other, "m", "plain", 0, preparing(epoch), 0); errName(got.ErrorCode) != "NOT_COORDINATOR" {
				t.Fatalf("write on %d (coordinator %d): %s", other, coord, errName(got.ErrorCode))
			}
			if got := writeState(ctx, t, cl, coord, "m", "plain", 0, preparing(epoch), 0); got.ErrorCode != 0 || got.StateEpoch != 1 {
				t.Fatalf("write on coordinator %d: %s se=%d", coord, errName(got.ErrorCode), got.StateEpoch)
			}
			if got := readState(ctx, t, cl, coord, "m", "plain", 0); got.State != int8(partition.StatePreparing) || got.StateEpoch != 1 {
				t.Fatalf("read: %+v", got)
			}
			if got := readState(ctx, t, cl, other, "m", "plain", 0); errName(got.ErrorCode) != "NOT_COORDINATOR" {
				t.Fatalf("read on %d: %s", other, errName(got.ErrorCode))
			}
			// The managers wrote orders' records through their
			// StateStores, to coordinators on any broker; MirrorName ""
			// finds them by the topic's mirror.name.
			for p := int32(0); p < 6; p++ {
				coord := coordinatorOf(t, img, "m", "orders", p)
				got := readState(ctx, t, cl, coord, "", "orders", p)
				if got.ErrorCode != 0 || got.State == -1 || got.StateEpoch < 1 {
					t.Fatalf("orders-%d on coordinator %d via mirror.name: %+v", p, coord, got)
				}
			}
		}},
		{"BumpLeaderEpochsForwarded", func(t *testing.T) {
			testBumpLeaderEpochs(ctx, t, cl, func() []*raftmeta.Image {
				out := []*raftmeta.Image{c.Node(via).Node().Image()}
				for _, b := range c.Nodes() {
					out = append(out, b.Node().Image())
				}
				return out
			}, via)
		}},
		{"StopDeleteForwarded", func(t *testing.T) {
			stop := mirrormsg.NewPtrStopMirrorTopicsRequest()
			stop.MirrorName = "m"
			tm := mirrormsg.NewStopMirrorTopicsRequestTopicMetadata()
			tm.TopicName = "orders"
			stop.Topics = append(stop.Topics, tm)
			if resp := brokerRequest[*mirrormsg.StopMirrorTopicsResponse](ctx, t, cl, via, stop); resp.ErrorCode != 0 || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
				t.Fatalf("StopMirrorTopics via %d: %+v", via, resp)
			}
			del := mirrormsg.NewPtrDeleteMirrorRequest()
			del.MirrorName = "m"
			// Refused (CLUSTER_MIRROR_NOT_EMPTY) until orders is stopped.
			c.WaitFor(t, 15*time.Second, "DeleteMirror accepted", func() bool {
				resp := brokerRequest[*mirrormsg.DeleteMirrorResponse](ctx, t, cl, via, del)
				switch errName(resp.ErrorCode) {
				case "":
					return true
				case "CLUSTER_MIRROR_NOT_EMPTY":
					return false
				case "UNKNOWN_CLUSTER_MIRROR":
					// The controller channel resends a request whose
					// answer it lost (ctrlrpc.Client.Send), so a delete
					// that committed can answer this.
					t.Logf("DeleteMirror via %d answered UNKNOWN_CLUSTER_MIRROR: resent by the controller channel", via)
					return true
				}
				t.Fatalf("DeleteMirror via %d: %s", via, errName(resp.ErrorCode))
				return false
			})
			if resp := brokerRequest[*mirrormsg.DeleteMirrorResponse](ctx, t, cl, via, del); errName(resp.ErrorCode) != "UNKNOWN_CLUSTER_MIRROR" {
				t.Fatalf("DeleteMirror again: %s", errName(resp.ErrorCode))
			}
			img := c.Node(via).Node().Image()
			coord := coordinatorOf(t, img, "m", "plain", 0)
			c.WaitFor(t, 10*time.Second, "m's records deleted on their coordinators", func() bool {
				got := readState(ctx, t, cl, coord, "m", "plain", 0)
				return got.ErrorCode == 0 && got.State == -1
			})
			if _, d := img.TopicMirror("orders"); d != partition.DesiredStop {
				t.Fatalf("orders after delete: %v", d)
			}
		}},
	})
}
