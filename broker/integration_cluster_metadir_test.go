package broker_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	pebblevfs "github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestMetadataDirFailureHaltsTheNode: the disk under a node's metadata
// log fails, first on a follower of the metadata log, then on the active
// controller. As Kafka halts a node whose metadata log directory failed,
// each halts at the first metadata write it cannot store; the others go
// on: the cluster creates topics, moves the halted node's partitions and
// acknowledges writes, losing none, and the node restarted on a working
// disk catches up on the metadata it missed. Before, pebble's failed
// commit panicked the whole process (this test binary with it).
func TestMetadataDirFailureHaltsTheNode(t *testing.T) {
	var mu sync.Mutex
	disks := map[int32]*errorfs.Toggle{} // each node's newest metadata disk
	metaFS := func(id int32) pebblevfs.FS {
		mu.Lock()
		defer mu.Unlock()
		disks[id] = &errorfs.Toggle{Injector: errorfs.ErrInjected}
		return errorfs.Wrap(unlockedFS{pebblevfs.Default}, disks[id])
	}
	failDisk := func(id int32) {
		mu.Lock()
		defer mu.Unlock()
		disks[id].On()
	}
	c := brokertest.StartCluster(t, 3,
		brokertest.WithMetadataFS(metaFS),
		brokertest.WithConfig("auto.leader.rebalance.enable=false"))
	ctx := testCtx(t, 90*time.Second)
	adm := c.Admin(t)
	const topic = "metadata-disk-fails"
	createReplicatedTopic(t, adm, topic, 3, 3, "min.insync.replicas", "2")
	c.WaitForISR(t, topic, 3, 15*time.Second)
	prod := c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	acked := ackLedger{}
	acked.produce(ctx, t, prod, "before", 300, 3)

	// failAndCreate fails victim's metadata disk, creates newTopic (a
	// metadata write every voter stores), and waits for victim to halt.
	failAndCreate := func(victim int32, newTopic string) {
		t.Helper()
		node := c.Node(victim).Node()
		failDisk(victim)
		start := time.Now()
		createRetrying(ctx, t, adm, newTopic)
		select {
		case <-node.Halted():
		case <-time.After(15 * time.Second):
			t.Fatalf("node %d did not halt after its metadata disk failed", victim)
		}
		err := node.HaltErr()
		if err == nil || !strings.Contains(err.Error(), "metadata log directory failed") || !strings.Contains(err.Error(), errorfs.ErrInjected.Error()) {
			t.Fatalf("node %d halted with %v, want its metadata store's injected error", victim, err)
		}
		t.Logf("node %d halted: %v; %s created in %v", victim, err, newTopic, time.Since(start).Round(time.Millisecond))
		c.Kill(t, victim) // already halted; releases the harness's hold on it
	}
	// restart starts victim on a new, working metadata disk and waits
	// until it is back in every ISR and knows the topics it missed.
	restart := func(victim int32, missed ...string) {
		t.Helper()
		c.Restart(t, victim)
		c.WaitForISR(t, topic, 3, 30*time.Second)
		c.WaitFor(t, 15*time.Second, "the restarted node to learn the topics created while it was down", func() bool {
			img := c.Node(victim).Node().Image()
			for _, m := range missed {
				if _, ok := img.Topics[m]; !ok {
					return false
				}
			}
			return true
		})
	}

	// A follower of the metadata log.
	ctrl := c.Controller()
	follower := ctrl%3 + 1
	failAndCreate(follower, "created-while-follower-failed")
	c.WaitFor(t, 15*time.Second, "the halted node's partitions to move", func() bool {
		for p := range int32(3) {
			if l := c.Leader(topic, p); l == follower || l < 0 {
				return false
			}
		}
		return true
	})
	acked.produce(ctx, t, prod, "follower-down", 300, 3)
	restart(follower, "created-while-follower-failed")

	// The active controller: another voter takes over.
	ctrl = c.Controller()
	failAndCreate(ctrl, "created-while-controller-failed")
	if now := c.Controller(); now == ctrl || now < 0 {
		t.Fatalf("active controller %d after controller %d halted", now, ctrl)
	}
	acked.produce(ctx, t, prod, "controller-down", 300, 3)
	restart(ctrl, "created-while-follower-failed", "created-while-controller-failed")

	acked.audit(ctx, t, c, topic)
}

// createRetrying creates a one-partition topic of three replicas, retrying
// while the controller is failing over; TOPIC_ALREADY_EXISTS after a retry
// means an earlier try went through.
func createRetrying(ctx context.Context, t testing.TB, adm *kadm.Client, topic string) {
	t.Helper()
	for try := 0; ; try++ {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := adm.CreateTopic(cctx, 1, 3, nil, topic)
		cancel()
		if err == nil {
			err = resp.Err
		}
		if err == nil || (try > 0 && errors.Is(err, kerr.TopicAlreadyExists)) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("create topic %s: %v (last try: %v)", topic, ctx.Err(), err)
		}
		t.Logf("create topic %s, try %d: %v", topic, try+1, err)
		time.Sleep(200 * time.Millisecond)
	}
}

// unlockedFS leaves out pebble's lock on the metadata directory. A halted
// node's pebble instance stays open in this process, its goroutines parked
// as in a halted process, and keeps the lock (pebble also tracks it per
// process) that the node restarted in the same process needs; a real halt
// releases it with the process.
type unlockedFS struct{ pebblevfs.FS }

func (unlockedFS) Lock(string) (io.Closer, error) { return nopCloser{}, nil }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
