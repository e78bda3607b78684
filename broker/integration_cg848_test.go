package broker_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// cg848Config makes KIP-848 consumer groups notice a dead member within
// seconds: a 4 s session, members told to heartbeat every 250 ms.
var cg848Config = []string{
	"group.consumer.session.timeout.ms=4000",
	"group.consumer.min.session.timeout.ms=1000",
	"group.consumer.heartbeat.interval.ms=250",
	"group.consumer.min.heartbeat.interval.ms=100",
}

const cg848Partitions = 12

// cg848Run is a KIP-848 group of kgo members (the server-side balancer)
// consuming one topic. It counts every record a member polls, and follows
// which member owns each partition through the members' assignment
// callbacks: a partition given to a member while another still owns it
// is a violation.
type cg848Run struct {
	t     *testing.T
	seeds []string
	group string
	topic string

	mu         sync.Mutex
	consumed   map[int32]map[int64]int // partition → offset → times polled
	owner      map[int32]string        // partition → member owning it
	dead       map[string]bool         // members killed: their callbacks no longer count
	violations []string
	members    map[string]*cg848Member
}

type cg848Member struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
	net    *killableDialer
}

// killableDialer dials for one client until it is killed: then its
// connections close and no new one opens, as if its process died.
type killableDialer struct {
	mu     sync.Mutex
	killed bool
	conns  []net.Conn
}

func (d *killableDialer) dial(ctx context.Context, network, host string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.killed {
		return nil, errors.New("killed")
	}
	c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, host)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

func (d *killableDialer) kill() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.killed = true
	for _, c := range d.conns {
		c.Close()
	}
}

func newCG848Run(t *testing.T, seeds []string, group, topic string) *cg848Run {
	r := &cg848Run{t: t, seeds: seeds, group: group, topic: topic,
		consumed: map[int32]map[int64]int{}, owner: map[int32]string{}, dead: map[string]bool{},
		members: map[string]*cg848Member{}}
	t.Cleanup(r.closeAll)
	return r
}

func (r *cg848Run) assigned(name string, ps map[string][]int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dead[name] {
		return
	}
	for _, p := range ps[r.topic] {
		if o, ok := r.owner[p]; ok && o != name {
			r.violations = append(r.violations, fmt.Sprintf("partition %d given to %s while %s owns it", p, name, o))
		}
		r.owner[p] = name
	}
}

func (r *cg848Run) released(name string, ps map[string][]int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range ps[r.topic] {
		if r.owner[p] == name {
			delete(r.owner, p)
		}
	}
}

// add starts a member that polls, and commits what it polled, until it is
// killed or closed; it commits what it polled before giving partitions up.
func (r *cg848Run) add(name string) {
	dialer := &killableDialer{}
	var cl *kgo.Client
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(r.seeds...),
		kgo.Dialer(dialer.dial),
		kgo.ClientID(name),
		kgo.ConsumerGroup(r.group),
		kgo.ConsumeTopics(r.topic),
		kgo.ServerSideBalancer(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.FetchMaxWait(200*time.Millisecond),
		kgo.RetryTimeout(30*time.Second),
		// Short retries: the default backoff grows to seconds, which a
		// member waiting out a coordinator failover may spend past its
		// session timeout.
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { r.assigned(name, ps) }),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, ps map[string][]int32) {
			if !r.isDead(name) {
				_ = cl.CommitUncommittedOffsets(ctx)
			}
			r.released(name, ps)
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) { r.released(name, ps) }),
	)
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &cg848Member{cl: cl, cancel: cancel, done: make(chan struct{}), net: dialer}
	r.mu.Lock()
	r.members[name] = m
	r.mu.Unlock()
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				return
			}
			r.mu.Lock()
			fs.EachRecord(func(rec *kgo.Record) {
				if r.consumed[rec.Partition] == nil {
					r.consumed[rec.Partition] = map[int64]int{}
				}
				r.consumed[rec.Partition][rec.Offset]++
			})
			r.mu.Unlock()
			cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
			_ = cl.CommitUncommittedOffsets(cctx)
			ccancel()
		}
	}()
}

func (r *cg848Run) isDead(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dead[name]
}

// kill stops a member as if its process died: it neither leaves nor
// commits again, so only its session timeout frees its partitions. From
// then on it owns nothing.
func (r *cg848Run) kill(name string) {
	r.mu.Lock()
	m := r.members[name]
	delete(r.members, name)
	r.dead[name] = true
	for p, o := range r.owner {
		if o == name {
			delete(r.owner, p)
		}
	}
	r.mu.Unlock()
	m.net.kill()
	m.cancel()
	<-m.done
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_ = m.cl.LeaveGroupContext(gone) // a canceled context: no leave is sent
	m.cl.Close()
}

// close makes a member leave the group (epoch -1) after committing.
func (r *cg848Run) close(name string) {
	r.mu.Lock()
	m := r.members[name]
	delete(r.members, name)
	r.mu.Unlock()
	m.cancel()
	<-m.done
	m.cl.Close()
}

func (r *cg848Run) closeAll() {
	r.mu.Lock()
	var names []string
	for n := range r.members {
		names = append(names, n)
	}
	r.mu.Unlock()
	for _, n := range names {
		r.close(n)
	}
}

// check fails the test on an ownership violation.
func (r *cg848Run) check() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.violations) > 0 {
		r.t.Fatalf("partitions owned by two members at once: %v", r.violations)
	}
}

// waitConsumed waits until every offset below ends was polled.
func (r *cg848Run) waitConsumed(ctx context.Context, ends map[int32]int64) {
	r.t.Helper()
	for {
		r.mu.Lock()
		missing := 0
		for p, end := range ends {
			for o := int64(0); o < end; o++ {
				if r.consumed[p][o] == 0 {
					missing++
				}
			}
		}
		r.mu.Unlock()
		if missing == 0 {
			return
		}
		select {
		case <-ctx.Done():
			r.t.Fatalf("%d records never consumed", missing)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// produce48 writes n records to each partition and adds them to ends.
func produce848(t *testing.T, cl *kgo.Client, topic string, n int, ends map[int32]int64) {
	t.Helper()
	var rs []*kgo.Record
	for p := range int32(cg848Partitions) {
		for i := range n {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%d-%d", p, i)})
		}
	}
	if err := cl.ProduceSync(testCtx(t, 30*time.Second), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for p := range int32(cg848Partitions) {
		ends[p] += int64(n)
	}
}

// TestConsumerGroup848 runs a KIP-848 group of kgo members with the
// server-side balancer on one node: three members share 12 partitions; a
// fourth joins while one is killed (its session timeout frees its
// partitions) and one leaves; no record is lost, no partition is owned by
// two members at once, the committed offsets reach the end offsets and
// outlive the members, and ListGroups and ConsumerGroupDescribe show a
// consumer group.
func TestConsumerGroup848(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithConfig(cg848Config...))
	runCG848(t, []string{b.Addr()}, b.Admin(t), 1, nil)
}

// TestConsumerGroup848CoordinatorFailover is TestConsumerGroup848 on three
// nodes with replicated topics, the node leading the group's
// __consumer_offsets partition killed once the group is stable: the
// next leader loads the group from its records and the members carry on
// under their member ids, the group epoch going on from where it was, and
// the committed offsets intact.
func TestConsumerGroup848CoordinatorFailover(t *testing.T) {
	// A longer session than on one node: the members must reach the new
	// coordinator before it expires them, and the new coordinator only
	// serves once the controller noticed the old one's death (1.5 s of
	// silence) and the new leader loaded the group.
	cfg := append(slices.Clone(cg848Config), "auto.leader.rebalance.enable=false", "group.consumer.session.timeout.ms=10000")
	c := brokertest.StartCluster(t, 3, brokertest.WithConfig(cfg...))
	const group = "cg848-group"
	adm := c.Admin(t)
	runCG848(t, c.Addrs(), adm, 3, func(ctx context.Context, r *cg848Run) (*kadm.Client, func(kadm.DescribedConsumerGroup)) {
		before := describe848(ctx, t, adm, group)
		offsets, err := adm.FetchOffsets(ctx, group)
		if err != nil || offsets.Error() != nil {
			t.Fatalf("fetch offsets: %v %v", err, offsets.Error())
		}
		fc := adm.FindGroupCoordinators(ctx, group)[group]
		if fc.Err != nil {
			t.Fatal(fc.Err)
		}
		part := offsetsPartitionFor(group, int32(len(c.Image().Topics["__consumer_offsets"].Partitions)))
		if leader := c.Leader("__consumer_offsets", part); leader != fc.NodeID {
			t.Fatalf("coordinator is node %d, __consumer_offsets[%d] is led by %d", fc.NodeID, part, leader)
		}
		c.Kill(t, fc.NodeID)
		var live *brokertest.Broker
		for _, id := range c.Running() {
			live = c.Node(id)
		}
		// kgo keeps a coordinator it cannot dial cached: a new admin
		// client, bootstrapped at a live node, finds the new one.
		adm := live.Admin(t)
		c.WaitFor(t, 20*time.Second, "a new coordinator of "+group, func() bool {
			fc2 := adm.FindGroupCoordinators(ctx, group)[group]
			return fc2.Err == nil && fc2.NodeID != fc.NodeID
		})
		moved, err := adm.FetchOffsets(ctx, group)
		if err != nil || moved.Error() != nil {
			t.Fatalf("fetch offsets from the new coordinator: %v %v", err, moved.Error())
		}
		offsets.Each(func(o kadm.OffsetResponse) {
			if m, ok := moved.Lookup(o.Topic, o.Partition); !ok || m.At < o.At {
				t.Fatalf("%s[%d] committed at %d before the failover, %d after", o.Topic, o.Partition, o.At, m.At)
			}
		})
		// Once the group consumed what was produced after the failover:
		// the same members, under the same ids, at the same epoch (no
		// member had to rejoin).
		return adm, func(after kadm.DescribedConsumerGroup) {
			ids := func(d kadm.DescribedConsumerGroup) map[string]string {
				out := map[string]string{}
				for _, m := range d.Members {
					out[m.ClientID] = m.MemberID
				}
				return out
			}
			if was, is := ids(before), ids(after); !maps.Equal(was, is) || after.Epoch != before.Epoch {
				t.Fatalf("before the failover: epoch %d, members %v; after: epoch %d, members %v", before.Epoch, was, after.Epoch, is)
			}
			t.Logf("coordinator node %d killed; the group went on at epoch %d with its members", fc.NodeID, after.Epoch)
		}
	})
}

// describe848 describes a consumer group, whatever its state.
func describe848(ctx context.Context, t *testing.T, adm *kadm.Client, group string) kadm.DescribedConsumerGroup {
	t.Helper()
	for {
		ds, err := adm.DescribeConsumerGroups(ctx, group)
		if err == nil && ds[group].Err == nil {
			return ds[group]
		}
		select {
		case <-ctx.Done():
			t.Fatalf("describe %s: %v %v", group, err, ds[group].Err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// runCG848 is the scenario of TestConsumerGroup848 on a topic with rf
// replicas. Once the first three members are stable it calls disrupt, if
// set, and goes on with the admin client disrupt returns. (A member that
// owns no partition, kgo v1.22.3 does not find a new coordinator when its
// old one stops answering dials: only its ConsumerGroupHeartbeat goes to
// the coordinator, and that request does not drop the cached
// coordinator on a dial error. So the failover comes before a member
// joins.)
func runCG848(t *testing.T, seeds []string, adm *kadm.Client, rf int16,
	disrupt func(context.Context, *cg848Run) (*kadm.Client, func(kadm.DescribedConsumerGroup))) {
	const topic, group = "cg848", "cg848-group"
	createReplicatedTopic(t, adm, topic, cg848Partitions, rf)
	prod, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RetryTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx := testCtx(t, 150*time.Second)
	ends := map[int32]int64{}
	produce848(t, prod, topic, 50, ends)

	r := newCG848Run(t, seeds, group, topic)
	for _, n := range []string{"a", "b", "c"} {
		r.add(n)
	}
	r.waitConsumed(ctx, ends)
	waitStable848(ctx, t, adm, group, []string{"a", "b", "c"})
	r.check()

	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := listed[group]; !ok || g.GroupType != "consumer" || g.ProtocolType != "consumer" || g.State != "Stable" {
		t.Fatalf("ListGroups: %+v", listed)
	}
	if consumers, err := adm.ListGroupsByType(ctx, []string{"consumer"}); err != nil || len(consumers) != 1 {
		t.Fatalf("ListGroups of type consumer: %v %v", consumers, err)
	}
	if classic, err := adm.ListGroupsByType(ctx, []string{"classic"}); err != nil || len(classic) != 0 {
		t.Fatalf("ListGroups of type classic: %v %v", classic, err)
	}

	if disrupt != nil {
		var check func(kadm.DescribedConsumerGroup)
		adm, check = disrupt(ctx, r)
		produce848(t, prod, topic, 50, ends)
		r.waitConsumed(ctx, ends)
		check(waitStable848(ctx, t, adm, group, []string{"a", "b", "c"}))
	}
	r.add("d")
	r.kill("b")
	produce848(t, prod, topic, 50, ends)
	r.waitConsumed(ctx, ends)
	waitStable848(ctx, t, adm, group, []string{"a", "c", "d"})
	r.close("c")
	produce848(t, prod, topic, 50, ends)
	r.waitConsumed(ctx, ends)
	waitStable848(ctx, t, adm, group, []string{"a", "d"})
	r.closeAll()
	r.check()
	waitCommitted848(ctx, t, adm, group, topic, ends)

	// The group is empty and keeps its offsets: a new member reads only
	// what was produced after them.
	from := map[int32]int64{}
	for p, e := range ends {
		from[p] = e
	}
	produce848(t, prod, topic, 5, ends)
	z := newCG848Run(t, seeds, group, topic)
	z.add("z")
	for {
		z.mu.Lock()
		n := 0
		for p := range int32(cg848Partitions) {
			for o := range z.consumed[p] {
				if o < from[p] {
					z.mu.Unlock()
					t.Fatalf("the new member read partition %d at %d, below the committed %d", p, o, from[p])
				}
				n++
			}
		}
		z.mu.Unlock()
		if n == 5*cg848Partitions {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the new member read %d records, want %d", n, 5*cg848Partitions)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitCommitted848 waits until the group's committed offsets are ends.
func waitCommitted848(ctx context.Context, t *testing.T, adm *kadm.Client, group, topic string, ends map[int32]int64) {
	t.Helper()
	var last string
	for {
		os, err := adm.FetchOffsets(ctx, group)
		if err == nil && os.Error() == nil {
			last = ""
			for p, end := range ends {
				if o, ok := os.Lookup(topic, p); !ok || o.At != end {
					last = fmt.Sprintf("partition %d committed at %d (found %v), want %d", p, o.At, ok, end)
					break
				}
			}
			if last == "" {
				return
			}
		} else {
			last = fmt.Sprint(err, os.Error())
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s never committed its end offsets: %s", group, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitStable848 waits until ConsumerGroupDescribe shows the group Stable,
// of type consumer, with exactly the members named (by client id), every
// partition assigned once, and returns its description.
func waitStable848(ctx context.Context, t *testing.T, adm *kadm.Client, group string, clients []string) kadm.DescribedConsumerGroup {
	t.Helper()
	var last string
	for {
		ds, err := adm.DescribeConsumerGroups(ctx, group)
		if err == nil && ds[group].Err == nil {
			d := ds[group]
			seen := map[int32]int{}
			var names []string
			consumerType := true
			for _, m := range d.Members {
				names = append(names, m.ClientID)
				consumerType = consumerType && m.MemberType == 1 && m.MemberEpoch == d.Epoch
				for _, ps := range m.Assignment {
					for p := range ps {
						seen[p]++
					}
				}
			}
			slices.Sort(names)
			ok := d.State == "Stable" && slices.Equal(names, clients) && len(seen) == cg848Partitions && consumerType
			for _, n := range seen {
				ok = ok && n == 1
			}
			if ok {
				return d
			}
			last = fmt.Sprintf("state %s epoch %d members %v assigned %d", d.State, d.Epoch, names, len(seen))
		} else {
			last = fmt.Sprint(err, ds[group].Err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s never Stable with %v over %d partitions: %s", group, clients, cg848Partitions, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
