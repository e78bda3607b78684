package broker_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestProduceConsumeCodecs produces keyed records with headers and
// explicit timestamps across three partitions with every codec, and reads
// them back: every field round trips, the offsets are dense from 0, and the
// batches come back compressed as they were produced (stored as produced,
// DESIGN.md §4).
func TestProduceConsumeCodecs(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	const partitions, perPartition = 3, 40
	codecs := []struct {
		name  string
		codec kgo.CompressionCodec
		attr  uint8 // the batch attributes' compression bits
	}{
		{"none", kgo.NoCompression(), 0},
		{"gzip", kgo.GzipCompression(), 1},
		{"snappy", kgo.SnappyCompression(), 2},
		{"lz4", kgo.Lz4Compression(), 3},
		{"zstd", kgo.ZstdCompression(), 4},
	}
	base := time.UnixMilli(1_700_000_000_000)
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			topic := "codec-" + c.name
			createTopic(t, adm, topic, partitions)
			prod := b.Client(t, kgo.ProducerBatchCompression(c.codec), kgo.RecordPartitioner(kgo.ManualPartitioner()),
				kgo.ProducerLinger(5*time.Millisecond))
			var want []*kgo.Record
			for i := 0; i < partitions*perPartition; i++ {
				r := &kgo.Record{
					Topic:     topic,
					Partition: int32(i % partitions),
					Key:       []byte(fmt.Sprintf("key-%d", i)),
					// Compressible values, so each codec really shrinks them.
					Value:     bytes.Repeat([]byte(fmt.Sprintf("value-%d;", i)), 20),
					Timestamp: base.Add(time.Duration(i) * time.Millisecond),
					Headers:   []kgo.RecordHeader{{Key: "h1", Value: []byte(fmt.Sprint(i))}, {Key: "empty", Value: nil}},
				}
				want = append(want, r)
			}
			produceSync(t, prod, want...)

			var mu sync.Mutex
			codecsSeen := map[uint8]int{}
			got := consumeN(t, b, len(want), []string{topic}, kgo.WithHooks(batchHook(func(m kgo.FetchBatchMetrics) {
				mu.Lock()
				codecsSeen[m.CompressionType]++
				mu.Unlock()
			})))
			if len(got) != len(want) {
				t.Fatalf("consumed %d records, want %d", len(got), len(want))
			}
			next := map[int32]int64{}
			for _, r := range got {
				if r.Offset != next[r.Partition] {
					t.Fatalf("%s: offset %d, want %d", tp(topic, r.Partition), r.Offset, next[r.Partition])
				}
				next[r.Partition]++
				// Record i went to partition i%3 at offset i/3.
				w := want[int(r.Offset)*partitions+int(r.Partition)]
				if !bytes.Equal(r.Key, w.Key) || !bytes.Equal(r.Value, w.Value) || !r.Timestamp.Equal(w.Timestamp) {
					t.Fatalf("%s@%d: key %q ts %v, want key %q ts %v (value equal: %v)", tp(topic, r.Partition), r.Offset,
						r.Key, r.Timestamp, w.Key, w.Timestamp, bytes.Equal(r.Value, w.Value))
				}
				if len(r.Headers) != 2 || r.Headers[0].Key != "h1" || string(r.Headers[0].Value) != string(w.Headers[0].Value) ||
					r.Headers[1].Key != "empty" || len(r.Headers[1].Value) != 0 {
					t.Fatalf("%s@%d: headers %v, want %v", tp(topic, r.Partition), r.Offset, r.Headers, w.Headers)
				}
			}
			for p := int32(0); p < partitions; p++ {
				if next[p] != perPartition {
					t.Fatalf("%s holds %d records, want %d", tp(topic, p), next[p], perPartition)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(codecsSeen) != 1 || codecsSeen[c.attr] == 0 {
				t.Fatalf("fetched batches by compression type %v, want all %d", codecsSeen, c.attr)
			}
		})
	}
}

// batchHook adapts a function to kgo's HookFetchBatchRead.
type batchHook func(kgo.FetchBatchMetrics)

func (h batchHook) OnFetchBatchRead(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.FetchBatchMetrics) {
	h(m)
}

// TestConsumeFromOffsets starts consumers at exact offsets, at the end,
// relative to the end and by timestamp, and checks the first record each
// gets.
func TestConsumeFromOffsets(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	const topic, n = "offsets", 100
	createTopic(t, adm, topic, 2)
	prod := b.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	base := time.UnixMilli(1_700_000_000_000)
	var rs []*kgo.Record
	for i := 0; i < n; i++ {
		rs = append(rs, &kgo.Record{Topic: topic, Partition: 1, Value: []byte(fmt.Sprint(i)), Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	produceSync(t, prod, rs...)

	for _, tc := range []struct {
		name      string
		offset    kgo.Offset
		wantFirst int64
		wantCount int
	}{
		{"exact 37", kgo.NewOffset().At(37), 37, n - 37},
		{"start", kgo.NewOffset().AtStart(), 0, n},
		{"end minus 5", kgo.NewOffset().AtEnd().Relative(-5), n - 5, 5},
		{"after timestamp of 60", kgo.NewOffset().AfterMilli(base.Add(60 * time.Second).UnixMilli()), 60, n - 60},
		{"between timestamps", kgo.NewOffset().AfterMilli(base.Add(80*time.Second).UnixMilli() - 1), 80, n - 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := b.Client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {1: tc.offset}}))
			got := pollN(testCtx(t, 20*time.Second), t, cl, tc.wantCount)
			if len(got) != tc.wantCount || got[0].Offset != tc.wantFirst || string(got[0].Value) != fmt.Sprint(tc.wantFirst) ||
				got[len(got)-1].Offset != n-1 {
				t.Fatalf("got %d records from %d to %d, want %d from %d to %d", len(got), got[0].Offset, got[len(got)-1].Offset,
					tc.wantCount, tc.wantFirst, n-1)
			}
		})
	}
}

// TestReadCommittedSeesNonTransactionalData: with no transactions, the
// last stable offset is the high watermark, so a read_committed consumer
// reads exactly what a read_uncommitted one does.
func TestReadCommittedSeesNonTransactionalData(t *testing.T) {
	b := brokertest.Start(t)
	const topic = "rc"
	createTopic(t, b.Admin(t), topic, 3)
	prod := b.Client(t)
	var rs []*kgo.Record
	for i := 0; i < 90; i++ {
		rs = append(rs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint(i % 7)), Value: []byte(fmt.Sprint(i))})
	}
	produceSync(t, prod, rs...)
	rc := consumeN(t, b, len(rs), []string{topic}, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	ru := consumeN(t, b, len(rs), []string{topic}, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	if len(rc) != 90 || len(ru) != 90 {
		t.Fatalf("read_committed read %d records, read_uncommitted %d; want 90 each", len(rc), len(ru))
	}
	seen := map[string]int{}
	for _, r := range rc {
		seen[string(r.Value)]++
	}
	for i := 0; i < 90; i++ {
		if seen[fmt.Sprint(i)] != 1 {
			t.Fatalf("read_committed saw value %d %d times", i, seen[fmt.Sprint(i)])
		}
	}
}

// TestProduceAcks produces with acks=0, 1 and all (-1) from
// non-idempotent producers and reads every record back.
func TestProduceAcks(t *testing.T) {
	b := brokertest.Start(t)
	const topic, n = "acks", 30
	createTopic(t, b.Admin(t), topic, 1)
	for _, acks := range []kgo.Acks{kgo.NoAck(), kgo.LeaderAck(), kgo.AllISRAcks()} {
		cl := b.Client(t, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(acks), kgo.DisableIdempotentWrite())
		var rs []*kgo.Record
		for i := 0; i < n/3; i++ {
			rs = append(rs, kgo.StringRecord(fmt.Sprint(i)))
		}
		produceSync(t, cl, rs...)
	}
	// acks=0 answers nothing, so wait for the records to be there.
	got := consumeN(t, b, n, []string{topic})
	if len(got) != n || got[n-1].Offset != n-1 {
		t.Fatalf("read %d records ending at %d, want %d ending at %d", len(got), got[len(got)-1].Offset, n, n-1)
	}
}
