package broker_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker"
	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/broker/config"
)

// startTwoDirs starts a one-node cluster with two log directories
// (log.dirs=d1,d2, Kafka's JBOD); it returns them by absolute path.
func startTwoDirs(t *testing.T, configs ...string) (*brokertest.Cluster, [2]string) {
	t.Helper()
	base := t.TempDir()
	dirs := [2]string{filepath.Join(base, "d1"), filepath.Join(base, "d2")}
	c := brokertest.StartCluster(t, 1, brokertest.WithConfig(append([]string{"log.dirs=" + dirs[0] + "," + dirs[1]}, configs...)...))
	return c, dirs
}

// placement describes the topic's partitions: the directory each is in.
func placement(t *testing.T, adm *kadm.Client, topic string, partitions int32) map[int32]string {
	t.Helper()
	ts := kadm.TopicsSet{topic: {}}
	for p := range partitions {
		ts[topic][p] = struct{}{}
	}
	described, err := adm.DescribeBrokerLogDirs(testCtx(t, 10*time.Second), 1, ts)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]string{}
	described.EachPartition(func(p kadm.DescribedLogDirPartition) {
		if p.IsFuture {
			return
		}
		if d, dup := out[p.Partition]; dup {
			t.Fatalf("%s[%d] is described in %s and %s", topic, p.Partition, d, p.Dir)
		}
		out[p.Partition] = p.Dir
	})
	return out
}

// TestSeveralLogDirs: a node serves log.dirs=d1,d2 as Kafka's JBOD does:
// both directories formatted (same cluster and node id, each its own
// directory.id), the partitions of a new topic spread over both (the
// directory with the fewest partitions first, LogManager.nextLogDirs),
// DescribeLogDirs listing each directory with its partitions, sizes and
// space, and a restart finding every partition where it was with every
// acknowledged record.
func TestSeveralLogDirs(t *testing.T) {
	c, dirs := startTwoDirs(t)
	ctx := testCtx(t, time.Minute)
	adm := c.Admin(t)
	const topic = "jbod"
	createTopic(t, adm, topic, 4)
	prod := c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	acked := ackLedger{}
	acked.produce(ctx, t, prod, "before", 200, 4)

	var mps [2]map[string]string
	for i, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, broker.MetaPropertiesFile))
		if err == nil {
			mps[i], err = config.Parse(bytes.NewReader(data))
		}
		if err != nil {
			t.Fatalf("%s not formatted: %v", d, err)
		}
	}
	if mps[0]["cluster.id"] == "" || mps[0]["cluster.id"] != mps[1]["cluster.id"] || mps[0]["node.id"] != "1" || mps[1]["node.id"] != "1" ||
		mps[0]["directory.id"] == "" || mps[1]["directory.id"] == "" || mps[0]["directory.id"] == mps[1]["directory.id"] {
		t.Fatalf("meta.properties: %v and %v, want one cluster and node, two directory ids", mps[0], mps[1])
	}

	described, err := adm.DescribeBrokerLogDirs(ctx, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(described) != 2 {
		t.Fatalf("DescribeLogDirs lists %d directories, want %v", len(described), dirs)
	}
	for _, d := range dirs {
		dd, ok := described[d]
		if !ok || dd.Err != nil || dd.TotalBytes <= 0 || dd.UsableBytes <= 0 {
			t.Fatalf("%s described as %+v (found %v)", d, dd, ok)
		}
	}
	before := placement(t, adm, topic, 4)
	perDir := map[string]int{}
	for p, d := range before {
		perDir[d]++
		dp, _ := described.Lookup(d, topic, p)
		if dp.Size == 0 {
			t.Fatalf("%s[%d] in %s has size 0 after 50 records", topic, p, d)
		}
		if _, err := os.Stat(filepath.Join(d, fmt.Sprintf("%s-%d", topic, p))); err != nil {
			t.Fatalf("%s[%d] described in %s but not there: %v", topic, p, d, err)
		}
	}
	if len(before) != 4 || perDir[dirs[0]] == 0 || perDir[dirs[1]] == 0 {
		t.Fatalf("partitions by directory: %v, want all 4 spread over both of %v", before, dirs)
	}
	t.Logf("partitions by directory: %v", perDir)

	c.Stop(t, 1)
	c.Restart(t, 1)
	adm = c.Admin(t)
	if after := placement(t, adm, topic, 4); len(after) != 4 {
		t.Fatalf("after the restart: %v, want 4 partitions", after)
	} else {
		for p, d := range before {
			if after[p] != d {
				t.Fatalf("%s[%d] was in %s, is in %s after the restart", topic, p, d, after[p])
			}
		}
	}
	prod = c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	acked.produce(ctx, t, prod, "after", 200, 4)
	acked.audit(ctx, t, c, topic)
}
