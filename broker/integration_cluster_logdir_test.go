package broker_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/vfs"
)

// TestLogDirFailureHaltsTheBroker: the disk under a partition leader's log
// fails. As Kafka halts a broker whose log directories have all failed,
// the node halts; the controller fences it and elects a new leader from
// the ISR, and the producer's acknowledged records are all there, once,
// where they were acknowledged. Before, the node stayed up leading the
// partition and answered KAFKA_STORAGE_ERROR until restarted.
func TestLogDirFailureHaltsTheBroker(t *testing.T) {
	disks := map[int32]*vfs.ErrorFS{}
	for id := int32(1); id <= 3; id++ {
		disks[id] = vfs.WithErrors(vfs.OS{}, nil)
	}
	c := brokertest.StartCluster(t, 3,
		brokertest.WithFS(func(id int32) vfs.FS { return disks[id] }),
		brokertest.WithConfig("auto.leader.rebalance.enable=false"))
	ctx := testCtx(t, 60*time.Second)
	const topic = "disk-fails"
	createReplicatedTopic(t, c.Admin(t), topic, 3, 3, "min.insync.replicas", "2")
	c.WaitForISR(t, topic, 3, 15*time.Second)

	prod := c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	acked := ackLedger{}
	produce := func(prefix string, n int) { t.Helper(); acked.produce(ctx, t, prod, prefix, n, 3) }
	produce("before", 300)

	victim := c.Leader(topic, 0)
	node := c.Node(victim).Node()
	partDir := "/" + topic + "-0/"
	disks[victim].SetInjector(func(op vfs.Op, path string) error {
		if op == vfs.OpWrite && strings.Contains(path, partDir) {
			return vfs.ErrInjected
		}
		return nil
	})
	start := time.Now()
	produce("during", 300) // partition 0's first append on the victim fails
	select {
	case <-node.Halted():
	case <-time.After(10 * time.Second):
		t.Fatalf("node %d did not halt after its disk failed", victim)
	}
	var se *storage.StorageError
	if err := node.HaltErr(); !errors.As(err, &se) || !errors.Is(err, vfs.ErrInjected) || se.Op != "append" {
		t.Fatalf("node %d halted with %v, want the StorageError of the failed append", victim, err)
	}
	now := c.Leader(topic, 0)
	if now == victim || now < 0 {
		t.Fatalf("%s[0] is led by %d after node %d halted", topic, now, victim)
	}
	t.Logf("node %d halted on %v; %s[0] moved to node %d; 600 records acknowledged in %v", victim, se, topic, now, time.Since(start).Round(time.Millisecond))
	produce("after", 300)

	// Every acknowledged record once, where it was acknowledged.
	acked.audit(ctx, t, c, topic)

	// A new disk: the node starts again, recovers and catches up.
	disks[victim].SetInjector(nil)
	c.Kill(t, victim) // already halted; releases the harness's hold on it
	c.Restart(t, victim)
	c.WaitForISR(t, topic, 3, 30*time.Second)
	if isr := c.Image().Topics[topic].Partitions[0].ISR; !slices.Contains(isr, victim) {
		t.Fatalf("node %d is not back in the ISR of %s[0]: %v", victim, topic, isr)
	}
}
