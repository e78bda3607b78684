package broker_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage"
)

// restartSegmentBytes is the topics' segment.bytes in the restart test: a
// few of the 2 KB batches it writes fill a segment.
const restartSegmentBytes = 8192

// TestRestartedNodeLogsTakeTopicConfigs restarts a follower and checks that
// its logs live under their topics' configs from the start, as Kafka's
// do: a KRaft broker loads its logs, with the topic configs of the image,
// and starts log retention and cleaning only once it has caught up with
// the metadata log (BrokerMetadataPublisher starts the LogManager on its
// first publish).
//
//   - "kept" is created with segment.bytes=8192 and retention.ms=-1 and
//     holds records a month old, written before and while the follower is
//     down. The restarted node opens its log from disk with the broker
//     defaults; before, log maintenance (every 25 ms here) ran before the
//     replicas took the first image and deleted the segments by the default
//     7-day retention: the follower's log start offset moved past records
//     the leader keeps.
//   - "altered" gets cleanup.policy=compact and segment.bytes=8192 while
//     the follower is down, then records: the follower catches up under
//     them, in segments of at most 8 KB (the replicas take an image that
//     holds the change: the node waits for its registration, which comes
//     after it, to be applied), and keeps every record.
func TestRestartedNodeLogsTakeTopicConfigs(t *testing.T) {
	c := brokertest.StartCluster(t, 3, brokertest.WithConfig("auto.leader.rebalance.enable=false",
		"log.retention.check.interval.ms=25"))
	ctrl := c.Controller()
	var others []int32
	for id := int32(1); id <= 3; id++ {
		if id != ctrl {
			others = append(others, id)
		}
	}
	// Neither is the controller: the restart moves no controller role.
	leader, follower := others[0], others[1]
	ctx := testCtx(t, time.Minute)
	seg := fmt.Sprint(restartSegmentBytes)
	createAssigned(ctx, t, c.Client(t), leader, "kept", [][]int32{{leader, follower}},
		"segment.bytes", seg, "retention.ms", "-1")
	createAssigned(ctx, t, c.Client(t), leader, "altered", [][]int32{{leader, follower}})
	c.WaitForISR(t, "kept", 2, 15*time.Second)
	c.WaitForISR(t, "altered", 2, 15*time.Second)
	produceMonthOld(ctx, t, c, "kept")
	c.WaitFor(t, 15*time.Second, fmt.Sprintf("node %d to replicate kept", follower), func() bool {
		return logEndOn(c, follower, "kept") == logEndOn(c, leader, "kept")
	})

	c.Stop(t, follower)
	resp, err := c.Admin(t).AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "segment.bytes", Value: &seg},
		{Op: kadm.SetConfig, Name: "cleanup.policy", Value: kadm.StringPtr("compact")},
	}, "altered")
	if err == nil {
		_, err = resp.On("altered", func(r *kadm.AlterConfigsResponse) error { return r.Err })
	}
	if err != nil {
		t.Fatalf("alter altered: %v", err)
	}
	c.WaitFor(t, 15*time.Second, fmt.Sprintf("node %d to know altered's configs", leader), func() bool {
		return c.Node(leader).Node().Image().TopicConfig("altered")["cleanup.policy"] == "compact"
	})
	produceMonthOld(ctx, t, c, "kept")
	produceMonthOld(ctx, t, c, "altered")

	c.Restart(t, follower)
	for _, topic := range []string{"kept", "altered"} {
		c.WaitFor(t, 30*time.Second, fmt.Sprintf("node %d to catch up on %s and rejoin the ISR", follower, topic), func() bool {
			p, ok := c.Image().Partition(topic, 0)
			end := logEndOn(c, leader, topic)
			return ok && slices.Contains(p.ISR, follower) && end > 0 && logEndOn(c, follower, topic) == end
		})
	}
	// Let log maintenance run a few times under the configs now in place.
	time.Sleep(300 * time.Millisecond)
	for _, topic := range []string{"kept", "altered"} {
		l := followerLog(t, c, follower, topic)
		if got := l.LogStartOffset(); got != 0 {
			t.Errorf("node %d's %s log starts at offset %d, want 0: records of a topic with retention.ms=-1 or cleanup.policy=compact were deleted",
				follower, topic, got)
		}
		if got := l.Config().SegmentBytes; got != restartSegmentBytes {
			t.Errorf("node %d's %s log has segment.bytes %d, want %d", follower, topic, got, restartSegmentBytes)
		}
		if sizes := segmentFileSizes(t, l.Dir()); len(sizes) < 5 || slices.Max(sizes) > restartSegmentBytes {
			t.Errorf("node %d's %s log is in segments of %v bytes, want at least 5, none over segment.bytes %d",
				follower, topic, sizes, restartSegmentBytes)
		}
	}
}

// produceMonthOld writes 40 keyed one-record batches of about 2 KB each,
// stamped a month ago (older than the default retention.ms, 7 days).
// acks=1: nothing waits for a stopped follower.
func produceMonthOld(ctx context.Context, t *testing.T, c *brokertest.Cluster, topic string) {
	t.Helper()
	cl := c.Client(t, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	old := time.Now().Add(-30 * 24 * time.Hour)
	for range 40 {
		r := &kgo.Record{Topic: topic, Key: []byte(rand.Text()), Timestamp: old, Value: []byte(strings.Repeat(rand.Text(), 75))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
	}
}

// logEndOn is the log end offset of topic's partition 0 on node id, -1
// while the node does not host it.
func logEndOn(c *brokertest.Cluster, id int32, topic string) int64 {
	n := c.Node(id).Node()
	if n == nil || n.Replicas() == nil {
		return -1
	}
	p, ok := n.Replicas().Partition(storage.TopicPartition{Topic: topic})
	if !ok {
		return -1
	}
	return p.Log().LogEndOffset()
}

func followerLog(t *testing.T, c *brokertest.Cluster, id int32, topic string) *storage.Log {
	t.Helper()
	p, ok := c.Node(id).Node().Replicas().Partition(storage.TopicPartition{Topic: topic})
	if !ok {
		t.Fatalf("node %d hosts no %s-0", id, topic)
	}
	return p.Log()
}

// segmentFileSizes are the sizes of the segment files in a log directory,
// in file name (base offset) order.
func segmentFileSizes(t *testing.T, dir string) []int64 {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var sizes []int64
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, fi.Size())
	}
	return sizes
}
