package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/mirrorit"
	"github.com/strait-io/strait/mirror/admin"
	"github.com/strait-io/strait/storage/record"
)

// TestMirrorCLI runs two `strait serve` processes, a source and a
// destination, and drives a mirror between them with the `strait mirror`
// CLI only: create, start, describe --json until lag 0, stop. The
// destination's copy must be byte-identical to the source's (raw Fetch,
// batch by batch), and a command naming an unknown mirror must exit 1
// with the Kafka error name.
func TestMirrorCLI(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	src, dst := startMirrorPair(t)
	const topic, partitions = "e2e-mirror", 3
	createTopic(t, newAdmin(t, src.kafkaAddr()), topic, partitions)
	n := mirrorProduce(t, ctx, src.kafkaAddr(), topic, partitions, 1000)

	cli := mirrorCLI(t, dst.kafkaAddr())
	cli(0, "create", "m1", "--source-bootstrap", src.kafkaAddr())
	cli(0, "start", "m1", "--topic", topic)
	n += mirrorProduce(t, ctx, src.kafkaAddr(), topic, partitions, 1000)
	srcEnds := mirrorEnds(t, ctx, src.kafkaAddr(), topic)

	var last string
	waitUntil(t, time.Minute, "describe --json: every partition MIRRORING, lag 0, at the source's end", func() (bool, string) {
		out := cli(0, "describe", "m1", "--json")
		var d admin.MirrorDescription
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("describe --json printed %q: %v", out, err)
		}
		last = out
		if len(d.Topics) != 1 || d.Topics[0].Name != topic || len(d.Topics[0].Partitions) != partitions {
			return false, out
		}
		for _, pd := range d.Topics[0].Partitions {
			if pd.State != "MIRRORING" || pd.Lag != 0 || pd.DestinationLogEndOffset != srcEnds[pd.Partition] {
				return false, out
			}
		}
		return true, ""
	})
	t.Logf("describe: %s", strings.Join(strings.Fields(last), " "))
	if dstEnds := mirrorEnds(t, ctx, dst.kafkaAddr(), topic); fmt.Sprint(dstEnds) != fmt.Sprint(srcEnds) {
		t.Fatalf("destination end offsets %v, source %v", dstEnds, srcEnds)
	}

	r := mirrorCompare(t, ctx, src.kafkaAddr(), dst.kafkaAddr(), topic)
	t.Logf("counts: produced=%d %v", n, r)
	for _, e := range r.Examples {
		t.Error(e)
	}
	if !r.OK() || r.Records < int64(n) {
		t.Fatalf("not identical or too few records (produced %d): %v", n, r)
	}

	// stop is the promotion barrier: it returns once every partition is
	// STOPPED, with a per-partition report, after syncing the group
	// offsets one last time.
	commitE2EGroup(t, ctx, newAdmin(t, src.kafkaAddr()), topic)
	if out := cli(0, "stop", "m1", "--topic", topic); !strings.Contains(out, "BARRIER") ||
		!strings.Contains(out, fmt.Sprintf("Stopped %d partitions of mirror m1 at one barrier", partitions)) ||
		!strings.Contains(out, "Group offsets synced at the barrier") {
		t.Errorf("stop printed %q", out)
	} else {
		t.Logf("stop:\n%s", out)
	}
	if got := fetchE2EGroup(t, ctx, newAdmin(t, dst.kafkaAddr()), topic); got != 10 {
		t.Errorf("e2e-g on the destination after the stop: offset %d, want the source's 10", got)
	}
	waitUntil(t, 30*time.Second, "describe: every partition STOPPED", func() (bool, string) {
		out := cli(0, "describe", "m1")
		return strings.Count(out, "STOPPED") == partitions, out
	})
	if msg := cli(1, "describe", "no-such-mirror"); !strings.Contains(msg, "UNKNOWN_CLUSTER_MIRROR") {
		t.Errorf("describe of an unknown mirror printed %q, want UNKNOWN_CLUSTER_MIRROR", msg)
	}
}

// commitE2EGroup commits offset 10 of topic's partition 0 for group e2e-g.
func commitE2EGroup(t *testing.T, ctx context.Context, adm *kadm.Client, topic string) {
	t.Helper()
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: topic, Partition: 0, At: 10, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(ctx, "e2e-g", os); err != nil || resp.Error() != nil {
		t.Fatalf("commit e2e-g: %v %v", err, resp.Error())
	}
}

// fetchE2EGroup is e2e-g's committed offset of topic's partition 0, -1
// if none.
func fetchE2EGroup(t *testing.T, ctx context.Context, adm *kadm.Client, topic string) int64 {
	t.Helper()
	os, err := adm.FetchOffsets(ctx, "e2e-g")
	if err != nil {
		t.Fatalf("fetch e2e-g: %v", err)
	}
	if o, ok := os.Lookup(topic, 0); ok && o.Err == nil {
		return o.At
	}
	return -1
}

// mirrorProduce writes perKind records with a plain (acks=1), an
// idempotent and a zstd idempotent producer, round robin over the
// partitions.
func mirrorProduce(t *testing.T, ctx context.Context, addr, topic string, partitions int32, perKind int) int {
	t.Helper()
	kinds := [][]kgo.Opt{
		{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(kgo.NoCompression())},
		{kgo.ProducerBatchCompression(kgo.NoCompression())},
		{kgo.ProducerBatchCompression(kgo.ZstdCompression())},
	}
	total := 0
	for k, opts := range kinds {
		cl := newClient(t, addr, append([]kgo.Opt{kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerBatchMaxBytes(4 << 10)}, opts...)...)
		var recs []*kgo.Record
		for i := range perKind {
			recs = append(recs, &kgo.Record{Partition: int32(i) % partitions, Value: fmt.Appendf(nil, "kind%d-%06d-%s", k, i, strings.Repeat("x", 40))})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("produce (kind %d): %v", k, err)
		}
		total += len(recs)
	}
	return total
}

func mirrorEnds(t *testing.T, ctx context.Context, addr, topic string) map[int32]int64 {
	t.Helper()
	l, err := newAdmin(t, addr).ListEndOffsets(ctx, topic)
	if err == nil {
		err = l.Error()
	}
	if err != nil {
		t.Fatalf("end offsets of %s at %s: %v", topic, addr, err)
	}
	out := map[int32]int64{}
	l.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// mirrorCompare reads topic from both single-node clusters with raw
// Fetch requests and compares them with the mirrorit checker.
func mirrorCompare(t *testing.T, ctx context.Context, srcAddr, dstAddr, topic string) *mirrorit.Report {
	t.Helper()
	srcID, srcLog := rawBatches(t, ctx, srcAddr, topic)
	dstID, dstLog := rawBatches(t, ctx, dstAddr, topic)
	r := &mirrorit.Report{Topic: topic, Partitions: len(srcLog), SourcePartitions: len(srcLog), DestinationPartitions: len(dstLog),
		SameTopicID: srcID == dstID}
	for p := range int32(len(srcLog)) {
		r.ComparePartition(p, srcLog[p], dstLog[p])
	}
	return r
}

// rawBatches reads every partition of topic from a single-node cluster at
// addr with raw Fetch requests (the batches as stored, byte for byte) up
// to its high watermark, and returns the topic id with them.
func rawBatches(t *testing.T, ctx context.Context, addr, topic string) (kadm.TopicID, map[int32][]record.Batch) {
	t.Helper()
	cl := newClient(t, addr)
	md, err := kadm.NewClient(cl).Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	td := md.Topics[topic]
	out := map[int32][]record.Batch{}
	for p := range int32(len(td.Partitions)) {
		var off, hw int64 = 0, -1
		for hw < 0 || off < hw {
			req := kmsg.NewPtrFetchRequest()
			req.ReplicaID, req.MaxBytes, req.SessionEpoch = -1, 16<<20, -1
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = topic, td.ID
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, off, 8<<20
			rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = -1, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				t.Fatalf("fetch %s/%d at %s: %v", topic, p, addr, err)
			}
			got := resp.Topics[0].Partitions[0]
			if got.ErrorCode != 0 {
				t.Fatalf("fetch %s/%d at %s: %v", topic, p, addr, kerr.ErrorForCode(got.ErrorCode))
			}
			hw = got.HighWatermark
			before := off
			out[p], off, err = mirrorit.AppendBatches(out[p], got.RecordBatches, off)
			if err != nil {
				t.Fatalf("fetch %s/%d at %s: %v", topic, p, addr, err)
			}
			if off == before && off < hw {
				t.Fatalf("fetch %s/%d at %s: no progress at offset %d below the high watermark %d", topic, p, addr, off, hw)
			}
		}
	}
	return td.ID, out
}
