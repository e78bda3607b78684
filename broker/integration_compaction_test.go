package broker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestConsumerOffsetsCompaction commits many offsets for one group and
// watches __consumer_offsets shrink as the log cleaner compacts it to the
// latest commit per partition; the group's offsets are the same before
// the cleaning, after it and after a restart, which reloads them from the
// compacted log. A compacted user topic is compacted the same way and a
// consumer reads each key's latest value from it.
func TestConsumerOffsetsCompaction(t *testing.T) {
	const (
		group   = "compacted-group"
		topic   = "compaction-orders"
		parts   = 4
		commits = 150
	)
	b := brokertest.Start(t, brokertest.WithConfig(
		"offsets.topic.num.partitions=1",
		"offsets.topic.segment.bytes=4096",
		"log.retention.check.interval.ms=50",
		"log.cleaner.backoff.ms=20",
	))
	adm := b.Admin(t)
	ctx := testCtx(t, 60*time.Second)
	createTopic(t, adm, topic, parts)

	// The cleaner runs all along: wait until the group's partition of
	// __consumer_offsets exists before measuring it.
	commit := func(i int) {
		t.Helper()
		offs := kadm.Offsets{}
		for p := int32(0); p < parts; p++ {
			offs.Add(kadm.Offset{Topic: topic, Partition: p, At: int64(i*10) + int64(p), LeaderEpoch: -1})
		}
		resp, err := adm.CommitOffsets(ctx, group, offs)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	var maxSize int64
	for i := 1; i <= commits; i++ {
		commit(i)
		if size := offsetsLogSize(ctx, t, adm); size > maxSize {
			maxSize = size
		}
	}
	checkCommitted(ctx, t, adm, group, topic, parts, commits)

	// Every commit wrote one batch of parts records, about 4 KiB per 20
	// commits: unless the cleaner keeps up it holds many segments. It
	// must end up with the active segment and one cleaned record per
	// partition below it.
	var size int64
	deadline := time.Now().Add(30 * time.Second)
	for {
		size = offsetsLogSize(ctx, t, adm)
		if size <= 4096+1024 || time.Now().After(deadline) {
			break
		}
		commit(commits) // the same offsets again: a little dirt keeps passes going
		time.Sleep(20 * time.Millisecond)
	}
	// The log holds at least commits*parts offset records (about 90
	// bytes each in batches of parts) whatever the cleaner removed:
	// ending below 5 KiB means it was compacted.
	ends, err := adm.ListEndOffsets(ctx, "__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup("__consumer_offsets", 0)
	if size > 4096+1024 || end.Offset < commits*parts {
		t.Fatalf("__consumer_offsets-0 is %d bytes with end offset %d (largest seen %d); want it compacted below %d with at least %d records written",
			size, end.Offset, maxSize, 4096+1024, commits*parts)
	}
	if logs := b.Logs(); !strings.Contains(logs, "cleaned log") || !strings.Contains(logs, "__consumer_offsets-0") {
		t.Fatalf("no cleaning of __consumer_offsets-0 logged:\n%s", logs)
	}
	checkCommitted(ctx, t, adm, group, topic, parts, commits)
	t.Logf("__consumer_offsets-0: %d records written, %d bytes at most while committing, %d after compaction", end.Offset, maxSize, size)

	// A compacted user topic: 50 rounds over 5 keys leave 5 records.
	createTopic(t, adm, "compaction-table", 1, "cleanup.policy", "compact", "segment.bytes", "2048")
	cl := b.Client(t, kgo.DefaultProduceTopic("compaction-table"))
	for round := range 50 {
		var rs []*kgo.Record
		for k := range 5 {
			rs = append(rs, &kgo.Record{Key: fmt.Appendf(nil, "key-%d", k), Value: fmt.Appendf(nil, "round-%d", round)})
		}
		produceSync(t, cl, rs...)
	}
	// Roll past the last round so all of it is cleanable.
	for i := range 30 {
		produceSync(t, cl, &kgo.Record{Key: []byte("filler"), Value: fmt.Appendf(nil, "filler-%d-%0200d", i, 0)})
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		got := consumeAll(ctx, t, b, "compaction-table")
		latest := map[string]string{}
		for _, r := range got {
			if string(r.Key) != "filler" {
				if prev, dup := latest[string(r.Key)]; dup {
					latest[string(r.Key)] = prev + "+" // seen twice: not compacted yet
				} else {
					latest[string(r.Key)] = string(r.Value)
				}
			}
		}
		done := len(latest) == 5
		for k := range 5 {
			done = done && latest[fmt.Sprintf("key-%d", k)] == "round-49"
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("compaction-table not compacted to the last round: %v", latest)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A restart reloads the group from the compacted log.
	b.Restart(t)
	adm = b.Admin(t)
	checkCommitted(testCtx(t, 30*time.Second), t, adm, group, topic, parts, commits)
}

// offsetsLogSize is the size of __consumer_offsets-0 as DescribeLogDirs
// reports it (0 before the topic exists).
func offsetsLogSize(ctx context.Context, t *testing.T, adm *kadm.Client) int64 {
	t.Helper()
	dirs, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	dirs.Each(func(d kadm.DescribedLogDir) {
		if p, ok := d.Topics.Lookup("__consumer_offsets", 0); ok {
			size = p.Size
		}
	})
	return size
}

// checkCommitted fetches the group's offsets: the last commit's, for every
// partition.
func checkCommitted(ctx context.Context, t *testing.T, adm *kadm.Client, group, topic string, parts, last int) {
	t.Helper()
	resp, err := adm.FetchOffsets(ctx, group)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("fetch offsets: %v", err)
	}
	for p := int32(0); p < int32(parts); p++ {
		o, ok := resp.Lookup(topic, p)
		if want := int64(last*10) + int64(p); !ok || o.At != want {
			t.Fatalf("%s committed offset %+v (found %t), want %d", tp(topic, p), o, ok, want)
		}
	}
}

// consumeAll reads a one-partition topic from the start to its end.
func consumeAll(ctx context.Context, t *testing.T, b *brokertest.Broker, topic string) []*kgo.Record {
	t.Helper()
	adm := b.Admin(t)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	cl := b.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	var out []*kgo.Record
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consuming %s: %v", topic, ctx.Err())
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch %s: %v", topic, err) })
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
		if n := len(out); n > 0 && out[n-1].Offset >= end.Offset-1 {
			return out
		}
	}
}
