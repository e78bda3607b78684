package replication

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
)

// Issue 4: a new, empty follower of a leader whose log start offset is
// inside a batch (DeleteRecords there) gets that whole batch on its first
// fetch; it restarts its log at the batch's first offset and appends it,
// as Kafka's appendRecordsToFollowerOrFutureReplica does, instead of
// failing with UnexpectedAppendOffsetError.
func TestEmptyFollowerOfMidBatchLogStart(t *testing.T) {
	c := newWireCluster(t, 2, 10_000)
	c.createTopic("d", []int32{1}, []int32{1}, 1)
	for i, prefix := range []string{"a", "b", "c"} {
		if sp := c.produce(1, 1, "d", prefix, 5); sp.ErrorCode != 0 || sp.BaseOffset != int64(5*i) {
			t.Fatalf("produce %s: %+v", prefix, sp)
		}
	}
	resp := c.nodes[1].rm.DeleteRecords(context.Background(), deleteRecordsReq("d", map[int32]int64{0: 7}, 0))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != 0 || sp.LowWatermark != 7 {
		t.Fatalf("delete records: %+v", sp)
	}
	c.change("d", func(p *raftmeta.Partition) { p.Replicas = []int32{1, 2} })
	leader := c.partition(1, "d").Log()
	eventually(t, "the new follower to catch up and join the ISR", func() bool {
		p, ok := c.nodes[2].rm.Partition(storage.TopicPartition{Topic: "d"})
		return ok && p.Log().LogEndOffset() == 15 && slices.Equal(c.isr("d"), []int32{1, 2})
	})
	follower := c.partition(2, "d").Log()
	eventually(t, "the follower's log start to follow the leader's", func() bool { return follower.LogStartOffset() == 7 })
	if !bytes.Equal(rawLog(t, leader), rawLog(t, follower)) {
		t.Fatal("the follower's log differs from the leader's")
	}
	if got := readAll(t, follower); len(got) != 10 || got[0] != "5:b-0" || got[9] != "14:c-4" {
		t.Fatalf("the follower's records: %v", got)
	}
	if fs := c.nodes[2].rm.FetcherManager().Failed().Partitions(); len(fs) != 0 {
		t.Fatalf("failed partitions on the follower: %v", fs)
	}
}
