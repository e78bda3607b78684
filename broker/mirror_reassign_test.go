package broker_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// testReassignMirrorPartition moves a mirror partition (read-only,
// KIP-1279) off its leader: the mirror state follows the leadership to
// the first target replica, as in an election, and mirroring goes on
// there. The partition then gets its replicas back.
func testReassignMirrorPartition(ctx context.Context, t *testing.T, src *brokertest.Broker, c *brokertest.Cluster, cl *kgo.Client) {
	const topic = "orders"
	adm := c.Admin(t)
	prod := src.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceSrc := func(from, to int) {
		t.Helper()
		var rs []*kgo.Record
		for _, v := range seq("mirrored", from, to) {
			rs = append(rs, &kgo.Record{Partition: 0, Value: []byte(v)})
		}
		produceSync(t, prod, rs...)
	}
	waitMirrored := func(n int64) {
		t.Helper()
		c.WaitFor(t, 30*time.Second, fmt.Sprintf("%s[0] mirrored up to %d", topic, n), func() bool {
			ends, err := adm.ListEndOffsets(ctx, topic)
			if err != nil {
				return false
			}
			o, ok := ends.Lookup(topic, 0)
			return ok && o.Err == nil && o.Offset >= n
		})
	}
	before, ok := c.Image().Partition(topic, 0)
	if !ok {
		t.Fatal("no orders-0")
	}
	ends, err := kadm.NewClient(src.Client(t)).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	have, _ := ends.Lookup(topic, 0)
	produceSrc(0, 100)
	waitMirrored(have.Offset + 100)

	original := slices.Clone(before.Replicas)
	target := slices.DeleteFunc(slices.Clone(original), func(r int32) bool { return r == before.Leader })
	reassign(ctx, t, adm, topic, map[int32][]int32{0: target})
	waitReassigned(t, c, topic, 0, target)
	if l := c.Leader(topic, 0); l != target[0] {
		t.Fatalf("leader %d after moving the mirror partition off %d, want %d", l, before.Leader, target[0])
	}
	// The new leader mirrors: the source's next records arrive, and it
	// describes the partition as MIRRORING.
	produceSrc(100, 200)
	waitMirrored(have.Offset + 200)
	state := ""
	c.WaitFor(t, 20*time.Second, "the new leader to describe orders-0 as mirroring", func() bool {
		req := mirrormsg.NewPtrDescribeMirrorsRequest()
		req.MirrorNames, req.LocalOnly = []string{"m"}, true
		resp := brokerRequest[*mirrormsg.DescribeMirrorsResponse](ctx, t, cl, target[0], req)
		if len(resp.Mirrors) != 1 || len(resp.Mirrors[0].Topics) != 1 {
			return false
		}
		for _, p := range resp.Mirrors[0].Topics[0].Partitions {
			if p.PartitionIndex == 0 {
				state = p.State
			}
		}
		return state == partition.StateMirroring.String()
	})
	t.Logf("orders-0 on its new leader %d: %s", target[0], state)
	// Back to the original replicas (the leader stays where it is).
	reassign(ctx, t, adm, topic, map[int32][]int32{0: original})
	waitReassigned(t, c, topic, 0, original)
}
