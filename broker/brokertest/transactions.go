package brokertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/strait-io/strait/storage"
)

// WaitTransactionsDecided waits until every running node's replica of
// every partition of topic holds no open transaction and has its last
// stable offset at its high watermark and log end offset: every
// transaction written to it is committed or aborted, and replicated
// (Kafka's "no hanging transaction"). It fails the test after timeout,
// naming a replica that still holds one.
func (c *Cluster) WaitTransactionsDecided(t testing.TB, topic string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		undecided := c.undecided(topic)
		if undecided == "" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("brokertest: a transaction on %s stays undecided after %v: %s", topic, timeout, undecided)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// undecided describes the first replica of topic with an open transaction
// or a last stable offset behind its log end, "" when there is none.
func (c *Cluster) undecided(topic string) string {
	img := c.Image()
	if img == nil {
		return "no node is running"
	}
	tp, ok := img.Topics[topic]
	if !ok {
		return "no such topic"
	}
	for _, b := range c.nodes {
		n := b.Node()
		if n == nil {
			continue
		}
		for p := range int32(len(tp.Partitions)) {
			l, ok := n.LogManager().Log(storage.TopicPartition{Topic: topic, Partition: p})
			if !ok {
				return fmt.Sprintf("node %d has no replica of %s-%d", b.opts.nodeID, topic, p)
			}
			lso, hw, leo := l.LastStableOffset(), l.HighWatermark(), l.LogEndOffset()
			if open := l.OpenTransactions(); len(open) > 0 || lso != hw || hw != leo {
				return fmt.Sprintf("node %d %s-%d: last stable offset %d, high watermark %d, log end %d, open transactions %+v",
					b.opts.nodeID, topic, p, lso, hw, leo, open)
			}
		}
	}
	return ""
}
