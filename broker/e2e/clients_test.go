package e2e

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// newClient is a franz-go client for addr, closed at the end of the test.
// Retries back off briefly so a client outlives a broker restart quickly.
func newClient(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	base := []kgo.Opt{
		kgo.SeedBrokers(addr),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		kgo.MetadataMinAge(50 * time.Millisecond),
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func newAdmin(t testing.TB, addr string) *kadm.Client {
	return kadm.NewClient(newClient(t, addr))
}

// createTopic creates topic with partitions partitions and waits until
// every partition has a leader in the broker's metadata.
func createTopic(t testing.TB, adm *kadm.Client, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// stored is one record as read back from the log.
type stored struct {
	partition int32
	offset    int64
	key       string
	value     string
}

// readAll reads topic from offset 0 up to the end offset of every
// partition, as a plain consumer does, and returns the records and the
// end offsets.
func readAll(t testing.TB, addr, topic string) ([]stored, map[int32]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := newAdmin(t, addr)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("list end offsets: %v", err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatalf("list start offsets: %v", err)
	}
	want := map[int32]int64{}
	from := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("end offset of %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		want[o.Partition] = o.Offset
		from[o.Partition] = kgo.NewOffset().At(0)
	})
	starts.Each(func(o kadm.ListedOffset) {
		if o.Err != nil || o.Offset != 0 {
			t.Fatalf("start offset of %s/%d is %d (%v); every record since offset 0 must be kept", o.Topic, o.Partition, o.Offset, o.Err)
		}
	})
	cl := newClient(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: from}))
	defer cl.Close()
	next := map[int32]int64{}
	done := func() bool {
		for p, end := range want {
			if next[p] < end {
				return false
			}
		}
		return true
	}
	var out []stored
	for !done() {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading %s: at %v of %v: %v", topic, next, want, err)
		}
		fs.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("fetch %s/%d: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, stored{r.Partition, r.Offset, string(r.Key), string(r.Value)})
			next[r.Partition] = r.Offset + 1
		})
	}
	return out, want
}
