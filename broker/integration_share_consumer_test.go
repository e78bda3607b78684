package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// shareLedger counts what share consumers were given and what they
// accepted, per record (partition, offset).
type shareLedger struct {
	mu        sync.Mutex
	accepted  map[[2]int64]int   // times accepted
	delivered map[[2]int64]int32 // highest delivery count seen
	// held maps a record to the consumer holding it at delivery count 1;
	// a second holder at count 1 is a record given to two at once.
	firstHolder map[[2]int64]string
	twice       int
}

func newShareLedger() *shareLedger {
	return &shareLedger{accepted: map[[2]int64]int{}, delivered: map[[2]int64]int32{}, firstHolder: map[[2]int64]string{}}
}

func (l *shareLedger) saw(who string, r *kgo.Record, accept bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := [2]int64{int64(r.Partition), r.Offset}
	if dc := r.DeliveryCount(); dc > l.delivered[k] {
		l.delivered[k] = dc
	}
	if r.DeliveryCount() == 1 {
		if h, ok := l.firstHolder[k]; ok && h != who {
			l.twice++
		}
		l.firstHolder[k] = who
	}
	if accept {
		l.accepted[k]++
	}
}

func (l *shareLedger) acceptedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.accepted)
}

// shareConsumer is a kgo share-group consumer of topic.
func shareConsumer(t *testing.T, seeds []string, group, topic string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ShareGroup(group), kgo.ConsumeTopics(topic),
		kgo.FetchMaxWait(200 * time.Millisecond)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// acceptAll polls consumers (named c0, c1...) each on its own goroutine
// until the returned stop is called, accepting every record and handing
// it to saw first.
func acceptAll(ctx context.Context, consumers []*kgo.Client, saw func(who string, r *kgo.Record)) (stop func()) {
	var wg sync.WaitGroup
	done := make(chan struct{})
	for i, c := range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			who := fmt.Sprintf("c%d", i)
			for {
				select {
				case <-done:
					return
				default:
				}
				pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				fs := c.PollFetches(pctx)
				cancel()
				fs.EachRecord(func(r *kgo.Record) {
					r.Ack(kgo.AckAccept)
					saw(who, r)
				})
			}
		}()
	}
	return func() { close(done); wg.Wait() }
}

// waitShareStarted polls consumers until every partition of topic has a
// share-partition start offset for group (its leader loaded it: records
// produced from now on are the group's).
func waitShareStarted(t *testing.T, ctx context.Context, adm *kadm.Client, group, topic string, partitions int, consumers ...*kgo.Client) {
	t.Helper()
	for {
		described, err := adm.DescribeShareGroupOffsets(ctx, group)
		if err == nil {
			started := 0
			for _, o := range described[group].Offsets[topic] {
				if o.Err == nil && o.StartOffset >= 0 {
					started++
				}
			}
			if started == partitions {
				return
			}
		}
		for _, c := range consumers {
			pctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			c.PollFetches(pctx)
			cancel()
		}
		if ctx.Err() != nil {
			t.Fatalf("the share group %s never started on every partition of %s (last error %v)", group, topic, err)
		}
	}
}

// TestShareConsumersKgo: three franz-go share consumers of one group, as
// a user runs them (kgo.ShareGroup, defaults), read a 6-partition topic
// together: every record produced after they start is accepted, none is
// lost, none is given to two consumers at once; ListGroups and
// DescribeShareGroups show the group with its three members.
func TestShareConsumersKgo(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	b := brokertest.Start(t)
	adm := b.Admin(t)
	const topic, group, partitions, perPartition = "work", "workers", 6, 100
	createTopic(t, adm, topic, partitions)

	ledger := newShareLedger()
	var consumers []*kgo.Client
	for i := 0; i < 3; i++ {
		consumers = append(consumers, shareConsumer(t, []string{b.Addr()}, group, topic))
	}
	waitShareStarted(t, ctx, adm, group, topic, partitions, consumers...)

	prod := b.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < perPartition; i++ {
			prod.Produce(ctx, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%d-%d", p, i)}, nil)
		}
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	stop := acceptAll(ctx, consumers, func(who string, r *kgo.Record) { ledger.saw(who, r, true) })
	total := partitions * perPartition
	for ledger.acceptedCount() < total && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	lost := total - ledger.acceptedCount()
	t.Logf("share consumers: %d records produced, %d accepted, lost %d, given to two at once %d", total, ledger.acceptedCount(), lost, ledger.twice)
	if lost != 0 || ledger.twice != 0 {
		t.Fatalf("lost %d, given to two consumers at once %d", lost, ledger.twice)
	}

	listed, err := adm.ListGroupsByType(ctx, []string{"share"})
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := listed[group]; !ok || l.GroupType != "share" || l.State != "Stable" {
		t.Fatalf("ListGroups: %+v (present %t), want a Stable share group", l, ok)
	}
	described, err := adm.DescribeShareGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if d := described[group]; d.Err != nil || len(d.Members) != 3 {
		t.Fatalf("DescribeShareGroups: %+v, want 3 members", d)
	}
	// Every accepted record is done with: the start offsets reached the
	// end of each partition.
	offs, err := adm.DescribeShareGroupOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for p, o := range offs[group].Offsets[topic] {
		if o.StartOffset != perPartition {
			t.Errorf("partition %d start offset %d, want %d", p, o.StartOffset, perPartition)
		}
	}
}

// TestShareRedeliveryKgo: with franz-go share consumers, records a
// consumer acquires and then sits on go to another member once their
// acquisition lock runs out (group.share.record.lock.duration.ms), with
// their delivery count raised; and a record every delivery releases is
// archived after group.share.delivery.count.limit deliveries, never
// delivered again, while the records after it are.
func TestShareRedeliveryKgo(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	b := brokertest.Start(t, brokertest.WithConfig(
		"group.share.min.record.lock.duration.ms=1000",
		"group.share.record.lock.duration.ms=1000",
		"group.share.delivery.count.limit=3",
	))
	adm := b.Admin(t)
	prod := b.Client(t)
	produce := func(topic string, values ...string) {
		t.Helper()
		for _, v := range values {
			if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	poll := func(c *kgo.Client) kgo.Fetches {
		pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		return c.PollFetches(pctx)
	}

	t.Run("lock timeout", func(t *testing.T) {
		const topic, group, n = "slow", "slow-workers", 10
		createTopic(t, adm, topic, 1)
		a := shareConsumer(t, []string{b.Addr()}, group, topic)
		waitShareStarted(t, ctx, adm, group, topic, 1, a)
		var values []string
		for i := 0; i < n; i++ {
			values = append(values, fmt.Sprint(i))
		}
		produce(topic, values...)
		// Measured from before a's fetch, so before its records were
		// acquired: their locks cannot run out before start + 1 s.
		start := time.Now()
		held := map[int64]bool{}
		for len(held) == 0 && ctx.Err() == nil {
			poll(a).EachRecord(func(r *kgo.Record) { held[r.Offset] = true })
		}
		// a stops polling and holds what it got; b joins and, once the
		// locks run out, gets those records again.
		bc := shareConsumer(t, []string{b.Addr()}, group, topic)
		accepted := map[int64]int32{}
		for len(accepted) < n && ctx.Err() == nil {
			poll(bc).EachRecord(func(r *kgo.Record) {
				r.Ack(kgo.AckAccept)
				accepted[r.Offset] = r.DeliveryCount()
			})
		}
		if len(accepted) != n {
			t.Fatalf("b accepted %d of %d records", len(accepted), n)
		}
		for off := range held {
			if accepted[off] < 2 {
				t.Errorf("offset %d, held by a, reached b at delivery %d, want 2 or more", off, accepted[off])
			}
		}
		if took := time.Since(start); took < 900*time.Millisecond {
			t.Errorf("b got a's records after %v, before their 1 s lock ran out", took)
		}
		t.Logf("a held %d records; b got them after their locks ran out", len(held))
	})

	t.Run("delivery count limit", func(t *testing.T) {
		const topic, group = "poison", "poison-workers"
		createTopic(t, adm, topic, 1)
		c := shareConsumer(t, []string{b.Addr()}, group, topic)
		waitShareStarted(t, ctx, adm, group, topic, 1, c)
		produce(topic, "poison")
		var poisonDeliveries []int32
		goodAccepted := false
		producedGood := false
		for !goodAccepted && ctx.Err() == nil {
			poll(c).EachRecord(func(r *kgo.Record) {
				if string(r.Value) == "poison" {
					poisonDeliveries = append(poisonDeliveries, r.DeliveryCount())
					r.Ack(kgo.AckRelease)
					return
				}
				r.Ack(kgo.AckAccept)
				goodAccepted = true
			})
			if len(poisonDeliveries) >= 3 && !producedGood {
				produce(topic, "good")
				producedGood = true
			}
		}
		// A last poll sends the accept of "good".
		if err := c.FlushAcks(ctx); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(poisonDeliveries) != "[1 2 3]" {
			t.Fatalf("the released record was delivered %v, want [1 2 3] (limit 3) and never again", poisonDeliveries)
		}
		offs, err := adm.DescribeShareGroupOffsets(ctx, group)
		if err != nil {
			t.Fatal(err)
		}
		if o := offs[group].Offsets[topic][0]; o.StartOffset != 2 {
			t.Fatalf("start offset %d after the poison record was archived and the good one accepted, want 2", o.StartOffset)
		}
	})
}

// TestShareConsumersFailoverKgo: three franz-go share consumers read a
// replicated topic on three nodes; the node coordinating their group (and
// leading some of the topic's and __share_group_state's partitions) is
// killed mid-way. The group, the share partitions and their state move to
// the other nodes and the consumers carry on: every record produced,
// before and after the kill, is accepted (lost 0).
func TestShareConsumersFailoverKgo(t *testing.T) {
	ctx := testCtx(t, 120*time.Second)
	c := brokertest.StartCluster(t, 3)
	cl := rawClient(ctx, t, c)
	adm := kadm.NewClient(cl)
	const topic, group, partitions, perRound = "work3", "workers3", 6, 300
	createReplicatedTopic(t, adm, topic, partitions, 3)
	c.WaitForISR(t, topic, 3, 30*time.Second)

	var consumers []*kgo.Client
	for i := 0; i < 3; i++ {
		consumers = append(consumers, shareConsumer(t, c.Addrs(), group, topic))
	}
	waitShareStarted(t, ctx, adm, group, topic, partitions, consumers...)

	prod := c.Client(t)
	produced := 0
	produce := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			prod.Produce(ctx, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "%d", produced+i)}, func(_ *kgo.Record, err error) {
				if err != nil {
					t.Errorf("produce: %v", err)
				}
			})
		}
		if err := prod.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		produced += n
	}

	ledger := newShareLedger()
	values := map[string]int{} // times each value was delivered
	var vmu sync.Mutex
	stop := acceptAll(ctx, consumers, func(who string, r *kgo.Record) {
		ledger.saw(who, r, true)
		vmu.Lock()
		values[string(r.Value)]++
		vmu.Unlock()
	})
	accepted := func() int {
		vmu.Lock()
		defer vmu.Unlock()
		return len(values)
	}
	produce(perRound)
	c.WaitFor(t, 60*time.Second, "the first records to be consumed", func() bool { return accepted() >= perRound/2 })

	// The accepts of the first records are stored: the share-partition
	// start offsets moved past them.
	c.WaitFor(t, 30*time.Second, "the first records' accepts to be stored", func() bool {
		offs, err := adm.DescribeShareGroupOffsets(ctx, group)
		if err != nil {
			return false
		}
		sum := int64(0)
		for _, o := range offs[group].Offsets[topic] {
			sum += o.StartOffset
		}
		return sum == int64(accepted())
	})
	victim := shareCoordinatorOf(ctx, t, cl, group)
	c.Kill(t, victim)
	t.Logf("killed node %d, the group's coordinator, after %d of %d records", victim, accepted(), produced)
	produce(perRound)
	c.WaitFor(t, 90*time.Second, "every record to be accepted", func() bool { return accepted() == produced })
	stop()

	lost := produced - accepted()
	// The records accepted before the kill, their accepts stored, are
	// done with: delivering one again is a duplicate. Records in flight
	// at the kill may come again (at-least-once), and are only counted.
	duplicates, again := 0, 0
	vmu.Lock()
	for v, n := range values {
		var i int
		fmt.Sscan(v, &i)
		if i < perRound {
			duplicates += n - 1
		} else {
			again += n - 1
		}
	}
	vmu.Unlock()
	t.Logf("share consumers over a coordinator kill: %d produced, %d accepted, lost %d, duplicates of stored accepts %d, in-flight records delivered again %d (given to two at once: %d)",
		produced, accepted(), lost, duplicates, again, ledger.twice)
	if lost != 0 || duplicates != 0 || ledger.twice != 0 {
		t.Fatalf("lost %d, duplicates %d, given to two at once %d", lost, duplicates, ledger.twice)
	}
}
