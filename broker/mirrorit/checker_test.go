package mirrorit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
)

// The identity checker must be able to fail: these tests show it finds a
// changed byte, a changed epoch, a missing and an extra batch, and that a
// faithful copy made by hand (no mirror involved) passes.

func testBatch(t *testing.T, base int64, epoch int32, values ...string) record.Batch {
	t.Helper()
	var recs []record.Record
	for _, v := range values {
		recs = append(recs, record.Record{KeyLen: -1, Value: []byte(v), ValueLen: int32(len(v))})
	}
	b, err := record.Build(record.BatchSpec{BaseOffset: base, PartitionLeaderEpoch: epoch, ProducerID: record.NoProducerID,
		BaseSequence: record.NoSequence, BaseTimestamp: 1_700_000_000_000}, recs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func cloneBatches(bs []record.Batch) []record.Batch {
	out := make([]record.Batch, len(bs))
	for i, b := range bs {
		out[i] = record.Batch(bytes.Clone(b))
	}
	return out
}

func TestComparePartitionCounts(t *testing.T) {
	src := []record.Batch{
		testBatch(t, 0, 0, "a", "b"),
		testBatch(t, 2, 0, "c"),
		testBatch(t, 3, 1, "d", "e", "f"),
		testBatch(t, 10, 1, "g"), // a compaction gap before it
	}
	type counts struct{ batches, mismatches, missing, extra int }
	for _, tc := range []struct {
		name   string
		change func([]record.Batch) []record.Batch
		want   counts
	}{
		{"identical", func(d []record.Batch) []record.Batch { return d }, counts{4, 0, 0, 0}},
		{"one value byte, CRC fixed", func(d []record.Batch) []record.Batch {
			i := bytes.LastIndexByte(d[2], 'e')
			d[2][i] = 'E'
			d[2].SetCRC()
			return d
		}, counts{4, 1, 0, 0}},
		{"one value byte, CRC stale", func(d []record.Batch) []record.Batch {
			d[1][len(d[1])-3] ^= 1
			return d
		}, counts{4, 1, 0, 0}},
		{"partition leader epoch", func(d []record.Batch) []record.Batch {
			d[3].SetPartitionLeaderEpoch(2)
			return d
		}, counts{4, 1, 0, 0}},
		{"last batch missing", func(d []record.Batch) []record.Batch { return d[:3] }, counts{3, 0, 1, 0}},
		{"first batch missing", func(d []record.Batch) []record.Batch { return d[1:] }, counts{3, 0, 1, 0}},
		{"extra batch", func(d []record.Batch) []record.Batch { return append(d, testBatch(t, 11, 1, "h")) }, counts{4, 0, 0, 1}},
		{"batch in the gap", func(d []record.Batch) []record.Batch {
			return append(d[:3:3], testBatch(t, 6, 1, "x"), d[3])
		}, counts{4, 0, 0, 1}},
		{"shifted offsets", func(d []record.Batch) []record.Batch {
			d[3].SetBaseOffset(9)
			return d
		}, counts{3, 0, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Topic: "t", SameTopicID: true}
			r.ComparePartition(0, src, tc.change(cloneBatches(src)))
			got := counts{r.Batches, r.Mismatches, r.Missing, r.Extra}
			if got != tc.want {
				t.Fatalf("counts %+v, want %+v (%v %v)", got, tc.want, r, r.Examples)
			}
			if ok := r.OK(); ok != (tc.want == counts{4, 0, 0, 0}) {
				t.Fatalf("OK() = %v for %v", ok, r)
			}
		})
	}
}

func TestAppendBatches(t *testing.T) {
	a, b, c := testBatch(t, 0, 0, "a", "b"), testBatch(t, 2, 0, "c"), testBatch(t, 3, 0, "d")
	buf := append(append(append([]byte{}, a...), b...), c[:len(c)-5]...) // the last one cut by the size limit
	got, next, err := AppendBatches(nil, buf, 1)                         // from offset 1: inside a
	if err != nil || len(got) != 2 || next != 3 || !bytes.Equal(got[1], b) {
		t.Fatalf("got %d batches, next %d, err %v", len(got), next, err)
	}
	if got, next, err := AppendBatches(nil, buf, 2); err != nil || len(got) != 1 || next != 3 {
		t.Fatalf("from 2: got %d batches, next %d, err %v", len(got), next, err)
	}
	bad := bytes.Clone(buf)
	bad[len(a)+len(b)-2] ^= 0xff
	if _, _, err := AppendBatches(nil, bad, 0); err == nil {
		t.Fatal("a batch with a wrong CRC was accepted")
	}
}

// TestIdentityCheckerAgainstHandCopy: a topic written by every producer
// kind compared with itself is identical; a copy made with raw Produce
// requests of the same batches (same offsets, epochs and bytes, another
// topic id) has 0 mismatches; a copy with one byte changed has exactly 1;
// a copy without its last batch has exactly 1 missing.
func TestIdentityCheckerAgainstHandCopy(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	src := startOne(t, "source")
	cp := startOne(t, "copy")
	const partitions = 3
	src.createTopic(t, ctx, "orders", partitions)
	n := produceMix(t, ctx, src, "orders", partitions, 200, nil)

	self, _, _ := identity(t, ctx, src, src, "orders")
	t.Logf("self: produced=%d %v", n, self)
	assertIdentical(t, self, int64(n))

	orig := readTopic(t, ctx, src, "orders")
	for _, topic := range []string{"copy", "altered", "short"} {
		cp.createTopic(t, ctx, topic, partitions)
	}
	altered := false
	for p := range int32(partitions) {
		for i, b := range orig.partitions[p] {
			copyBatch(t, ctx, cp, "copy", p, b)
			last := i == len(orig.partitions[p])-1
			if !(p == 2 && last) {
				copyBatch(t, ctx, cp, "short", p, b)
			}
			if p == 1 && !altered && b.Compression() == record.CodecNone {
				if at := bytes.Index(b, []byte("lazy")); at > 0 {
					b = record.Batch(bytes.Clone(b))
					b[at] = 'L'
					b.SetCRC()
					altered = true
				}
			}
			copyBatch(t, ctx, cp, "altered", p, b)
		}
	}
	if !altered {
		t.Fatal("no uncompressed batch on partition 1 to alter")
	}
	for _, tc := range []struct {
		topic                      string
		mismatches, missing, extra int
	}{{"copy", 0, 0, 0}, {"altered", 1, 0, 0}, {"short", 0, 1, 0}} {
		r := compareLogs(tc.topic, orig, readTopic(t, ctx, cp, tc.topic))
		t.Logf("hand copy %v", r)
		if r.SameTopicID || r.SourcePartitions != partitions || r.DestinationPartitions != partitions {
			t.Errorf("%s: topic id or partition counts: %v", tc.topic, r)
		}
		if r.Mismatches != tc.mismatches || r.Missing != tc.missing || r.Extra != tc.extra || r.Batches == 0 {
			t.Errorf("%s: %v %v, want mismatches=%d missing=%d extra=%d", tc.topic, r, r.Examples, tc.mismatches, tc.missing, tc.extra)
		}
		if r.OK() {
			t.Errorf("%s: OK() with different topic ids", tc.topic)
		}
	}
}

// copyBatch produces one batch as it is with a raw Produce (acks=all) to
// topic's partition p of s, and fails the test unless it lands at the
// batch's base offset.
func copyBatch(t *testing.T, ctx context.Context, s *side, topic string, p int32, b record.Batch) {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	c := record.Batch(bytes.Clone(b))
	c.SetBaseOffset(0) // a producer's batch starts at 0; the leader assigns offsets
	rp.Partition, rp.Records = p, c
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	off, err := produceRaw(ctx, s.client(t), s.leader(topic, p), req)
	if err != nil {
		t.Fatalf("copy %s/%d offset %d: %v", topic, p, b.BaseOffset(), err)
	}
	if off != b.BaseOffset() {
		t.Fatalf("copy %s/%d: batch of offset %d stored at %d", topic, p, b.BaseOffset(), off)
	}
}

// produceRequest is a Produce of one batch to one partition.
func produceRequest(topic string, part int32, acks int16, timeoutMs int32, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = acks, timeoutMs
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = part, batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// produceRaw sends a one-partition Produce to broker leader and returns
// the base offset, or the partition's error as a *kerr.Error (its Code is
// what the broker answered, whatever name kerr gives it).
func produceRaw(ctx context.Context, cl *kgo.Client, leader int32, req *kmsg.ProduceRequest) (int64, error) {
	kresp, err := cl.Broker(int(leader)).Request(ctx, req)
	if err != nil {
		return -1, err
	}
	resp := kresp.(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return -1, fmt.Errorf("produce answer for %d topics", len(resp.Topics))
	}
	pr := resp.Topics[0].Partitions[0]
	if pr.ErrorCode != 0 {
		ke := kerr.ErrorForCode(pr.ErrorCode)
		var e *kerr.Error
		if !errors.As(ke, &e) {
			e = &kerr.Error{Message: fmt.Sprintf("code %d", pr.ErrorCode), Code: pr.ErrorCode}
		}
		return -1, e
	}
	return pr.BaseOffset, nil
}
