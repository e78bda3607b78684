package manager

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// startKfake starts franz-go's fake cluster as the source with a topic.
func startKfake(t *testing.T, topic string, partitions int32, opts ...kfake.Opt) (*kfake.Cluster, storage.TopicID) {
	t.Helper()
	kc, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	if err := kc.CreateTopic(topic, partitions, nil); err != nil {
		t.Fatal(err)
	}
	return kc, storage.TopicID(kc.TopicInfo(topic).TopicID)
}

// produce writes n records to each partition of topic, in batches of 10
// with the given codec, and returns the count.
func produce(t *testing.T, ctx context.Context, seeds []string, topic string, partitions int32, n int, codec kgo.CompressionCodec) int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(codec), kgo.ProducerLinger(2*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	total := 0
	for p := range partitions {
		for i := 0; i < n; i += 10 {
			var recs []*kgo.Record
			for j := i; j < min(i+10, n); j++ {
				recs = append(recs, &kgo.Record{Partition: p, Key: fmt.Appendf(nil, "k%d", j),
					Value: bytes.Repeat(fmt.Appendf(nil, "value %d;", j), 1+j%5)})
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
			total += len(recs)
		}
	}
	return total
}

// sourceBatches reads a source partition's batches from 0 to its high
// watermark as a plain consumer.
func sourceBatches(t *testing.T, ctx context.Context, kc *kfake.Cluster, topic string, p int32, id storage.TopicID) []record.Batch {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	hw := kc.PartitionInfo(topic, p).HighWatermark
	var out []record.Batch
	for off := int64(0); off < hw; {
		req := kmsg.NewPtrFetchRequest()
		req.MaxWaitMillis, req.MaxBytes = 10, 1<<20
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, off, 1<<20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl.Broker(int(kc.LeaderFor(topic, p))))
		if err != nil {
			t.Fatal(err)
		}
		d := resp.Topics[0].Partitions[0]
		if d.ErrorCode != 0 {
			t.Fatalf("source fetch: %v", kerr.ErrorForCode(d.ErrorCode))
		}
		bs := batchesOf(t, d.RecordBatches)
		if len(bs) == 0 {
			t.Fatalf("source fetch at %d below %d: no data", off, hw)
		}
		out = append(out, bs...)
		off = bs[len(bs)-1].NextOffset()
	}
	return out
}

// localBatches reads a local log's batches.
func localBatches(t *testing.T, l *storage.Log) []record.Batch {
	t.Helper()
	var out []record.Batch
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		info, err := l.Read(off, 1<<20, storage.FetchLogEnd, true)
		if err != nil {
			t.Fatal(err)
		}
		if info.Records.Size == 0 {
			break
		}
		buf := make([]byte, info.Records.Size)
		if err := info.Records.ReadInto(buf); err != nil {
			t.Fatal(err)
		}
		bs := batchesOf(t, buf)
		out = append(out, bs...)
		off = bs[len(bs)-1].NextOffset()
	}
	return out
}

func batchesOf(t *testing.T, data []byte) []record.Batch {
	t.Helper()
	var out []record.Batch
	for len(data) >= record.LogOverhead {
		size := record.LogOverhead + int(record.Batch(data).BatchLength())
		if len(data) < size {
			break
		}
		b := record.Batch(data[:size])
		if !b.ValidCRC() {
			t.Fatalf("batch at %d has a bad CRC", b.BaseOffset())
		}
		out = append(out, b)
		data = data[size:]
	}
	return out
}

// compareLogs returns how many batches dst has and how many of the first
// len(src) differ from the source's, byte for byte.
func compareLogs(src, dst []record.Batch) (count, mismatches int) {
	for i, b := range src {
		if i >= len(dst) || !bytes.Equal(b, dst[i]) {
			mismatches++
		}
	}
	return len(dst), mismatches
}
