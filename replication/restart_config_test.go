package replication

import (
	"context"
	"testing"
	"time"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
)

// TestRestartMaintainsLogsOnlyUnderTheirTopicConfigs: a restarted broker's
// LogManager opens the logs on disk with the broker defaults; the topic
// configs come with the first image. Log maintenance must not run before
// (retention would delete a month-old segment of a topic with
// retention.ms=-1 by the default 7 days), and after it every log on disk
// of a topic the image has runs under that topic's config, also a log
// whose replica moved away while the broker was down. Kafka loads the
// logs with their topic configs, and starts retention, only on the first
// caught-up image.
func TestRestartMaintainsLogsOnlyUnderTheirTopicConfigs(t *testing.T) {
	fast := func(c *Config) { c.RetentionCheckIntervalMs = 5 }
	h := newHarness(t, fast)
	keep := map[string]string{"segment.bytes": "1024", "retention.ms": "-1"}
	h.createTopic("kept", topicSpec{configs: keep})
	h.createTopic("moved", topicSpec{configs: keep})
	for _, topic := range []string{"kept", "moved"} {
		for range 4 {
			h.produce(1, topic, 0, h.batchSpec(storageBatchSpec(), "v", 1, 700))
		}
		if n := len(h.partition(topic, 0).Log().Segments()); n < 3 {
			t.Fatalf("%s: %d segments", topic, n)
		}
	}
	// While the broker is down "moved" is reassigned to node 2.
	img := cloneImage(h.img)
	mt := *img.Topics["moved"]
	mp := *mt.Partitions[0]
	mp.Replicas, mp.ISR, mp.Leader, mp.LeaderEpoch = []int32{2}, []int32{2}, 2, 1
	mt.Partitions = []*raftmeta.Partition{&mp}
	img.Topics["moved"], img.TopicsByID[mt.ID] = &mt, &mt
	h.close()
	h.clock.Advance(30 * 24 * time.Hour)

	h.open(fast)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.rm.Start(ctx)
	logStarts := func(when string) {
		t.Helper()
		for _, topic := range []string{"kept", "moved"} {
			l, ok := h.logs.Log(storage.TopicPartition{Topic: topic})
			if !ok {
				t.Fatalf("%s: the log of %s-0 is gone", when, topic)
			}
			if got := l.LogStartOffset(); got != 0 {
				t.Fatalf("%s: %s-0 starts at offset %d, want 0 (retention.ms=-1)", when, topic, got)
			}
		}
	}
	// No image yet: some 20 maintenance periods pass with nothing deleted.
	time.Sleep(100 * time.Millisecond)
	logStarts("before the first image")

	h.apply(&raftmeta.Delta{}, img)
	l, _ := h.logs.Log(storage.TopicPartition{Topic: "moved"})
	if got := l.Config().RetentionMs; got != -1 {
		t.Fatalf("the log of the moved replica has retention.ms %d, want the topic's -1", got)
	}
	time.Sleep(100 * time.Millisecond)
	logStarts("after the first image")
}

// TestApplyDeltaIgnoresAnOlderImage: the broker hands the replica manager
// its first image (the whole of it, with an empty delta) while the
// metadata goroutine may already have handed it a newer one; the older
// image must not replace the newer.
func TestApplyDeltaIgnoresAnOlderImage(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{})
	older := h.img
	h.setTopicConfig("t", map[string]string{"retention.ms": "1000"})
	newer := h.img
	h.rm.ApplyDelta(&raftmeta.Delta{}, older)
	if got := h.rm.currentImage(); got != newer {
		t.Fatalf("image at offset %d after an older one was applied, want %d", got.Offset, newer.Offset)
	}
}
