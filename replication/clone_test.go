package replication

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage/record"
)

// TestCloneRefusesWritesUntilSettled: a drill clone's partition refuses
// client writes (LEADER_NOT_AVAILABLE, retriable) while its leader has not
// yet appended the MIRROR_PID_RESET at the clone point and seen it acked —
// here held back by an ISR member that never fetches — and takes them
// once it has (a new leader epoch with the ISR down to the leader), right
// after the reset.
func TestCloneRefusesWritesUntilSettled(t *testing.T) {
	h := newHarness(t)
	src := h.createTopic("orders", topicSpec{})
	h.mustProduce("orders", 0, "src", 2, 0)
	h.mustProduce("orders", 0, "src", 2, 2)
	const point = 4
	spec := raftmeta.CloneSpec{Mirror: "m1", Topic: "orders", TopicID: src.ID, UpTo: []int64{point}}
	h.createTopic("drill", topicSpec{replicas: []int32{localNode, 2}, isr: []int32{localNode, 2},
		configs: map[string]string{raftmeta.MirrorCloneConfig: spec.String()}})
	p := h.partition("drill", 0)
	if leo := p.log.LogEndOffset(); leo != point {
		t.Fatalf("the clone's log ends at %d, want the clone point %d", leo, point)
	}

	// Node 2 never fetches: the reset cannot be acked, the clone is not
	// writable.
	for i := range 3 {
		if sp := h.produce(1, "drill", 0, h.batch(fmt.Sprintf("early-%d", i), 1)); sp.ErrorCode != kerr.LeaderNotAvailable.Code {
			t.Fatalf("produce %d to the unsettled clone: error %d base %d, want LEADER_NOT_AVAILABLE (%d)", i, sp.ErrorCode, sp.BaseOffset, kerr.LeaderNotAvailable.Code)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A new leader epoch whose ISR is the leader alone: the reset is acked
	// at once and the clone takes writes after it.
	h.changePartition("drill", 0, func(pp *raftmeta.Partition) { pp.LeaderEpoch, pp.ISR = 1, []int32{localNode} })
	deadline := time.Now().Add(10 * time.Second)
	for {
		sp := h.produce(1, "drill", 0, h.batch("drill", 1))
		if sp.ErrorCode == 0 {
			if sp.BaseOffset <= point {
				t.Fatalf("first record produced to the clone at %d, want after the reset at the clone point %d", sp.BaseOffset, point)
			}
			break
		}
		if sp.ErrorCode != kerr.LeaderNotAvailable.Code || time.Now().After(deadline) {
			t.Fatalf("produce to the clone in leader epoch 1: error %d", sp.ErrorCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
	d := record.NewDecompressor()
	var resets int
	if err := p.log.ForEachBatch(point, p.log.LogEndOffset(), func(b record.Batch) error {
		if b.BaseOffset() == point && d.IsMirrorPidReset(b) {
			resets++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if resets != 1 {
		t.Fatalf("no MIRROR_PID_RESET at the clone point %d", point)
	}
}
