package sim

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/replication"
	"github.com/strait-io/strait/storage/record"
)

// produceTimeoutSteps is an acks=all request's timeout.
const produceTimeoutSteps = 30

// pendingProduce is an appended acks=all batch waiting for the ISR (Kafka's
// DelayedProduce).
type pendingProduce struct {
	n           *node
	incarnation int
	p           *replication.Partition
	base        int64
	required    int64
	values      []string
	deadline    int
}

// produce sends an acks=all batch of 1-3 new records to a node, as a
// client with possibly stale metadata would.
func (c *Cluster) produce(n *node) {
	count := 1 + c.rng.IntN(3)
	recs := make([]record.Record, count)
	values := make([]string, count)
	for i := range recs {
		c.nextValue++
		values[i] = fmt.Sprintf("v%d", c.nextValue)
		recs[i] = record.Record{KeyLen: -1, Value: []byte(values[i]), ValueLen: int32(len(values[i])), TimestampDelta: int64(i)}
	}
	b, err := record.Build(record.BatchSpec{ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch,
		BaseSequence: record.NoSequence, PartitionLeaderEpoch: -1, BaseTimestamp: c.clock.Now().UnixMilli()}, recs, nil)
	if err != nil {
		panic(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 11, -1, 0
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topicName
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = b
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	sp := n.rm.Produce(context.Background(), req).Topics[0].Partitions[0]
	c.stats.Produced++
	switch sp.ErrorCode {
	case 0:
		// Acknowledged at once (the ISR is the leader alone).
		c.ack(values, sp.BaseOffset)
		c.tracef("node %d: produced %v at %d, acknowledged", n.id, values, sp.BaseOffset)
	case kerr.RequestTimedOut.Code:
		// Appended; the wait for the ISR goes on below.
		p, _ := n.partition()
		c.pending = append(c.pending, &pendingProduce{n: n, incarnation: n.incarnation, p: p, base: sp.BaseOffset,
			required: sp.BaseOffset + int64(count), values: values, deadline: c.step + produceTimeoutSteps})
		c.tracef("node %d: produced %v at %d, waiting", n.id, values, sp.BaseOffset)
	default:
		c.tracef("node %d: produce refused: %s", n.id, kerr.ErrorForCode(sp.ErrorCode))
	}
}

// checkPending completes acks=all waits whose high watermark arrived and
// fails those whose leader left, crashed or timed out.
func (c *Cluster) checkPending() {
	kept := c.pending[:0]
	for _, pp := range c.pending {
		cur, ok := pp.n.partition()
		if !ok || pp.n.incarnation != pp.incarnation || cur != pp.p {
			c.tracef("produce at %d failed: the leader went away", pp.base)
			continue
		}
		done, err := pp.p.CheckEnoughReplicasReachOffset(pp.required)
		switch {
		case err != nil:
			c.tracef("produce at %d failed: %v", pp.base, err)
		case done:
			c.ack(pp.values, pp.base)
			c.tracef("produce at %d acknowledged by node %d", pp.base, pp.n.id)
		case c.step >= pp.deadline:
			c.tracef("produce at %d timed out", pp.base)
		default:
			kept = append(kept, pp)
		}
	}
	c.pending = kept
}

func (c *Cluster) ack(values []string, base int64) {
	for i, v := range values {
		c.acked = append(c.acked, ackedRecord{value: v, offset: base + int64(i)})
	}
}

type ackedRecord struct {
	value  string
	offset int64
}
