package source_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// TestStraitSourceHeads: MeasureHeads reads the timestamp of the source
// record at each offset asked, from the batch starting there, for each
// partition asked at once (one fetch each: a source leaves a cut first
// batch out of its answer); inside a batch it is the record's own, as a
// consumer reads it; at the source's end there is none, and nothing is
// reported to the driver.
func TestStraitSourceHeads(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	broker := brokertest.Start(t)
	createTopic(t, ctx, broker.Admin(t), "heads", 2, 1)
	produce(t, ctx, []string{broker.Addr()}, "heads", 2, 60)
	src, ev := newSource(t, []string{broker.Addr()})

	type want struct {
		tp     storage.TopicPartition
		offset int64
		ts     int64 // -1: no head
	}
	var asked []want
	for p := range int32(2) {
		tp := storage.TopicPartition{Topic: "heads", Partition: p}
		l := sourceLog(t, broker, tp)
		// A batch past the first, of several records (the producer may
		// send one alone).
		batches := splitBatches(t, readLog(t, l, 0))
		i := slices.IndexFunc(batches[1:], func(b record.Batch) bool { return b.RecordCount() > 1 })
		if i < 0 {
			t.Fatalf("%s: no batch of several records after the first in %d", tp, len(batches))
		}
		b := batches[1+i]
		first := b.BaseTimestamp()
		if b.TimestampType() == record.LogAppendTime {
			first = b.MaxTimestamp()
		}
		if p == 0 {
			asked = append(asked, want{tp, b.BaseOffset(), first})
		} else { // inside the batch: the record's own timestamp, as a consumer reads it
			off := b.BaseOffset() + 1
			asked = append(asked, want{tp, off, consumedTimestamp(t, ctx, broker.Addr(), tp, off)})
		}
	}
	offsets := map[storage.TopicPartition]int64{}
	for _, w := range asked {
		offsets[w.tp] = w.offset
	}
	if err := src.MeasureHeads(ctx, offsets); err != nil {
		t.Fatal(err)
	}
	for _, w := range asked {
		h, ok := src.Head(w.tp)
		if !ok || h.Offset != w.offset || h.Timestamp != w.ts {
			t.Errorf("%s: head %+v %v, want offset %d timestamp %d", w.tp, h, ok, w.offset, w.ts)
		}
		if age := h.AgeAt(w.offset, w.ts+1234); age != 1234 {
			t.Errorf("%s: age %d ms, want 1234", w.tp, age)
		}
		if age := h.AgeAt(w.offset+1, w.ts+1234); age != -1 {
			t.Errorf("%s: age at another offset %d ms, want -1", w.tp, age)
		}
	}

	// At the source's end there is no record: the last head stays.
	tp := asked[0].tp
	end := sourceLog(t, broker, tp).HighWatermark()
	if err := src.MeasureHeads(ctx, map[storage.TopicPartition]int64{tp: end}); err != nil {
		t.Fatal(err)
	}
	if h, _ := src.Head(tp); h.Offset != asked[0].offset {
		t.Errorf("head after asking the end: %+v, want the last one at %d", h, asked[0].offset)
	}
	if errs := ev.errors(tp); len(errs) != 0 {
		t.Errorf("measurements reported errors to the driver: %v", errs)
	}
}

// consumedTimestamp is the timestamp of the record at offset of tp as a
// consumer reads it.
func consumedTimestamp(t *testing.T, ctx context.Context, addr string, tp storage.TopicPartition, offset int64) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		tp.Topic: {tp.Partition: kgo.NewOffset().At(offset)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume %s at %d: %v", tp, offset, err)
		}
		for _, r := range fs.Records() {
			if r.Offset == offset {
				return r.Timestamp.UnixMilli()
			}
		}
	}
}
