package manager

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/index"
	"github.com/strait-io/strait/storage/record"
)

// committedValues is what a read_committed consumer of l sees, as
// "<offset>/<value>", in offset order: the data records below the last stable offset, less
// those of the transactions the log reports aborted (Fetch's
// AbortedTransactions: a transactional batch is dropped when its
// producer has an aborted transaction spanning its offset).
func committedValues(t *testing.T, l *storage.Log) []string {
	t.Helper()
	dec := record.NewDecompressor()
	var out []string
	for off := l.LogStartOffset(); ; {
		fd, err := l.Read(off, 1<<20, storage.FetchTxnCommitted, true)
		if err != nil {
			t.Fatal(err)
		}
		if fd.Records.Size == 0 {
			return out
		}
		buf := make([]byte, fd.Records.Size)
		if err := fd.Records.ReadInto(buf); err != nil {
			t.Fatal(err)
		}
		for _, b := range batchesOf(t, buf) {
			off = b.NextOffset()
			if b.IsControl() || (b.IsTransactional() && slices.ContainsFunc(fd.AbortedTxns, func(a index.AbortedTxn) bool {
				return a.ProducerID == b.ProducerID() && a.FirstOffset <= b.BaseOffset() && b.BaseOffset() <= a.LastOffset
			})) {
				continue
			}
			rr, done, err := dec.OpenRecords(b, 1<<24)
			if err != nil {
				t.Fatal(err)
			}
			for {
				r, err := rr.Next(true)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, fmt.Sprintf("%d/%s", b.BaseOffset()+int64(r.OffsetDelta), r.Value))
			}
			done()
		}
	}
}

// sourceCommittedValues is what a read_committed consumer of the source
// partition sees below end, as "<offset>/<value>", in offset order. It
// appends a plain record to the partition and reads up to it, so the read
// ends whatever the batches below end are (markers hold no records).
func sourceCommittedValues(t *testing.T, ctx context.Context, seeds []string, topic string, p int32, end int64) []string {
	t.Helper()
	const last = "end-of-the-read"
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().AtStart()}}),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte(last)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var out []string
	for done := false; !done; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("source read_committed read %d records, not up to %q: %v", len(out), last, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("source read_committed fetch: %v", err) })
		fs.EachRecord(func(r *kgo.Record) {
			switch {
			case string(r.Value) == last:
				done = true
			case r.Offset < end && !done:
				out = append(out, fmt.Sprintf("%d/%s", r.Offset, r.Value))
			}
		})
	}
	return out
}

// viewCounts compares a destination's read_committed view with the
// source's: committed records missing (lost), records of aborted or
// unfinished transactions visible, records seen twice, and records in a
// different order.
type viewCounts struct{ lost, abortedVisible, duplicates, misordered int }

func compareViews(src, dst []string, aborted func(string) bool) viewCounts {
	var c viewCounts
	seen := map[string]int{}
	for _, v := range dst {
		if seen[v]++; seen[v] == 2 {
			c.duplicates++
		}
		if aborted(v) {
			c.abortedVisible++
		}
	}
	for _, v := range src {
		if seen[v] == 0 {
			c.lost++
		}
	}
	if c == (viewCounts{}) && !slices.Equal(src, dst) {
		c.misordered++
	}
	return c
}
