package broker_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// ackLedger is where each acknowledged record (by value) was acknowledged:
// partition and offset. The disk-failure tests audit a topic against it.
type ackLedger map[string][2]int64

// produce sends n records round-robin over partitions with prod (acks=all,
// a manual partitioner) and records where each was acknowledged; any
// failed record fails the test.
func (l ackLedger) produce(ctx context.Context, t testing.TB, prod *kgo.Client, prefix string, n int, partitions int32) {
	t.Helper()
	var rs []*kgo.Record
	for i := range n {
		rs = append(rs, &kgo.Record{Partition: int32(i) % partitions, Value: fmt.Appendf(nil, "%s-%d", prefix, i)})
	}
	results := prod.ProduceSync(ctx, rs...)
	if err := results.FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", prefix, err)
	}
	for _, r := range results {
		l[string(r.Record.Value)] = [2]int64{int64(r.Record.Partition), r.Record.Offset}
	}
}

// audit reads topic from the start and fails the test unless every
// acknowledged record is there once, where it was acknowledged, and
// nothing else is.
func (l ackLedger) audit(ctx context.Context, t testing.TB, c *brokertest.Cluster, topic string) {
	t.Helper()
	cl := c.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	read := pollN(ctx, t, cl, len(l))
	moved := 0
	for _, r := range read {
		if at, ok := l[string(r.Value)]; ok && at != [2]int64{int64(r.Partition), r.Offset} {
			moved++
		}
	}
	lost, dups := lostAndDuplicates(slices.Collect(maps.Keys(l)), values(read))
	t.Logf("acknowledged %d: lost %d, duplicates %d, at another offset %d", len(l), lost, dups, moved)
	if lost != 0 || dups != 0 || moved != 0 || len(read) != len(l) {
		t.Fatalf("acknowledged %d records, read %d: lost %d, duplicates %d, at another offset %d", len(l), len(read), lost, dups, moved)
	}
}
