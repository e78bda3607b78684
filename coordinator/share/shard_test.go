package share

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
)

var (
	keyA0 = Key{GroupID: "g", TopicID: topicA, Partition: 0}
	keyA1 = Key{GroupID: "g", TopicID: topicA, Partition: 1}
	keyB0 = Key{GroupID: "h", TopicID: topicB, Partition: 0}
)

func wantCode(t *testing.T, what string, got int16, want *kerr.Error) {
	t.Helper()
	var wantCode int16
	if want != nil {
		wantCode = want.Code
	}
	if got != wantCode {
		t.Fatalf("%s: error code %d (%v), want %v", what, got, kerr.ErrorForCode(got), want)
	}
}

// A share-partition's life: initialized, read by its leader, written,
// read back merged; the summary reports its start offset and epochs.
func TestInitializeWriteRead(t *testing.T) {
	h := newHarness(t, nil)
	wantCode(t, "initialize", h.initialize(keyA0, 0, 100), nil)
	r := h.read(keyA0, 1)
	wantCode(t, "read", r.ErrorCode, nil)
	if r.StateEpoch != 0 || r.StartOffset != 100 || len(r.StateBatches) != 0 {
		t.Fatalf("read after initialize: %+v", r)
	}
	wantCode(t, "write", h.write(keyA0, 0, 1, 100, sb(100, 109, DeliveryStateAcknowledged, 1), sb(110, 119, DeliveryStateAvailable, 1)), nil)
	wantCode(t, "write", h.write(keyA0, 0, 1, 105, sb(110, 112, DeliveryStateArchived, 2)), nil)
	r = h.read(keyA0, 1)
	wantCode(t, "read", r.ErrorCode, nil)
	want := []StateBatch{sb(105, 109, 2, 1), sb(110, 112, 4, 2), sb(113, 119, 0, 1)}
	if r.StartOffset != 105 || !slices.Equal(ReadBatches(r), want) {
		t.Fatalf("read: start %d batches %v, want 105 %v", r.StartOffset, ReadBatches(r), want)
	}
	s := h.summary(keyA0)
	if s.ErrorCode != 0 || s.StartOffset != 105 || s.StateEpoch != 0 || s.LeaderEpoch != 1 || s.DeliveryCompleteCount != 1 {
		t.Fatalf("summary %+v", s)
	}
	if s := h.summary(keyA1); s.ErrorCode != 0 || s.StartOffset != -1 || s.StateEpoch != 0 || s.LeaderEpoch != 0 || s.DeliveryCompleteCount != -1 {
		t.Fatalf("summary of a share-partition without state %+v", s)
	}
}

// Writes are update records until share.coordinator.snapshot.update.records.per.snapshot
// of them followed the last snapshot; the next one is a snapshot. An
// initialize is a snapshot; a read at a new leader epoch records it.
func TestSnapshotEveryNUpdates(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.SnapshotUpdateRecordsPerSnapshot = 3 })
	wantCode(t, "initialize", h.initialize(keyA0, 0, 0), nil)
	wantCode(t, "read", h.read(keyA0, 1).ErrorCode, nil)
	wantCode(t, "read at the same epoch", h.read(keyA0, 1).ErrorCode, nil) // writes nothing
	for i := range int64(7) {
		wantCode(t, "write", h.write(keyA0, 0, 1, -1, sb(i, i, DeliveryStateAcknowledged, 1)), nil)
	}
	p := PartitionFor(keyA0, testPartitions)
	want := []string{"snapshot", "update", "update", "update", "snapshot", "update", "update", "update", "snapshot"}
	got := h.log.records(t, p)
	if len(got) != len(want) {
		t.Fatalf("records %q, want kinds %q", got, want)
	}
	for i, w := range want {
		if got[i] != w+" "+keyA0.String() {
			t.Fatalf("record %d is %q, want a %s of %s (all: %q)", i, got[i], w, keyA0, got)
		}
	}
	r := h.read(keyA0, 1)
	if !slices.Equal(ReadBatches(r), []StateBatch{sb(0, 6, DeliveryStateAcknowledged, 1)}) {
		t.Fatalf("batches %v", ReadBatches(r))
	}

	// 0: every write is a snapshot.
	h = newHarness(t, func(c *Config) { c.SnapshotUpdateRecordsPerSnapshot = 0 })
	wantCode(t, "initialize", h.initialize(keyA0, 0, 0), nil)
	wantCode(t, "write", h.write(keyA0, 0, -1, -1, sb(0, 0, DeliveryStateAcknowledged, 1)), nil)
	if got := h.log.records(t, p); !slices.Equal(got, []string{"snapshot " + keyA0.String(), "snapshot " + keyA0.String()}) {
		t.Fatalf("with 0 updates per snapshot: %q", got)
	}
}

// A read at an older leader epoch than the share-partition's leader
// recorded, and a write at one, are fenced; so are writes and initializes
// at an older state epoch. -1 checks nothing. The fences survive a reload.
func TestFencing(t *testing.T) {
	h := newHarness(t, nil)
	wantCode(t, "initialize", h.initialize(keyA0, 2, 0), nil)
	wantCode(t, "read at 5", h.read(keyA0, 5).ErrorCode, nil)
	for range 2 {
		wantCode(t, "read at 4", h.read(keyA0, 4).ErrorCode, kerr.FencedLeaderEpoch)
		wantCode(t, "write at 4", h.write(keyA0, 2, 4, 0), kerr.FencedLeaderEpoch)
		wantCode(t, "write at state epoch 1", h.write(keyA0, 1, 5, 0), kerr.FencedStateEpoch)
		wantCode(t, "initialize at state epoch 1", h.initialize(keyA0, 1, 0), kerr.FencedStateEpoch)
		wantCode(t, "write at 5", h.write(keyA0, 2, 5, 0), nil)
		wantCode(t, "write at -1", h.write(keyA0, -1, -1, 0), nil)
		wantCode(t, "read at -1", h.read(keyA0, -1).ErrorCode, nil)
		h.restart()
	}
	// A new leader fences the old one.
	wantCode(t, "read at 6", h.read(keyA0, 6).ErrorCode, nil)
	wantCode(t, "write at 5", h.write(keyA0, 2, 5, 0), kerr.FencedLeaderEpoch)
	// A newer state epoch resets the state; the leader fence stays.
	wantCode(t, "write", h.write(keyA0, 2, 6, 10, sb(10, 20, DeliveryStateAcknowledged, 1)), nil)
	wantCode(t, "initialize at state epoch 3", h.initialize(keyA0, 3, 50), nil)
	r := h.read(keyA0, 6)
	if r.ErrorCode != 0 || r.StateEpoch != 3 || r.StartOffset != 50 || len(r.StateBatches) != 0 {
		t.Fatalf("read after a re-initialize: %+v", r)
	}
	wantCode(t, "write at state epoch 2", h.write(keyA0, 2, 6, 0), kerr.FencedStateEpoch)
	wantCode(t, "read at 5", h.read(keyA0, 5).ErrorCode, kerr.FencedLeaderEpoch)
}

// Requests about share-partitions the coordinator cannot serve get Kafka's
// errors; requests naming nothing get an empty answer.
func TestInvalidRequests(t *testing.T) {
	h := newHarness(t, nil)
	r := h.read(keyA0, 0)
	if r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil || *r.ErrorMessage != *msgReadUninitialized {
		t.Fatalf("read of an uninitialized share-partition: %+v", r)
	}
	wantCode(t, "write of an uninitialized share-partition", h.write(keyA0, 0, 0, 0), kerr.InvalidRequest)
	unknown := Key{GroupID: "g", TopicID: raftmeta.Uuid{0xc}, Partition: 0}
	beyond := Key{GroupID: "g", TopicID: topicA, Partition: 4}
	negative := Key{GroupID: "g", TopicID: topicA, Partition: -1}
	for _, k := range []Key{unknown, beyond} {
		wantCode(t, "initialize "+k.String(), h.initialize(k, 0, 0), kerr.UnknownTopicOrPartition)
		wantCode(t, "summary "+k.String(), h.summary(k).ErrorCode, kerr.UnknownTopicOrPartition)
		wantCode(t, "delete "+k.String(), h.remove(k), kerr.UnknownTopicOrPartition)
	}
	wantCode(t, "initialize of a negative partition", h.initialize(negative, 0, 0), kerr.InvalidRequest)
	wantCode(t, "delete of an uninitialized share-partition", h.remove(keyA0), nil)
	if got := h.log.records(t, PartitionFor(keyA0, testPartitions)); len(got) != 0 {
		t.Fatalf("failed requests wrote %q", got)
	}

	empty := kmsg.NewPtrWriteShareGroupStateRequest()
	empty.GroupID = "g"
	empty.Topics = append(empty.Topics, kmsg.WriteShareGroupStateRequestTopic{TopicID: topicA})
	if resp := h.c.WriteShareGroupState(h.ctx(), empty); len(resp.Topics) != 0 {
		t.Fatalf("a write of a topic without partitions answered %+v", resp.Topics)
	}
	noGroup := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	noGroup.Topics = []kmsg.ReadShareGroupStateSummaryRequestTopic{{TopicID: topicA, Partitions: []kmsg.ReadShareGroupStateSummaryRequestTopicPartition{{}}}}
	if resp := h.c.ReadShareGroupStateSummary(h.ctx(), noGroup); len(resp.Topics) != 0 {
		t.Fatalf("a summary without a group answered %+v", resp.Topics)
	}

	h.c.Close()
	wantCode(t, "read after Close", h.read(keyA0, 0).ErrorCode, kerr.CoordinatorNotAvailable)
}

// A partition this broker does not lead answers NOT_COORDINATOR, one it
// is loading COORDINATOR_LOAD_IN_PROGRESS, and one request may hold
// share-partitions of both and of a served partition.
func TestNotCoordinatorAndLoading(t *testing.T) {
	h := newHarness(t, nil)
	wantCode(t, "initialize", h.initialize(keyA0, 0, 0), nil)
	pA := PartitionFor(keyA0, testPartitions)
	h.c.OnResignation(pA)
	wantCode(t, "read after resigning", h.read(keyA0, 0).ErrorCode, kerr.NotCoordinator)

	gate := make(chan struct{})
	h.log.mu.Lock()
	h.log.readGate = gate
	h.log.mu.Unlock()
	h.c.OnElection(pA, h.epoch+1)
	wantCode(t, "read while loading", h.read(keyA0, 0).ErrorCode, kerr.CoordinatorLoadInProgress)
	h.log.mu.Lock()
	h.log.readGate = nil
	h.log.mu.Unlock()
	close(gate)
	h.waitLoaded()
	wantCode(t, "read once loaded", h.read(keyA0, 0).ErrorCode, nil)
}

// A failed append answers COORDINATOR_NOT_AVAILABLE (NOT_ENOUGH_REPLICAS
// mapped as Kafka maps it) and throws the failed write's effect away: the
// shard loads its partition again, and reads show the log.
func TestFailedAppendReloads(t *testing.T) {
	h := newHarness(t, nil)
	wantCode(t, "initialize", h.initialize(keyA0, 0, 0), nil)
	wantCode(t, "write", h.write(keyA0, 0, 0, 0, sb(0, 4, DeliveryStateAcknowledged, 1)), nil)
	h.log.mu.Lock()
	h.log.failAppends = []error{kerr.NotEnoughReplicas}
	h.log.mu.Unlock()
	wantCode(t, "failed write", h.write(keyA0, 0, 0, 0, sb(5, 9, DeliveryStateAcknowledged, 1)), kerr.CoordinatorNotAvailable)
	var r kmsg.ReadShareGroupStateResponseTopicPartition
	deadline := time.Now().Add(10 * time.Second)
	for r = h.read(keyA0, 0); r.ErrorCode == kerr.CoordinatorLoadInProgress.Code && time.Now().Before(deadline); r = h.read(keyA0, 0) {
		time.Sleep(time.Millisecond)
	}
	wantCode(t, "read after the reload", r.ErrorCode, nil)
	if !slices.Equal(ReadBatches(r), []StateBatch{sb(0, 4, DeliveryStateAcknowledged, 1)}) {
		t.Fatalf("after a failed write the state is %v, want what the log holds", ReadBatches(r))
	}
}

// Deleting a share-partition writes a tombstone; it stays deleted after a
// reload.
func TestDelete(t *testing.T) {
	h := newHarness(t, nil)
	wantCode(t, "initialize", h.initialize(keyA0, 0, 0), nil)
	wantCode(t, "initialize", h.initialize(keyA1, 0, 0), nil)
	wantCode(t, "delete", h.remove(keyA0), nil)
	for range 2 {
		wantCode(t, "read of the deleted", h.read(keyA0, 0).ErrorCode, kerr.InvalidRequest)
		wantCode(t, "read of the other", h.read(keyA1, 0).ErrorCode, nil)
		h.restart()
	}
}

// The topics deleted from the metadata lose their share-partitions' state.
func TestTopicsDeleted(t *testing.T) {
	h := newHarness(t, nil)
	wantCode(t, "initialize", h.initialize(keyA0, 0, 0), nil)
	wantCode(t, "initialize", h.initialize(keyB0, 0, 0), nil)
	img := testImage()
	deleted := img.TopicsByID[topicA]
	delete(img.Topics, "a")
	delete(img.TopicsByID, topicA)
	h.setImage(img)
	h.c.OnMetadataDelta(&raftmeta.Delta{DeletedTopics: []*raftmeta.Topic{deleted}})
	tombstone := "tombstone " + keyA0.String()
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(h.log.records(t, PartitionFor(keyA0, testPartitions)), tombstone) {
		if time.Now().After(deadline) {
			t.Fatal("no tombstone for the deleted topic's share-partition")
		}
		time.Sleep(time.Millisecond)
	}
	h.restart()
	if _, ok := h.snapshotStates()[keyA0]; ok {
		t.Fatal("the deleted topic's share-partition kept its state")
	}
	wantCode(t, "read of the other topic", h.read(keyB0, 0).ErrorCode, nil)
}

// The shards' memory after any sequence of operations is what a reload of
// the log gives: the same share-partitions with the same state, fences
// and update counts, with pruning and cold snapshots along the way.
func TestReloadGivesSameState(t *testing.T) {
	for seed := range uint64(4) {
		h := newHarness(t, func(c *Config) { c.SnapshotUpdateRecordsPerSnapshot = int32(seed % 3) })
		rng := rand.New(rand.NewPCG(seed, 7))
		var keys []Key
		for _, g := range []string{"g", "h", "share-group-with-a-long-name"} {
			for _, id := range []raftmeta.Uuid{topicA, topicB} {
				for p := range int32(4) {
					keys = append(keys, Key{GroupID: g, TopicID: id, Partition: p})
				}
			}
		}
		epochs := map[Key]int32{}
		for step := range 600 {
			k := keys[rng.IntN(len(keys))]
			switch n := rng.IntN(100); {
			case n < 10:
				h.initialize(k, rng.Int32N(3), rng.Int64N(50)-1)
			case n < 25:
				epochs[k] += rng.Int32N(2)
				h.read(k, epochs[k])
			case n < 90:
				var bs []StateBatch
				for range rng.IntN(4) {
					first := rng.Int64N(200)
					bs = append(bs, sb(first, first+rng.Int64N(10), int8(rng.IntN(3)*2), int16(rng.IntN(4))))
				}
				h.write(k, -1, epochs[k], rng.Int64N(150)-1, bs...)
			case n < 94:
				h.remove(k)
			case n < 97:
				h.clock.Advance(time.Duration(rng.IntN(90)) * time.Minute)
				for _, s := range h.c.shards.Shards() {
					s.snapshotColdPartitions()
				}
			default:
				for _, s := range h.c.shards.Shards() {
					s.prune()
				}
			}
			if step%200 == 199 {
				h.flush()
				before := h.snapshotStates()
				h.restart()
				if after := h.snapshotStates(); !reflect.DeepEqual(before, after) {
					for k := range before {
						if !reflect.DeepEqual(before[k], after[k]) {
							t.Errorf("seed %d step %d: %s before %+v\nafter %+v", seed, step, k, before[k], after[k])
						}
					}
					t.Fatalf("seed %d step %d: a reload holds %d share-partitions, memory %d", seed, step, len(after), len(before))
				}
			}
		}
	}
}

// Pruning deletes the records below every share-partition's latest
// snapshot and nothing a reload needs; a cold snapshot lets it pass a
// share-partition that writes no more.
func TestPruneAndColdSnapshots(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.SnapshotUpdateRecordsPerSnapshot = 2
		c.ColdPartitionSnapshotInterval = time.Minute
	})
	// keyA0 and an idle share-partition of the same __share_group_state
	// partition.
	var idle Key
	for i := 0; idle.GroupID == "" || PartitionFor(idle, testPartitions) != PartitionFor(keyA0, testPartitions); i++ {
		idle = Key{GroupID: fmt.Sprint("idle", i), TopicID: topicB}
	}
	p := PartitionFor(keyA0, testPartitions)
	wantCode(t, "initialize idle", h.initialize(idle, 0, 0), nil)
	wantCode(t, "initialize", h.initialize(keyA0, 0, 0), nil)
	for i := range int64(10) {
		wantCode(t, "write", h.write(keyA0, 0, 0, i, sb(i, i+1, DeliveryStateAvailable, 1)), nil)
	}
	shard, _ := h.c.shards.Lookup(p)
	log := h.log.Partition(p)
	shard.prune()
	if start := log.LogStartOffset(); start != 0 {
		t.Fatalf("pruned to %d while the idle share-partition's snapshot is at 0", start)
	}

	// The idle share-partition's snapshot gets old: it is rewritten, and
	// the next prune moves past both old snapshots.
	before := h.snapshotStates()
	h.clock.Advance(2 * time.Minute)
	shard.snapshotColdPartitions()
	wantCode(t, "read", h.read(idle, 0).ErrorCode, nil) // waits for the snapshots
	shard.prune()
	start := log.LogStartOffset()
	if start == 0 {
		t.Fatal("nothing pruned after the cold snapshots")
	}
	got := h.log.records(t, p)
	if len(got) != 2 || got[0] != "snapshot "+idle.String() && got[1] != "snapshot "+idle.String() {
		t.Fatalf("after pruning the partition holds %q, want the two cold snapshots", got)
	}
	h.restart()
	after := h.snapshotStates()
	for _, k := range []Key{idle, keyA0} {
		b, a := before[k], after[k]
		if !slices.Equal(a.batches, b.batches) || a.startOffset != b.startOffset || a.snapshotEpoch != b.snapshotEpoch+1 {
			t.Fatalf("%s after pruning and a reload: %+v, before %+v", k, a, b)
		}
	}
	// A quiet partition, all of whose snapshots are rewrites, gets none.
	h.clock.Advance(2 * time.Minute)
	shard, _ = h.c.shards.Lookup(p)
	shard.snapshotColdPartitions()
	wantCode(t, "read", h.read(idle, 0).ErrorCode, nil)
	if again := h.log.records(t, p); len(again) != 2 {
		t.Fatalf("a quiet partition was snapshotted again: %q", again)
	}
}
