package brokertest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestClusterReplicates starts three voters and a broker-only node,
// creates an RF=3 topic through a node that is not the controller, and
// checks that acks=all writes reach every replica and survive the
// leader's crash.
func TestClusterReplicates(t *testing.T) {
	c := brokertest.StartCluster(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	ctrl := c.Controller()
	if ctrl < 1 || ctrl > 3 {
		t.Fatalf("controller is node %d, want one of the voters 1..3", ctrl)
	}
	other := int32(1 + ctrl%3)
	adm := kadm.NewClient(c.Node(other).Client(t, kgo.MetadataMinAge(10*time.Millisecond)))
	// Every node is registered and unfenced once StartCluster returns;
	// node `other` may apply the last of that a moment later.
	c.WaitFor(t, 5*time.Second, "node "+fmt.Sprint(other)+" to list 4 brokers", func() bool {
		brokers, err := adm.ListBrokers(ctx)
		return err == nil && len(brokers) == 4
	})
	resp, err := adm.CreateTopic(ctx, 3, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, "replicated")
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic through node %d: %v", other, err)
	}
	c.WaitForISR(t, "replicated", 3, 20*time.Second)

	cl := c.Client(t, kgo.DefaultProduceTopic("replicated"), kgo.RequiredAcks(kgo.AllISRAcks()))
	produce := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			r := &kgo.Record{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i), Partition: int32(i % 3)}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
		}
	}
	produce(0, 300)

	leader := c.Leader("replicated", 0)
	c.Kill(t, leader)
	c.WaitFor(t, 20*time.Second, "a new leader of replicated-0", func() bool {
		l := c.Leader("replicated", 0)
		return l >= 0 && l != leader
	})
	produce(300, 600)
	c.Restart(t, leader)
	c.WaitForISR(t, "replicated", 3, 30*time.Second)

	consumer := c.Client(t, kgo.ConsumeTopics("replicated"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]int{}
	for len(seen) < 600 {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d distinct records of 600: %v", len(seen), ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
	}
	for v, n := range seen {
		if n != 1 {
			t.Errorf("%s read %d times", v, n)
		}
	}
}
