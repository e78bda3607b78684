package broker_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/coordinator"
)

// TestOffsetsTopicKeepsItsReplicationFactorWithABrokerDown: the first
// FindCoordinator of a three-node cluster with one node stopped creates
// __consumer_offsets with offsets.topic.replication.factor=3 replicas, the
// stopped node's out of the ISR until it is back, as Kafka's controller
// places them. It used to get two replicas for good (a rolling restart
// found that).
func TestOffsetsTopicKeepsItsReplicationFactorWithABrokerDown(t *testing.T) {
	c := brokertest.StartCluster(t, 3, brokertest.WithConfig("offsets.topic.replication.factor=3"))
	ctx := testCtx(t, 60*time.Second)
	cl := rawClient(ctx, t, c)
	c.Stop(t, 3)
	c.WaitFor(t, 10*time.Second, "broker 3 to be fenced", func() bool {
		b, ok := c.Image().Brokers[3]
		return ok && b.Fenced
	})
	if _, ok := c.Image().Topics[coordinator.OffsetsTopic]; ok {
		t.Fatalf("%s exists before any group asked for it", coordinator.OffsetsTopic)
	}

	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey = "offsets-topic-group"            // v0-3
	req.CoordinatorKeys = []string{"offsets-topic-group"} // v4+
	kresp, err := cl.Broker(1).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kresp.(*kmsg.FindCoordinatorResponse)
	code := resp.ErrorCode
	if len(resp.Coordinators) == 1 {
		code = resp.Coordinators[0].ErrorCode
	}
	if code != 0 {
		t.Fatalf("FindCoordinator with 2 of 3 brokers up: %v", kerr.ErrorForCode(code))
	}
	topic := c.Image().Topics[coordinator.OffsetsTopic]
	if topic == nil {
		t.Fatalf("FindCoordinator answered, yet there is no %s", coordinator.OffsetsTopic)
	}
	for _, p := range topic.Partitions {
		if len(p.Replicas) != 3 || len(p.ISR) != 2 || p.Leader == 3 {
			t.Fatalf("%s-%d: replicas %v, ISR %v, leader %d; want 3 replicas, broker 3 out of the ISR",
				coordinator.OffsetsTopic, p.Index, p.Replicas, p.ISR, p.Leader)
		}
	}

	c.Restart(t, 3)
	c.WaitForISR(t, coordinator.OffsetsTopic, 3, 30*time.Second)
}
