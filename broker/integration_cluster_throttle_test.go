package broker_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage"
)

// TestReplicationThrottleCatchUp is KIP-73's contract: a follower catching
// up a partition's log under leader.replication.throttled.rate and
// follower.replication.throttled.rate (both X, on the leader and the
// follower, for the replicas the topic's *.replication.throttled.replicas
// name) copies it at X within 10%, measured as the bytes the follower
// appended per second; meanwhile an acks=all producer to an unthrottled
// partition with the same leader and follower keeps going, its follower in
// the ISR; removing the rates lets the catch-up finish at full speed.
//
// The follower is node 2, stopped while the log is written so it must
// copy all of it when it comes back (what a reassignment or a lost disk
// asks of a replica). The quota windows are Kafka's defaults (11 of 1 s);
// the rate is measured from 2 s after the catch-up starts, as the first
// window may take a second's worth at once.
func TestReplicationThrottleCatchUp(t *testing.T) {
	const (
		big, live = "throttled", "unthrottled"
		rate      = throttleRate
		fetchMax  = 256 << 10
	)
	c := brokertest.StartCluster(t, 3, brokertest.WithConfig(
		"auto.leader.rebalance.enable=false",
		"replica.fetch.max.bytes="+strconv.Itoa(fetchMax),
	))
	ctx := testCtx(t, 5*time.Minute)
	adm := c.Admin(t)
	cl := c.Client(t)
	createAssigned(ctx, t, cl, 1, big, [][]int32{{1, 2}})
	createAssigned(ctx, t, cl, 1, live, [][]int32{{1, 2}})
	c.WaitForISR(t, big, 2, 30*time.Second)
	c.WaitForISR(t, live, 2, 30*time.Second)

	// The throttles, as kafka-reassign-partitions.sh --throttle sets them:
	// the rates on the leader and the follower, the moving replica as
	// follower and the existing one as leader. Node 2 is in the ISR now,
	// so nothing is held back yet.
	setRates := func(value *string) {
		t.Helper()
		op := kadm.SetConfig
		if value == nil {
			op = kadm.DeleteConfig
		}
		for _, id := range []int32{1, 2} {
			rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{
				{Op: op, Name: "leader.replication.throttled.rate", Value: value},
				{Op: op, Name: "follower.replication.throttled.rate", Value: value},
			}, id)
			if err == nil {
				err = rs[0].Err
			}
			if err != nil {
				t.Fatalf("altering the replication rates of broker %d: %v", id, err)
			}
		}
	}
	setRates(kadm.StringPtr(strconv.Itoa(rate)))
	rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "leader.replication.throttled.replicas", Value: kadm.StringPtr("0:1")},
		{Op: kadm.SetConfig, Name: "follower.replication.throttled.replicas", Value: kadm.StringPtr("0:2")},
	}, big)
	if err == nil {
		err = rs[0].Err
	}
	if err != nil {
		t.Fatalf("setting the throttled replicas of %s: %v", big, err)
	}

	c.Stop(t, 2)
	written := writeThrottleLog(ctx, t, c, big, throttleLogBytes)
	leaderEnd := logEndOffset(c, 1, big, 0)
	t.Logf("wrote %d MB to %s[0] while node 2 was down (log end offset %d)", written>>20, big, leaderEnd)

	// The unthrottled producer runs from the restart to the end of the
	// throttled phase, with acks=all.
	var acked atomic.Int64
	prodCtx, stopProducing := context.WithCancel(ctx)
	var prodWG sync.WaitGroup
	prodWG.Add(1)
	go func() {
		defer prodWG.Done()
		produceUntil(prodCtx, c, live, &acked)
	}()
	defer func() { stopProducing(); prodWG.Wait() }()

	c.Restart(t, 2)
	follower := func() int64 {
		n := c.Node(2).Node()
		if n == nil {
			return 0
		}
		l, ok := n.LogManager().Log(storage.TopicPartition{Topic: big, Partition: 0})
		if !ok {
			return 0
		}
		return l.Size()
	}
	// Throttled: sample the follower's log until it holds 60% of the
	// leader's, which takes about 0.6×written/rate seconds.
	throttled := sampleGrowth(ctx, t, follower, func(size int64) bool { return size >= written*6/10 })
	ackedThrottled := acked.Load()
	measured, span := throttled.rateOver(2 * time.Second)
	fromStart, _ := throttled.rateOver(0)
	isr := c.Image().Topics[live].Partitions[0].ISR
	stopProducing()
	prodWG.Wait()
	t.Logf("throttled catch-up: %.2f MB/s measured over %v for a throttle of %.2f MB/s (%+.1f%%; %.2f MB/s from the first byte); leader rate sensor %.2f MB/s, follower %.2f MB/s",
		measured/(1<<20), span.Round(time.Millisecond), float64(rate)/(1<<20), 100*(measured/rate-1), fromStart/(1<<20),
		c.Node(1).Node().Replicas().Quotas().Leader.Rate()/(1<<20), c.Node(2).Node().Replicas().Quotas().Follower.Rate()/(1<<20))
	t.Logf("unthrottled producer to %s: %d records acknowledged with acks=all during the throttled catch-up; ISR %v",
		live, ackedThrottled, isr)
	if measured < rate*0.9 || measured > rate*1.1 {
		t.Errorf("throttled replication ran at %.0f B/s, want %d B/s ±10%%", measured, rate)
	}
	if ackedThrottled < 20 {
		t.Fatalf("the unthrottled producer got %d acks during the throttled catch-up, want it to keep going", ackedThrottled)
	}
	if len(isr) != 2 {
		t.Fatalf("%s's ISR is %v during the throttled catch-up: its follower fell behind too", live, isr)
	}

	// Unthrottled: the rest at full speed.
	setRates(nil)
	rest := sampleGrowth(ctx, t, follower, func(int64) bool { return logEndOffset(c, 2, big, 0) >= leaderEnd })
	full, _ := rest.rateOver(0)
	t.Logf("after removing the throttle: %.2f MB/s (%.1f× the throttle)", full/(1<<20), full/rate)
	if full < 2*rate {
		t.Fatalf("after removing the throttle the catch-up ran at %.0f B/s, want well above the %d B/s throttle", full, rate)
	}
	c.WaitForISR(t, big, 2, 60*time.Second)
}

// writeThrottleLog fills topic[0] with about n bytes of 8 KiB records,
// uncompressed, one per batch (acks=1: the ISR is the leader alone), and
// returns the leader's log size. Small batches keep the measurement
// honest: a fetch may end inside a batch, which the follower drops though
// the leader's quota counted it (as Kafka's does), so the follower gets
// about one batch per fetch less than the leader sent.
func writeThrottleLog(ctx context.Context, t *testing.T, c *brokertest.Cluster, topic string, n int64) int64 {
	t.Helper()
	cl := c.Client(t, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchMaxBytes(12<<10), kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	value := make([]byte, 8<<10)
	var errOnce sync.Once
	var firstErr error
	for written := int64(0); written < n; written += int64(len(value)) {
		cl.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				errOnce.Do(func() { firstErr = err })
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if firstErr != nil {
		t.Fatalf("writing %s: %v", topic, firstErr)
	}
	l, _ := c.Node(1).Node().LogManager().Log(storage.TopicPartition{Topic: topic})
	return l.Size()
}

// produceUntil produces 1 KiB records to topic[0] with acks=all, one at a
// time, until ctx ends, counting the acknowledged ones.
func produceUntil(ctx context.Context, c *brokertest.Cluster, topic string, acked *atomic.Int64) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return
	}
	defer cl.Close()
	value := make([]byte, 1<<10)
	for i := 0; ctx.Err() == nil; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: value}).FirstErr(); err == nil {
			acked.Add(1)
		}
	}
}

// growth is a series of (time, size) samples.
type growth struct {
	at   []time.Time
	size []int64
}

// sampleGrowth samples size every 100 ms until done says so.
func sampleGrowth(ctx context.Context, t *testing.T, size func() int64, done func(int64) bool) growth {
	t.Helper()
	var g growth
	for {
		s := size()
		g.at, g.size = append(g.at, time.Now()), append(g.size, s)
		if done(s) {
			return g
		}
		select {
		case <-ctx.Done():
			t.Fatalf("gave up sampling at %d bytes: %v", s, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// start is the index of the first sample at least skip after the series
// began to grow (the sample before the first growth).
func (g growth) start(skip time.Duration) int {
	first := 0
	for first+1 < len(g.size) && g.size[first+1] == g.size[0] {
		first++
	}
	i := first
	for i+1 < len(g.at) && g.at[i].Sub(g.at[first]) < skip {
		i++
	}
	return i
}

// rateOver is the growth per second from skip after the series began to
// grow to its end, and the time it spans: the least-squares slope of size
// over time, which
// averages out the steps a throttle makes (it lets data through while the
// rate over its windows is under the bound, then holds it back). With
// skip, the rate once the quota's windows are full.
func (g growth) rateOver(skip time.Duration) (float64, time.Duration) {
	i := g.start(skip)
	if len(g.at)-i < 3 && skip > 0 {
		// It grew too fast to skip anything (no throttle): the whole
		// series.
		return g.rateOver(0)
	}
	span := g.at[len(g.at)-1].Sub(g.at[i])
	n := float64(len(g.at) - i)
	if n < 2 {
		return 0, span
	}
	var st, sb, stt, stb float64
	for j := i; j < len(g.at); j++ {
		x, y := g.at[j].Sub(g.at[i]).Seconds(), float64(g.size[j])
		st, sb, stt, stb = st+x, sb+y, stt+x*x, stb+x*y
	}
	den := n*stt - st*st
	if den <= 0 {
		return 0, span
	}
	return (n*stb - st*sb) / den, span
}
