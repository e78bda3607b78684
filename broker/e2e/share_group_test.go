package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestShareGroup: the strait binary serves KIP-932 share groups to
// franz-go's share consumer as a user runs it. Three consumers share a
// topic's records, each accepted once; after a SIGKILL of the broker the
// share group, its share-partition state (in __share_group_state) and the
// accepts survive: new consumers of the group get only the records
// produced since, and none accepted before.
func TestShareGroup(t *testing.T) {
	const topic, group, partitions, records = "share-e2e", "share-e2e-group", 3, 300
	n := newNode(t, "group.share.heartbeat.interval.ms=1000", "group.share.min.heartbeat.interval.ms=1000")
	n.start()
	adm := newAdmin(t, n.kafkaAddr())
	createTopic(t, adm, topic, partitions)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	var mu sync.Mutex
	seen := map[string]int{}
	consume := func(name string, stop <-chan struct{}, wg *sync.WaitGroup) *kgo.Client {
		cl := newClient(t, n.kafkaAddr(), kgo.ClientID(name), kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(100*time.Millisecond))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
				fs := cl.PollFetches(pctx)
				pcancel()
				fs.EachRecord(func(r *kgo.Record) {
					r.Ack(kgo.AckAccept)
					mu.Lock()
					seen[string(r.Value)]++
					mu.Unlock()
				})
			}
		}()
		return cl
	}
	count := func(prefix string) (distinct, deliveries int) {
		mu.Lock()
		defer mu.Unlock()
		for i := 0; i < records; i++ {
			if c := seen[fmt.Sprintf("%s-%d", prefix, i)]; c > 0 {
				distinct++
				deliveries += c
			}
		}
		return distinct, deliveries
	}
	produce := func(prefix string) {
		t.Helper()
		prod := newClient(t, n.kafkaAddr(), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
		var rs []*kgo.Record
		for i := range records {
			rs = append(rs, kgo.StringRecord(fmt.Sprintf("%s-%d", prefix, i)))
		}
		if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// waitStarted waits until every partition has a share-partition start
	// offset: from then on, records produced are the group's (its
	// share.auto.offset.reset is latest, Kafka's default).
	waitStarted := func() {
		t.Helper()
		for {
			offs, err := adm.DescribeShareGroupOffsets(ctx, group)
			started := 0
			if err == nil {
				for _, o := range offs[group].Offsets[topic] {
					if o.Err == nil && o.StartOffset >= 0 {
						started++
					}
				}
			}
			if started == partitions {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("the share group never started on every partition: %v", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitAll := func(prefix string) {
		t.Helper()
		for {
			if d, _ := count(prefix); d == records {
				return
			}
			if ctx.Err() != nil {
				d, _ := count(prefix)
				t.Fatalf("%d of %d %s records consumed", d, records, prefix)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// stored waits until the start offsets passed every record: the
	// accepts are in __share_group_state.
	stored := func(want int64) {
		t.Helper()
		for {
			offs, err := adm.DescribeShareGroupOffsets(ctx, group)
			sum := int64(0)
			if err == nil {
				for _, o := range offs[group].Offsets[topic] {
					sum += o.StartOffset
				}
			}
			if sum == want {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("start offsets add up to %d, want %d (%v)", sum, want, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var first []*kgo.Client
	for _, name := range []string{"a", "b", "c"} {
		first = append(first, consume(name, stop, &wg))
	}
	waitStarted()
	produce("first")
	waitAll("first")
	stored(records)
	described, err := adm.DescribeShareGroups(ctx, group)
	if err != nil || len(described[group].Members) != 3 {
		t.Fatalf("DescribeShareGroups: %+v %v, want 3 members", described[group], err)
	}
	close(stop)
	wg.Wait()
	if d, deliveries := count("first"); d != records || deliveries != records {
		t.Fatalf("first records: %d distinct of %d, %d deliveries: each should be delivered once", d, records, deliveries)
	}

	// The first consumers leave (a member that just vanished would keep
	// its share of the partitions until its session expired), then the
	// broker dies.
	for _, cl := range first {
		cl.Close()
	}
	n.kill()
	n.start()
	adm = newAdmin(t, n.kafkaAddr())
	stored(records) // the state survived the kill
	stop = make(chan struct{})
	for _, name := range []string{"d", "e", "f"} {
		consume(name, stop, &wg)
	}
	produce("second")
	waitAll("second")
	close(stop)
	wg.Wait()
	if d, deliveries := count("first"); deliveries != records {
		t.Fatalf("after the restart, records accepted before it were delivered again: %d deliveries of %d records", deliveries, d)
	}
	lost := records - func() int { d, _ := count("second"); return d }()
	t.Logf("share group over a SIGKILL: lost %d, accepted records delivered again 0", lost)
}
