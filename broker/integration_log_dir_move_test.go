package broker_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
)

// incompressible is n random hex characters: record values the client's
// compression does not shrink away.
func incompressible(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

// steadyProducer produces to every partition of a topic with acks=all
// (idempotent, kgo's default) until stopped, counting where each record
// was acknowledged.
type steadyProducer struct {
	mu     sync.Mutex
	acked  ackLedger
	failed []error
	stop   chan struct{}
	done   chan struct{}
}

func startSteadyProducer(ctx context.Context, t *testing.T, c *brokertest.Cluster, topic string, partitions int32) *steadyProducer {
	t.Helper()
	prod := c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MaxBufferedRecords(200), kgo.ProducerBatchMaxBytes(64<<10))
	sp := &steadyProducer{acked: ackLedger{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(sp.done)
		for i := 0; ; i++ {
			select {
			case <-sp.stop:
				_ = prod.Flush(ctx)
				return
			default:
			}
			if i%100 == 99 {
				time.Sleep(5 * time.Millisecond) // a steady load, not a flood the audit must read back
			}
			r := &kgo.Record{Partition: int32(i) % partitions, Value: fmt.Appendf(nil, "steady-%d", i)}
			prod.Produce(ctx, r, func(r *kgo.Record, err error) {
				sp.mu.Lock()
				defer sp.mu.Unlock()
				if err != nil {
					sp.failed = append(sp.failed, err)
					return
				}
				sp.acked[string(r.Value)] = [2]int64{int64(r.Partition), r.Offset}
			})
		}
	}()
	return sp
}

// finish stops the producer and fails the test on any failed record.
func (sp *steadyProducer) finish(t *testing.T) ackLedger {
	t.Helper()
	close(sp.stop)
	<-sp.done
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if len(sp.failed) > 0 {
		t.Fatalf("%d records failed, the first: %v", len(sp.failed), sp.failed[0])
	}
	return sp.acked
}

// moveAll asks the broker to move each partition of topic to the other
// of the two directories; it returns the destinations.
func moveAll(t *testing.T, adm *kadm.Client, topic string, from map[int32]string, dirs [2]string) map[int32]string {
	t.Helper()
	to := map[int32]string{}
	var req kadm.AlterReplicaLogDirsReq
	for p, d := range from {
		to[p] = dirs[0]
		if d == dirs[0] {
			to[p] = dirs[1]
		}
		req.Add(to[p], kadm.TopicsSet{topic: {p: {}}})
	}
	rs, err := adm.AlterBrokerReplicaLogDirs(testCtx(t, 10*time.Second), 1, req)
	if err != nil {
		t.Fatal(err)
	}
	rs.Each(func(r kadm.AlterReplicaLogDirsResponse) {
		if r.Err != nil {
			t.Fatalf("%s[%d] to %s: %v", r.Topic, r.Partition, r.Dir, r.Err)
		}
	})
	return to
}

// waitMoved waits until DescribeLogDirs shows every partition in its
// destination with no future replica left; it reports whether a future
// replica was seen in the destination meanwhile.
func waitMoved(t *testing.T, adm *kadm.Client, topic string, to map[int32]string, within time.Duration) (sawFuture bool) {
	t.Helper()
	ts := kadm.TopicsSet{topic: {}}
	for p := range to {
		ts[topic][p] = struct{}{}
	}
	deadline := time.Now().Add(within)
	for {
		described, err := adm.DescribeBrokerLogDirs(testCtx(t, 10*time.Second), 1, ts)
		if err != nil {
			t.Fatal(err)
		}
		futures, moved := 0, 0
		described.EachPartition(func(p kadm.DescribedLogDirPartition) {
			switch {
			case p.IsFuture && p.Dir == to[p.Partition]:
				futures++
			case p.IsFuture:
				t.Errorf("%s[%d] has a future replica in %s, moving to %s", topic, p.Partition, p.Dir, to[p.Partition])
			case p.Dir == to[p.Partition]:
				moved++
			}
		})
		sawFuture = sawFuture || futures > 0
		if futures == 0 && moved == len(to) {
			return sawFuture
		}
		if time.Now().After(deadline) {
			t.Fatalf("not moved within %s: %d moved, %d future replicas", within, moved, futures)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkFilesMoved checks each partition's directory is in its destination
// and, once the replaced log's grace is over, gone from the source.
func checkFilesMoved(t *testing.T, topic string, to map[int32]string, dirs [2]string) {
	t.Helper()
	for p, d := range to {
		name := fmt.Sprintf("%s-%d", topic, p)
		segs, err := filepath.Glob(filepath.Join(d, name, "*.log"))
		if err != nil || len(segs) == 0 {
			t.Fatalf("%s has no segments in %s: %v", name, d, err)
		}
		src := dirs[0]
		if d == dirs[0] {
			src = dirs[1]
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			left := 0
			entries, _ := os.ReadDir(src)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), name) && (e.Name() == name || strings.HasPrefix(e.Name(), name+".")) {
					left++
				}
			}
			if left == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still has %d directories of %s", src, left, name)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// TestAlterReplicaLogDirsMove moves the replicas of a topic between a
// node's two log directories with kadm (AlterReplicaLogDirs, as
// kafka-reassign-partitions.sh --reassignment-json-file with log_dirs
// does) while an acks=all producer runs: DescribeLogDirs shows the future
// replicas while they are filled (the copy is held to 4 MiB/s by
// replica.alter.log.dirs.io.max.bytes.per.second so it lasts), the
// partitions end in the new directory with their files, the old ones are
// deleted, and every acknowledged record is read back once at the offset
// it was acknowledged at, also after a restart.
func TestAlterReplicaLogDirsMove(t *testing.T) {
	c, dirs := startTwoDirs(t, "replica.alter.log.dirs.io.max.bytes.per.second=4194304")
	ctx := testCtx(t, 2*time.Minute)
	adm := c.Admin(t)
	const topic = "moving"
	createTopic(t, adm, topic, 2, "segment.bytes", "262144")
	prefill := c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchMaxBytes(64<<10))
	big := ackLedger{}
	var rs []*kgo.Record
	for i := range 6000 {
		rs = append(rs, &kgo.Record{Partition: int32(i % 2), Value: fmt.Appendf(nil, "prefill-%d-%s", i, incompressible(1000))})
	}
	if err := prefill.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		big[string(r.Value)] = [2]int64{int64(r.Partition), r.Offset}
	}
	from := placement(t, adm, topic, 2)

	sp := startSteadyProducer(ctx, t, c, topic, 2)
	time.Sleep(200 * time.Millisecond)
	started := time.Now()
	to := moveAll(t, adm, topic, from, dirs)
	sawFuture := waitMoved(t, adm, topic, to, time.Minute)
	took := time.Since(started)
	time.Sleep(200 * time.Millisecond)
	acked := sp.finish(t)
	t.Logf("moved %v -> %v in %s (%.1f MiB/s of the %d MiB prefilled; future replicas seen: %v); %d records acknowledged meanwhile",
		from, to, took, 6000*1000/took.Seconds()/(1<<20), 6000*1000>>20, sawFuture, len(acked))
	if !sawFuture {
		t.Fatal("DescribeLogDirs never showed a future replica while the partitions moved")
	}
	if len(acked) == 0 {
		t.Fatal("no record was acknowledged while the partitions moved")
	}
	for v, at := range big {
		acked[v] = at
	}
	checkFilesMoved(t, topic, to, dirs)
	acked.audit(ctx, t, c, topic)

	c.Stop(t, 1)
	c.Restart(t, 1)
	adm = c.Admin(t)
	if after := placement(t, adm, topic, 2); after[0] != to[0] || after[1] != to[1] {
		t.Fatalf("after the restart the partitions are in %v, moved to %v", after, to)
	}
	acked.audit(ctx, t, c, topic)
}

// TestAlterReplicaLogDirsResume: a restart in the middle of a move finds
// the future replica and goes on with it (the copy is held to 64 KiB/s so
// it is still under way); raising
// replica.alter.log.dirs.io.max.bytes.per.second dynamically (kadm
// AlterBrokerConfigs) lets it finish. Moving a replica to the directory
// it is in cancels a move, and errors are Kafka's.
func TestAlterReplicaLogDirsResume(t *testing.T) {
	c, dirs := startTwoDirs(t, "replica.alter.log.dirs.io.max.bytes.per.second=65536")
	ctx := testCtx(t, 2*time.Minute)
	adm := c.Admin(t)
	const topic = "resumed"
	createTopic(t, adm, topic, 2, "segment.bytes", "262144")
	acked := ackLedger{}
	prod := c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchMaxBytes(64<<10))
	acked.produce(ctx, t, prod, incompressible(1000), 2000, 2)
	from := placement(t, adm, topic, 2)
	to := moveAll(t, adm, topic, from, dirs)

	// Partition 1 goes back where it is: its move is cancelled.
	var back kadm.AlterReplicaLogDirsReq
	back.Add(from[1], kadm.TopicsSet{topic: {1: {}}})
	back.Add("/no/such/dir", kadm.TopicsSet{topic: {0: {}}})
	back.Add(dirs[0], kadm.TopicsSet{"no-such-topic": {0: {}}})
	rs, err := adm.AlterBrokerReplicaLogDirs(ctx, 1, back)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]error{fmt.Sprintf("%s/1", topic): nil, fmt.Sprintf("%s/0", topic): kerr.LogDirNotFound, "no-such-topic/0": kerr.UnknownTopicOrPartition}
	rs.Each(func(r kadm.AlterReplicaLogDirsResponse) {
		w := want[fmt.Sprintf("%s/%d", r.Topic, r.Partition)]
		if !errors.Is(r.Err, w) && !(w == nil && r.Err == nil) {
			t.Errorf("%s[%d] to %s: %v, want %v", r.Topic, r.Partition, r.Dir, r.Err, w)
		}
	})
	futures := func() map[int32]string {
		described, err := adm.DescribeBrokerLogDirs(ctx, 1, kadm.TopicsSet{topic: {0: {}, 1: {}}})
		if err != nil {
			t.Fatal(err)
		}
		out := map[int32]string{}
		described.EachPartition(func(p kadm.DescribedLogDirPartition) {
			if p.IsFuture {
				out[p.Partition] = p.Dir
			}
		})
		return out
	}
	if f := futures(); len(f) != 1 || f[0] != to[0] {
		t.Fatalf("future replicas %v, want only partition 0 moving to %s", f, to[0])
	}

	c.Stop(t, 1)
	c.Restart(t, 1)
	adm = c.Admin(t)
	if f := futures(); len(f) != 1 || f[0] != to[0] {
		t.Fatalf("after the restart the future replicas are %v, want partition 0 still moving to %s", f, to[0])
	}
	if after := placement(t, adm, topic, 2); after[0] != from[0] || after[1] != from[1] {
		t.Fatalf("after the restart the current replicas are in %v, want %v", after, from)
	}
	alter := kadm.AlterConfig{Op: kadm.SetConfig, Name: "replica.alter.log.dirs.io.max.bytes.per.second", Value: kadm.StringPtr("1073741824")}
	if rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{alter}, 1); err != nil || rs[0].Err != nil {
		t.Fatalf("raising the copy rate: %v %v", err, rs)
	}
	waitMoved(t, adm, topic, map[int32]string{0: to[0], 1: from[1]}, time.Minute)
	checkFilesMoved(t, topic, map[int32]string{0: to[0]}, dirs)
	prod = c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	acked.produce(ctx, t, prod, "after", 100, 2)
	acked.audit(ctx, t, c, topic)
}

// TestAlterLogDirsRateConfig: replica.alter.log.dirs.io.max.bytes.per.second
// is a dynamic broker config as in Kafka: set per broker with kafka-go's
// IncrementalAlterConfigs and described back (kafka-go and kadm), a bad
// value INVALID_CONFIG.
func TestAlterLogDirsRateConfig(t *testing.T) {
	c, _ := startTwoDirs(t)
	ctx := testCtx(t, 30*time.Second)
	const key = "replica.alter.log.dirs.io.max.bytes.per.second"
	kc := &kafka.Client{Addr: kafka.TCP(c.Addrs()[0]), Timeout: 10 * time.Second}
	ir, err := kc.IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{Resources: []kafka.IncrementalAlterConfigsRequestResource{{
		ResourceType: kafka.ResourceTypeBroker, ResourceName: "1",
		Configs: []kafka.IncrementalAlterConfigsRequestConfig{{Name: key, Value: "1048576"}},
	}}})
	if err == nil && ir.Resources[0].Error != nil {
		err = ir.Resources[0].Error
	}
	if err != nil {
		t.Fatalf("kafka-go IncrementalAlterConfigs: %v", err)
	}
	dr, err := kc.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeBroker, ResourceName: "1", ConfigNames: []string{key},
	}}})
	if err != nil || len(dr.Resources) != 1 || len(dr.Resources[0].ConfigEntries) != 1 {
		t.Fatalf("kafka-go DescribeConfigs: %+v %v", dr, err)
	}
	if e := dr.Resources[0].ConfigEntries[0]; e.ConfigValue != "1048576" || e.ReadOnly {
		t.Fatalf("kafka-go sees %s as %q read-only=%v", key, e.ConfigValue, e.ReadOnly)
	}
	adm := c.Admin(t)
	rs, err := adm.DescribeBrokerConfigs(ctx, 1)
	if err != nil || len(rs) != 1 {
		t.Fatalf("kadm DescribeBrokerConfigs: %v %v", rs, err)
	}
	found := false
	for _, cfg := range rs[0].Configs {
		if cfg.Key == key {
			found = true
			if cfg.MaybeValue() != "1048576" || cfg.Source != kmsg.ConfigSourceDynamicBrokerConfig {
				t.Fatalf("kadm sees %s as %q from %v", key, cfg.MaybeValue(), cfg.Source)
			}
		}
	}
	if !found {
		t.Fatalf("kadm DescribeBrokerConfigs lacks %s", key)
	}
	for _, v := range []string{"-1", "fast"} {
		ar, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: key, Value: kadm.StringPtr(v)}}, 1)
		if err == nil {
			err = ar[0].Err
		}
		if !errors.Is(err, kerr.InvalidConfig) {
			t.Errorf("%s=%s: %v, want INVALID_CONFIG", key, v, err)
		}
	}
}

// TestAlterReplicaLogDirsDeleteWhileMoving: deleting a topic whose replica
// is moving (held to 64 KiB/s) stops the move and deletes both the current
// and the future directory; a topic of the same name made again is empty.
func TestAlterReplicaLogDirsDeleteWhileMoving(t *testing.T) {
	c, dirs := startTwoDirs(t, "replica.alter.log.dirs.io.max.bytes.per.second=65536")
	ctx := testCtx(t, time.Minute)
	adm := c.Admin(t)
	const topic = "doomed"
	createTopic(t, adm, topic, 1, "segment.bytes", "262144")
	prod := c.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchMaxBytes(64<<10))
	ackLedger{}.produce(ctx, t, prod, incompressible(1000), 1000, 1)
	to := moveAll(t, adm, topic, placement(t, adm, topic, 1), dirs)
	c.WaitFor(t, 10*time.Second, "a future log", func() bool {
		m, _ := filepath.Glob(filepath.Join(to[0], topic+"-0.*-future"))
		return len(m) == 1
	})
	if _, err := adm.DeleteTopics(ctx, topic); err != nil {
		t.Fatal(err)
	}
	c.WaitFor(t, 20*time.Second, "both directories of the deleted topic gone", func() bool {
		for _, d := range dirs {
			if m, _ := filepath.Glob(filepath.Join(d, topic+"-0*")); len(m) > 0 {
				return false
			}
		}
		return true
	})
	createTopic(t, adm, topic, 1)
	c.WaitFor(t, 10*time.Second, "the new topic's replica, not moving", func() bool {
		described, err := adm.DescribeBrokerLogDirs(ctx, 1, kadm.TopicsSet{topic: {0: {}}})
		if err != nil {
			return false
		}
		n, futures := 0, 0
		described.EachPartition(func(p kadm.DescribedLogDirPartition) {
			n++
			if p.IsFuture || p.Size != 0 {
				futures++
			}
		})
		return n == 1 && futures == 0
	})
}
