package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestConsumerGroupRebalance runs a 3-member group with each balancer
// while a producer writes: members join one by one, then two leave. The
// committed offsets, polled throughout with OffsetFetch, never go back;
// every acknowledged record is consumed at least once; the final
// committed offsets are the end offsets and at least every offset whose
// commit the broker acknowledged.
func TestConsumerGroupRebalance(t *testing.T) {
	b := brokertest.Start(t)
	for _, bal := range []struct {
		name     string
		balancer kgo.GroupBalancer
	}{
		{"range", kgo.RangeBalancer()},
		{"roundrobin", kgo.RoundRobinBalancer()},
		{"sticky", kgo.StickyBalancer()},
		{"cooperative-sticky", kgo.CooperativeStickyBalancer()},
	} {
		t.Run(bal.name, func(t *testing.T) {
			runGroupRebalance(t, b, "group-"+bal.name, "grouptopic-"+bal.name, bal.balancer)
		})
	}
}

// groupRun is the shared state of one rebalance run.
type groupRun struct {
	t     *testing.T
	b     *brokertest.Broker
	group string
	topic string
	bal   kgo.GroupBalancer

	mu        sync.Mutex
	consumed  map[int32]map[int64]int // partition → offset → times consumed
	acked     map[int32]int64         // highest offset+1 whose commit the broker acknowledged
	commitErr error
}

const groupPartitions = 6

func runGroupRebalance(t *testing.T, b *brokertest.Broker, group, topic string, bal kgo.GroupBalancer) {
	adm := b.Admin(t)
	createTopic(t, adm, topic, groupPartitions)
	ctx := testCtx(t, 60*time.Second)
	r := &groupRun{t: t, b: b, group: group, topic: topic, bal: bal,
		consumed: map[int32]map[int64]int{}, acked: map[int32]int64{}}

	// The producer writes until stopped; produced holds every
	// acknowledged offset.
	produced := map[int32]int64{}
	prodCtx, stopProducing := context.WithCancel(ctx)
	prodDone := make(chan error, 1)
	go func() {
		prod := b.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
		i := 0
		for prodCtx.Err() == nil {
			var rs []*kgo.Record
			for j := 0; j < 12; j++ {
				rs = append(rs, kgo.StringRecord(fmt.Sprint(i)))
				i++
			}
			if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
				prodDone <- err
				return
			}
			for _, rec := range rs {
				produced[rec.Partition] = max(produced[rec.Partition], rec.Offset+1)
			}
			time.Sleep(5 * time.Millisecond)
		}
		prodDone <- nil
	}()

	// OffsetFetch poller: committed offsets must never go back.
	pollCtx, stopPolling := context.WithCancel(ctx)
	pollDone := make(chan error, 1)
	polls := 0
	go func() {
		last := map[int32]int64{}
		for pollCtx.Err() == nil {
			offs, err := adm.FetchOffsets(pollCtx, group)
			if err == nil {
				polls++
				for p := int32(0); p < groupPartitions; p++ {
					o, ok := offs.Lookup(topic, p)
					if !ok || o.Err != nil {
						continue
					}
					if o.At < last[p] {
						pollDone <- fmt.Errorf("committed offset of %s went back from %d to %d", tp(topic, p), last[p], o.At)
						return
					}
					last[p] = o.At
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		pollDone <- nil
	}()

	m1 := r.startMember(ctx, "m1")
	r.waitGroup(ctx, adm, 1)
	m2 := r.startMember(ctx, "m2")
	r.waitGroup(ctx, adm, 2)
	m3 := r.startMember(ctx, "m3")
	r.waitGroup(ctx, adm, 3)
	m1.stop()
	r.waitGroup(ctx, adm, 2)
	m2.stop()
	r.waitGroup(ctx, adm, 1)
	stopProducing()
	if err := <-prodDone; err != nil {
		t.Fatalf("producer: %v", err)
	}
	// m3 now owns everything: wait until it consumed every acknowledged
	// record, then let it commit and leave.
	r.waitConsumed(ctx, produced)
	m3.stop()
	stopPolling()
	if err := <-pollDone; err != nil {
		t.Fatal(err)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.commitErr != nil {
		t.Fatalf("a commit failed: %v", r.commitErr)
	}
	final, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for p := int32(0); p < groupPartitions; p++ {
		total += produced[p]
		o, ok := final.Lookup(topic, p)
		if !ok || o.Err != nil || o.At != produced[p] {
			t.Fatalf("final committed offset of %s: %d (%v), want the end offset %d", tp(topic, p), o.At, o.Err, produced[p])
		}
		if o.At < r.acked[p] {
			t.Fatalf("final committed offset of %s is %d, below the acknowledged commit of %d", tp(topic, p), o.At, r.acked[p])
		}
		for off := int64(0); off < produced[p]; off++ {
			if r.consumed[p][off] == 0 {
				t.Fatalf("%s@%d was acknowledged but never consumed", tp(topic, p), off)
			}
		}
	}
	if polls < 10 || total < 200 {
		t.Fatalf("the run was too short to test anything: %d offset polls, %d records", polls, total)
	}
	t.Logf("%d records, %d offset polls", total, polls)
}

type member struct {
	cl   *kgo.Client
	stop func()
}

// startMember joins the group with a consumer that records everything it
// polls and every commit the broker acknowledges. stop commits what was
// polled and leaves the group.
func (r *groupRun) startMember(ctx context.Context, name string) *member {
	cl := r.b.Client(r.t,
		kgo.ClientID(name),
		kgo.ConsumerGroup(r.group),
		kgo.ConsumeTopics(r.topic),
		kgo.Balancers(r.bal),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(6*time.Second),
		kgo.HeartbeatInterval(100*time.Millisecond),
		kgo.AutoCommitInterval(100*time.Millisecond),
		kgo.AutoCommitCallback(func(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			r.commitDone(req, resp, err)
		}),
		kgo.FetchMaxWait(200*time.Millisecond),
	)
	pollCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			fs := cl.PollFetches(pollCtx)
			if pollCtx.Err() != nil {
				return
			}
			r.mu.Lock()
			fs.EachRecord(func(rec *kgo.Record) {
				m := r.consumed[rec.Partition]
				if m == nil {
					m = map[int64]int{}
					r.consumed[rec.Partition] = m
				}
				m[rec.Offset]++
			})
			r.mu.Unlock()
		}
	}()
	return &member{cl: cl, stop: func() {
		cancel()
		<-done
		// Close leaves the group; kgo's default revoke commits what
		// was polled before it does.
		cl.Close()
	}}
}

// commitDone records the offsets the broker acknowledged.
func (r *groupRun) commitDone(req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil || resp == nil {
		return // a commit lost with its connection or a rebalance: retried or superseded
	}
	asked := map[int32]int64{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			asked[p.Partition] = p.Offset
		}
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 {
				r.acked[p.Partition] = max(r.acked[p.Partition], asked[p.Partition])
			}
		}
	}
}

// waitGroup waits until the group is Stable with n members whose
// assignments cover every partition exactly once, each member owning at
// least one.
func (r *groupRun) waitGroup(ctx context.Context, adm *kadm.Client, n int) {
	r.t.Helper()
	var last string
	for ctx.Err() == nil {
		dg, err := adm.DescribeGroups(ctx, r.group)
		if err == nil {
			g := dg[r.group]
			last = fmt.Sprintf("state %s, %d members", g.State, len(g.Members))
			owners := map[int32]int{}
			ok := g.Err == nil && g.State == "Stable" && len(g.Members) == n
			for _, m := range g.Members {
				c, isConsumer := m.Assigned.AsConsumer()
				owned := 0
				if isConsumer {
					for _, t := range c.Topics {
						for _, p := range t.Partitions {
							owners[p]++
							owned++
						}
					}
				}
				ok = ok && owned > 0
			}
			for p := int32(0); p < groupPartitions; p++ {
				ok = ok && owners[p] == 1
			}
			if ok {
				return
			}
			last += fmt.Sprintf(", owners %v", owners)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.t.Fatalf("group %s never settled with %d members: %s", r.group, n, last)
}

// waitConsumed waits until every offset below produced was consumed.
func (r *groupRun) waitConsumed(ctx context.Context, produced map[int32]int64) {
	r.t.Helper()
	for ctx.Err() == nil {
		r.mu.Lock()
		missing := 0
		for p, end := range produced {
			for off := int64(0); off < end; off++ {
				if r.consumed[p][off] == 0 {
					missing++
				}
			}
		}
		r.mu.Unlock()
		if missing == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.t.Fatalf("not every acknowledged record was consumed: %v", ctx.Err())
}
