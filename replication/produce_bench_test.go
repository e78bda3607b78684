package replication

import (
	"context"
	"testing"

	"github.com/strait-io/strait/storage/record"
)

// BenchmarkProduceAcks1 is one non-transactional produce request of one
// batch (16 records) to a single-replica partition with acks=1: the
// replica manager's share of the p1 bench row (issue 29), allocations
// included. The batch is copied afresh for each request (the append
// writes its offsets into it); it has no producer id, so nothing
// deduplicates it.
func BenchmarkProduceAcks1(b *testing.B) {
	h := newHarness(b)
	h.createTopic("t", topicSpec{})
	batch := h.batchSpec(record.BatchSpec{}, "v", 16, 1000)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(batch)))
	buf := make([]byte, len(batch))
	for b.Loop() {
		copy(buf, batch)
		resp := h.rm.Produce(ctx, produceReq(11, 1, "t", 0, buf))
		if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != 0 {
			msg := ""
			if sp.ErrorMessage != nil {
				msg = *sp.ErrorMessage
			}
			b.Fatalf("produce: error %d %s", sp.ErrorCode, msg)
		}
	}
}
