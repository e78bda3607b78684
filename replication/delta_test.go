package replication

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

func TestApplyDeltaCreatesLogs(t *testing.T) {
	h := newHarness(t)
	topic := h.createTopic("t", topicSpec{partitions: 2, epoch: 3})
	h.createTopic("elsewhere", topicSpec{replicas: []int32{2}, leader: 2})
	for i := int32(0); i < 2; i++ {
		p := h.partition("t", i)
		if p.TopicID() != storage.TopicID(topic.ID) || !p.IsLeader() || p.LeaderEpoch() != 3 || p.TopicPartition().Partition != i {
			t.Fatalf("partition %d: id %v leader %v epoch %d", i, p.TopicID(), p.IsLeader(), p.LeaderEpoch())
		}
		meta, err := os.ReadFile(filepath.Join(h.dir, storage.PartitionDirName("t", i), "partition.metadata"))
		if err != nil || !containsString(string(meta), storage.TopicID(topic.ID).String()) {
			t.Fatalf("partition.metadata of t-%d: %q %v", i, meta, err)
		}
	}
	if _, ok := h.rm.Partition(storage.TopicPartition{Topic: "elsewhere"}); ok {
		t.Fatal("a partition without a local replica was created")
	}
	if _, err := os.Stat(filepath.Join(h.dir, "elsewhere-0")); !os.IsNotExist(err) {
		t.Fatalf("log dir for a remote partition: %v", err)
	}
	if got, want := h.events.take(), []string{"t-0 leader=true epoch=3", "t-1 leader=true epoch=3"}; !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if n := len(h.rm.Partitions()); n != 2 {
		t.Fatalf("%d partitions", n)
	}
}

func containsString(s, sub string) bool { return sub != "" && strings.Contains(s, sub) }

func TestApplyDeltaLeadershipEvents(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{replicas: []int32{localNode, 2}, leader: 2, epoch: 1})
	if got := h.events.take(); len(got) != 0 {
		t.Fatalf("follower creation: %v", got)
	}
	h.changePartition("t", 0, func(p *raftmeta.Partition) { p.Leader, p.LeaderEpoch = localNode, 2 })
	h.changePartition("t", 0, func(p *raftmeta.Partition) { p.ISR = []int32{localNode} }) // same epoch: no event
	h.changePartition("t", 0, func(p *raftmeta.Partition) { p.LeaderEpoch = 3 })
	h.changePartition("t", 0, func(p *raftmeta.Partition) { p.Leader, p.LeaderEpoch = 2, 4 })
	want := []string{"t-0 leader=true epoch=2", "t-0 leader=true epoch=3", "t-0 leader=false epoch=4"}
	if got := h.events.take(); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	// A listener registered later hears the current leaders first.
	h.createTopic("u", topicSpec{partitions: 2, epoch: 5})
	var late eventLog
	h.rm.OnLeadershipChange(late.record)
	got := late.take()
	slices.Sort(got)
	if want := []string{"u-0 leader=true epoch=5", "u-1 leader=true epoch=5"}; !slices.Equal(got, want) {
		t.Fatalf("replay %v, want %v", got, want)
	}
}

func TestApplyDeltaConfigChanges(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{configs: map[string]string{"retention.ms": "1000"}})
	h.createTopic("u", topicSpec{})
	p := h.partition("t", 0)
	if got := p.Log().Config().RetentionMs; got != 1000 {
		t.Fatalf("created with retention.ms %d, want 1000", got)
	}
	h.setTopicConfig("t", map[string]string{"retention.ms": "2000", "segment.bytes": "4096", "min.insync.replicas": "2"})
	if c := p.Log().Config(); c.RetentionMs != 2000 || c.SegmentBytes != 4096 {
		t.Fatalf("after the change: retention.ms %d segment.bytes %d", c.RetentionMs, c.SegmentBytes)
	}
	if p.minISR.Load() != 2 {
		t.Fatalf("min ISR %d", p.minISR.Load())
	}
	if c := h.partition("u", 0).Log().Config(); c.RetentionMs != storage.DefaultLogConfig().RetentionMs {
		t.Fatalf("another topic changed: %d", c.RetentionMs)
	}
	// A broker-level default change reaches every log through LogConfigFor.
	img := cloneImage(h.img)
	img.Configs[raftmeta.ConfigResource{Type: raftmeta.ConfigResourceBroker}] = map[string]string{"log.retention.ms": "5"}
	h.rm.cfg.LogConfigFor = func(topic string, img *raftmeta.Image) (storage.LogConfig, error) {
		c := storage.DefaultLogConfig()
		c.RetentionMs = 5
		return storage.ParseLogConfig(c, img.TopicConfig(topic), false)
	}
	h.apply(&raftmeta.Delta{ChangedConfigs: []raftmeta.ConfigResource{{Type: raftmeta.ConfigResourceBroker}}}, img)
	if c := h.partition("u", 0).Log().Config(); c.RetentionMs != 5 {
		t.Fatalf("broker default: %d", c.RetentionMs)
	}
	if c := p.Log().Config(); c.RetentionMs != 2000 {
		t.Fatalf("topic override lost: %d", c.RetentionMs)
	}
}

func TestApplyDeltaDeletesTopics(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{partitions: 2})
	h.mustProduce("t", 0, "a", 3, 0)
	old := h.partition("t", 0)
	h.events.take()
	h.deleteTopic("t")
	if _, ok := h.rm.Partition(storage.TopicPartition{Topic: "t"}); ok {
		t.Fatal("partition survived its topic")
	}
	for i := 0; i < 2; i++ {
		if _, err := os.Stat(filepath.Join(h.dir, storage.PartitionDirName("t", int32(i)))); !os.IsNotExist(err) {
			t.Fatalf("log dir t-%d still there: %v", i, err)
		}
	}
	entries, _ := os.ReadDir(h.dir)
	for _, e := range entries {
		if e.IsDir() {
			t.Fatalf("left behind: %s", e.Name())
		}
	}
	got := h.events.take()
	slices.Sort(got)
	if want := []string{"t-0 leader=false epoch=0", "t-1 leader=false epoch=0"}; !slices.Equal(got, want) {
		t.Fatalf("events %v", got)
	}
	if sp := h.produce(1, "t", 0, h.batch("a", 1)); sp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("produce to a deleted topic: %d", sp.ErrorCode)
	}
	// A stale handle refuses appends.
	if _, err := h.rm.AppendCoordinator(context.Background(), storage.TopicPartition{Topic: "t"}, h.batch("x", 1)); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("append after delete: %v", err)
	}
	if _, err := old.appendRecordsToLeader(h.batch("x", 1), 0, 1); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("stale partition append: %v", err)
	}

	// Re-created under the same name: a new, empty log.
	nt := h.createTopic("t", topicSpec{})
	p := h.partition("t", 0)
	if p == old || p.TopicID() != storage.TopicID(nt.ID) || p.Log().LogEndOffset() != 0 {
		t.Fatalf("re-created: id %v LEO %d", p.TopicID(), p.Log().LogEndOffset())
	}
}

func TestApplyDeltaDeleteAndRecreateInOneDelta(t *testing.T) {
	h := newHarness(t)
	old := h.createTopic("t", topicSpec{})
	h.mustProduce("t", 0, "a", 3, 0)
	nt := &raftmeta.Topic{Name: "t", ID: raftmeta.Uuid{0xBB}}
	np := &raftmeta.Partition{Topic: "t", TopicID: nt.ID, Replicas: []int32{localNode}, ISR: []int32{localNode}, Leader: localNode}
	nt.Partitions = []*raftmeta.Partition{np}
	img := cloneImage(h.img)
	delete(img.TopicsByID, old.ID)
	img.Topics["t"], img.TopicsByID[nt.ID] = nt, nt
	h.apply(&raftmeta.Delta{DeletedTopics: []*raftmeta.Topic{old}, CreatedTopics: []*raftmeta.Topic{nt}, ChangedPartitions: []*raftmeta.Partition{np}}, img)
	p := h.partition("t", 0)
	if p.TopicID() != storage.TopicID(nt.ID) || p.Log().LogEndOffset() != 0 {
		t.Fatalf("re-created in one delta: id %v LEO %d", p.TopicID(), p.Log().LogEndOffset())
	}
	h.mustProduce("t", 0, "b", 1, 0)
}

func TestApplyDeltaReassignAway(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{})
	h.mustProduce("t", 0, "a", 1, 0)
	h.events.take()
	h.changePartition("t", 0, func(p *raftmeta.Partition) { p.Replicas, p.ISR, p.Leader, p.LeaderEpoch = []int32{2}, []int32{2}, 2, 1 })
	if _, ok := h.rm.Partition(storage.TopicPartition{Topic: "t"}); ok {
		t.Fatal("the replica moved away but the partition stayed")
	}
	if _, err := os.Stat(filepath.Join(h.dir, "t-0")); !os.IsNotExist(err) {
		t.Fatalf("log of a moved replica: %v", err)
	}
	if got := h.events.take(); !slices.Equal(got, []string{"t-0 leader=false epoch=0"}) {
		t.Fatalf("events %v", got)
	}
	if sp := h.produce(1, "t", 0, h.batch("a", 1)); sp.ErrorCode != kerr.NotLeaderForPartition.Code || sp.CurrentLeader.LeaderID != 2 {
		t.Fatalf("produce after the move: %+v", sp)
	}
}

func TestApplyDeltaOfflineLog(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.LogConfigFor = func(topic string, img *raftmeta.Image) (storage.LogConfig, error) {
			if topic == "broken" {
				return storage.LogConfig{}, errors.New("no config")
			}
			return storage.DefaultLogConfig(), nil
		}
	})
	h.createTopic("broken", topicSpec{})
	if sp := h.produce(1, "broken", 0, h.batch("a", 1)); sp.ErrorCode != kerr.KafkaStorageError.Code {
		t.Fatalf("offline replica: %d", sp.ErrorCode)
	}
	h.deleteTopic("broken")
	if sp := h.produce(1, "broken", 0, h.batch("a", 1)); sp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("after deleting the offline topic: %d", sp.ErrorCode)
	}
}

// A restarted broker finds its logs on disk; the first image brings them
// back with their data.
func TestRestartRecoversPartitions(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{partitions: 2, epoch: 2})
	h.createTopic("gone", topicSpec{})
	h.createTopic("renamed", topicSpec{})
	h.mustProduce("t", 0, "a", 4, 0)
	h.mustProduce("t", 1, "b", 2, 0)
	h.mustProduce("renamed", 0, "old", 2, 0)
	img := cloneImage(h.img)
	// While the broker is down "gone" is deleted and "renamed" is deleted
	// and re-created with a new id.
	delete(img.TopicsByID, img.Topics["gone"].ID)
	delete(img.Topics, "gone")
	oldRenamed := img.Topics["renamed"]
	delete(img.TopicsByID, oldRenamed.ID)
	nr := &raftmeta.Topic{Name: "renamed", ID: raftmeta.Uuid{0xCC}}
	nr.Partitions = []*raftmeta.Partition{{Topic: "renamed", TopicID: nr.ID, Replicas: []int32{localNode}, ISR: []int32{localNode}, Leader: localNode}}
	img.Topics["renamed"], img.TopicsByID[nr.ID] = nr, nr
	h.close()
	h.events.take()

	h.open()
	h.apply(&raftmeta.Delta{}, img)
	for i, want := range []int64{4, 2} {
		p := h.partition("t", int32(i))
		if p.Log().LogEndOffset() != want || p.HighWatermark() != want || p.LeaderEpoch() != 2 {
			t.Fatalf("t-%d after restart: LEO %d HW %d epoch %d", i, p.Log().LogEndOffset(), p.HighWatermark(), p.LeaderEpoch())
		}
	}
	got := decodeFetch(t, h.fetch(fetchReq(12, fp("t", 0, 0))))[0]
	if !slices.Equal(got.values, []string{"a-0", "a-1", "a-2", "a-3"}) {
		t.Fatalf("data after restart: %v", got.values)
	}
	// The stray log of the deleted topic is not served (and left on disk,
	// as Kafka leaves stray logs to the operator).
	if sp := h.produce(1, "gone", 0, h.batch("a", 1)); sp.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("stray log served: %d", sp.ErrorCode)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "gone-0")); err != nil {
		t.Fatalf("stray log removed: %v", err)
	}
	// The log of the older "renamed" was replaced by an empty one.
	if p := h.partition("renamed", 0); p.Log().LogEndOffset() != 0 || p.TopicID() != storage.TopicID(nr.ID) {
		t.Fatalf("re-created topic: LEO %d id %v", p.Log().LogEndOffset(), p.TopicID())
	}
	if got := h.events.take(); len(got) != 3 {
		t.Fatalf("leadership events after restart: %v", got)
	}
}

func TestStartRunsMaintenance(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.RetentionCheckIntervalMs = 5; c.HighWatermarkCheckpointIntervalMs = 5 })
	h.createTopic("t", topicSpec{configs: map[string]string{"segment.bytes": "1024", "retention.ms": "60000"}})
	for i := 0; i < 4; i++ {
		h.produce(1, "t", 0, h.batchSpec(storageBatchSpec(), "v", 1, 700))
	}
	p := h.partition("t", 0)
	if n := len(p.Log().Segments()); n < 3 {
		t.Fatalf("%d segments", n)
	}
	h.clock.Advance(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.rm.Start(ctx)
	// Every segment expired; the active one too (a new empty one is rolled).
	waitFor(t, func() bool { return p.Log().LogStartOffset() == 4 })
	if segs := p.Log().Segments(); !slices.Equal(segs, []int64{4}) {
		t.Fatalf("segments after retention: %v", segs)
	}
	waitFor(t, func() bool {
		_, err := os.Stat(filepath.Join(h.dir, storage.ReplicationCheckpointFile))
		return err == nil
	})
	h.rm.Stop()
	h.rm.Stop() // idempotent
}

// TestStartCheckpointsOnTheirIntervals: each checkpoint file has its own
// interval (replica.high.watermark.checkpoint.interval.ms,
// log.flush.offset.checkpoint.interval.ms,
// log.flush.start.offset.checkpoint.interval.ms); a negative one writes
// its file only when the logs close.
func TestStartCheckpointsOnTheirIntervals(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.HighWatermarkCheckpointIntervalMs = 5
		c.RecoveryPointCheckpointIntervalMs = 5
		c.LogStartOffsetCheckpointIntervalMs = -1
	})
	h.createTopic("t", topicSpec{})
	h.produce(1, "t", 0, h.batchSpec(storageBatchSpec(), "v", 1, 100))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.rm.Start(ctx)
	defer h.rm.Stop()
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(h.dir, name))
		return err == nil
	}
	waitFor(t, func() bool {
		return exists(storage.ReplicationCheckpointFile) && exists(storage.RecoveryPointCheckpointFile)
	})
	if exists(storage.LogStartOffsetCheckpointFile) {
		t.Fatal("log start offsets checkpointed with log.flush.start.offset.checkpoint.interval.ms negative")
	}
}

func storageBatchSpec() record.BatchSpec { return record.BatchSpec{} }
