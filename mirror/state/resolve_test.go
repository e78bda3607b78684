package state

import (
	"fmt"
	"testing"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// setMirrorName gives topic a mirror.name in the current image (a copy
// with its own Configs: images are immutable).
func (w *world) setMirrorName(topic, value string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.img.Load()
	img := *old
	img.Configs = map[raftmeta.ConfigResource]map[string]string{}
	for k, v := range old.Configs {
		img.Configs[k] = v
	}
	img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceTopic, Name: topic}] = map[string]string{raftmeta.MirrorNameConfig: value}
	w.img.Store(&img)
}

// TestReadResolvesMirrorName: ReadMirrorStates with MirrorName "" reads
// each topic's record under the mirror its mirror.name names (the LME
// query of a failback, which does not know the source's mirror name).
func TestReadResolvesMirrorName(t *testing.T) {
	w := newWorld(t)
	w.electAll(1)
	w.mustWrite(key(ordersID, 0), rec(partition.StatePreparing, 5), 0)
	w.mustWrite(Key{Mirror: "m2", TopicID: paymentsID, Partition: 1}, rec(partition.StatePreparing, 3), 0)
	w.setMirrorName("orders", "m1.removed")
	w.setMirrorName("payments", "m2.paused")

	// Stopped or paused: the name before the suffix.
	if got := w.wireRead("", "orders", 0); got.ErrorCode != 0 || got.State != int8(partition.StatePreparing) || got.StateEpoch != 1 || got.LeaderEpoch != 5 {
		t.Errorf("orders-0 via mirror.name: %+v", got)
	}
	if got := w.wireRead("", "payments", 1); got.ErrorCode != 0 || got.State != int8(partition.StatePreparing) || got.LeaderEpoch != 3 {
		t.Errorf("payments-1 via mirror.name: %+v", got)
	}
	// Resolved, but no record for that partition: UNKNOWN, no error.
	if got := w.wireRead("", "orders", 2); got.ErrorCode != 0 || got.State != -1 || got.StateEpoch != -1 {
		t.Errorf("orders-2: %+v", got)
	}
	// An explicit name is not replaced by the topic's.
	if got := w.wireRead("m2", "orders", 0); got.ErrorCode != 0 || got.State != -1 {
		t.Errorf("orders-0 in m2: %+v", got)
	}

	// A topic in no mirror: no record, no error, even where this broker
	// coordinates nothing (nothing to route).
	w.setMirrorName("payments", "")
	w.c.OnResignation(key(paymentsID, 0).PartitionFor(testMirrorStatePartitions))
	want := mirrormsg.NewReadMirrorStatesResponsePartitionResult()
	want.State = -1
	if got := w.wireRead("", "payments", 0); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("payments-0 in no mirror: %+v, want %+v", got, want)
	}
	// Unknown topics still answer UNKNOWN_TOPIC_OR_PARTITION.
	if got := w.wireRead("", "nope", 0); got.ErrorCode != codeUnknownTopicOrPartition {
		t.Errorf("unknown topic: %+v", got)
	}

	// Resolved to a record whose partition this broker does not lead:
	// NOT_COORDINATOR, for the sender to try the next broker.
	w.c.OnResignation(key(ordersID, 0).PartitionFor(testMirrorStatePartitions))
	if got := w.wireRead("", "orders", 0); got.ErrorCode != codeNotCoordinator {
		t.Errorf("orders-0 after resigning: %+v", got)
	}
}
