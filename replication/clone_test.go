package replication

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
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
	p := waitHosted(t, h, storage.TopicPartition{Topic: "drill"})
	if leo := p.Log().LogEndOffset(); leo != point {
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
	if err := p.Log().ForEachBatch(point, p.Log().LogEndOffset(), func(b record.Batch) error {
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

// TestCloneMaterializesOffTheApplyPath: building a drill clone's replica
// (held here half way through copying the source's segment) does not hold
// up the metadata: ApplyDelta returns, another topic created meanwhile is
// served at once, and the clone's partition answers NOT_LEADER_OR_FOLLOWER
// (retriable) until its log is built; then it is led, settled and takes
// writes after the reset at the clone point.
func TestCloneMaterializesOffTheApplyPath(t *testing.T) {
	pause := vfs.PauseOn(vfs.OpCreate, ".clone-delete"+string(filepath.Separator)+"00000000000000000000.log")
	h := newHarnessFS(t, vfs.WithErrors(vfs.OS{}, pause.Injector()), t.TempDir())
	defer pause.Release()
	src := h.createTopic("orders", topicSpec{})
	h.mustProduce("orders", 0, "src", 2, 0)
	const point = 2
	spec := raftmeta.CloneSpec{Mirror: "m1", Topic: "orders", TopicID: src.ID, UpTo: []int64{point}}
	applied := make(chan struct{})
	go func() {
		defer close(applied)
		h.createTopic("drill", topicSpec{configs: map[string]string{raftmeta.MirrorCloneConfig: spec.String()}})
	}()
	<-pause.Paused
	select {
	case <-applied:
	case <-time.After(10 * time.Second):
		pause.Release()
		t.Fatal("ApplyDelta waited for the clone's log to be built")
	}
	// Another topic goes on. (The source partition itself waits: its
	// lock is held while its segment is copied.)
	h.createTopic("other", topicSpec{})
	h.mustProduce("other", 0, "new", 1, 0)
	if sp := h.produce(1, "drill", 0, h.batch("early", 1)); sp.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("produce to the clone being built: error %d, want NOT_LEADER_OR_FOLLOWER", sp.ErrorCode)
	}

	pause.Release()
	deadline := time.Now().Add(10 * time.Second)
	for {
		sp := h.produce(1, "drill", 0, h.batch("drill", 1))
		if sp.ErrorCode == 0 {
			if sp.BaseOffset != point+1 {
				t.Fatalf("first record produced to the clone at %d, want %d (after the reset at the clone point)", sp.BaseOffset, point+1)
			}
			return
		}
		if (sp.ErrorCode != kerr.NotLeaderForPartition.Code && sp.ErrorCode != kerr.LeaderNotAvailable.Code) || time.Now().After(deadline) {
			t.Fatalf("produce to the built clone: error %d", sp.ErrorCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitHosted waits until tp is a local partition: a clone's is once its log
// is built, off the apply path.
func waitHosted(t *testing.T, h *harness, tp storage.TopicPartition) *Partition {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if p, ok := h.rm.Partition(tp); ok {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is not hosted", tp)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
