package e2e

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// commitConsumed joins group as a consumer of topic, consumes exactly n
// records, commits them and leaves. It returns the committed offsets,
// checked against the last record consumed in each partition and against
// what the broker answers to OffsetFetch.
//
// Exactly n, not every record polled: one poll may bring a whole
// partition, and a commit of everything polled could then leave no
// partition with records after its committed offset, which checkResume
// needs (it failed so once, with all 356 records of one partition polled
// for n = 333).
func commitConsumed(t testing.TB, addr, group, topic string, n int) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := newClient(t, addr,
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	next := map[int32]int64{}
	var consumed []*kgo.Record
	for len(consumed) < n {
		fs := cl.PollRecords(ctx, n-len(consumed))
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(consumed), n, err)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("group fetch %d: %v", p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if len(consumed) == n {
				return
			}
			if want, ok := next[r.Partition]; ok && r.Offset != want {
				t.Fatalf("consumed %d/%d after %d: offsets must be contiguous", r.Partition, r.Offset, want-1)
			}
			next[r.Partition] = r.Offset + 1
			consumed = append(consumed, r)
		})
	}
	if err := cl.CommitRecords(ctx, consumed...); err != nil {
		t.Fatalf("commit: %v", err)
	}
	committed := map[int32]int64{}
	for p, eo := range cl.CommittedOffsets()[topic] {
		committed[p] = eo.Offset
	}
	if !maps.Equal(committed, next) {
		t.Fatalf("client committed %v, consumed up to %v", committed, next)
	}
	cl.Close() // leaves the group
	if got := fetchCommitted(t, addr, group, topic); !maps.Equal(got, committed) {
		t.Fatalf("OffsetFetch answers %v, committed %v", got, committed)
	}
	return committed
}

// fetchCommitted returns group's committed offsets for topic (OffsetFetch).
func fetchCommitted(t testing.TB, addr, group, topic string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := newAdmin(t, addr).FetchOffsets(ctx, group)
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	out := map[int32]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			t.Fatalf("fetch offsets of %s %s/%d: %v", group, o.Topic, o.Partition, o.Err)
		}
		if o.Topic == topic {
			out[o.Partition] = o.At
		}
	})
	return out
}

// checkResume joins group again and checks that consumption starts at the
// committed offset of every committed partition with records after it;
// partitions without a commit start at the end (nothing is produced
// meanwhile) and fully consumed ones give nothing.
func checkResume(t testing.TB, addr, group, topic string, committed map[int32]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := newAdmin(t, addr).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]int64{}
	for p, off := range committed {
		if end, ok := ends.Lookup(topic, p); ok && off < end.Offset {
			want[p] = off
		}
	}
	if len(want) == 0 {
		t.Fatalf("group %s: committed %v leaves nothing to resume", group, committed)
	}
	// A short MaxWait: the client may start fetching the partitions
	// reset to the end before the committed ones are loaded, and that
	// first Fetch waits MaxWait for data that will not come.
	cl := newClient(t, addr,
		kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
	defer cl.Close()
	first := map[int32]int64{}
	for len(first) < len(want) {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("resuming %s: first offsets %v, want %v: %v", group, first, want, err)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("group fetch %d: %v", p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if _, ok := first[r.Partition]; !ok {
				first[r.Partition] = r.Offset
			}
		})
	}
	if !maps.Equal(first, want) {
		t.Fatalf("group %s resumed at %v, want %v (committed %v)", group, first, want, committed)
	}
}

func fmtOffsets(m map[int32]int64) string {
	return fmt.Sprint(m) // maps print sorted by key
}
