package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestConsumerGroup848: the strait binary serves KIP-848 consumer groups
// to kgo's server-side balancer. Two members share a topic, one leaves
// and the other takes over; the group survives a SIGKILL of the broker
// (its records are read back from __consumer_offsets): the same group
// epoch, the committed offsets, and a new member that goes on from them
// at the next epoch.
func TestConsumerGroup848(t *testing.T) {
	const topic, group, partitions, records = "cg848-e2e", "cg848-e2e-group", 4, 200
	n := newNode(t, "group.consumer.heartbeat.interval.ms=250", "group.consumer.min.heartbeat.interval.ms=100")
	n.start()
	adm := newAdmin(t, n.kafkaAddr())
	createTopic(t, adm, topic, partitions)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

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
	// member polls until it has read want records, committing as it goes.
	type member struct {
		cl   *kgo.Client
		seen map[string]bool
	}
	newMember := func(name string) *member {
		return &member{seen: map[string]bool{}, cl: newClient(t, n.kafkaAddr(),
			kgo.ClientID(name), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ServerSideBalancer(),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))}
	}
	// poll polls once, for a short while: a member may have nothing to
	// read.
	poll := func(m *member) {
		if ctx.Err() != nil {
			t.Fatalf("polling: %v; read %d records", ctx.Err(), len(m.seen))
		}
		pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fs := m.cl.PollFetches(pctx)
		pcancel()
		fs.EachRecord(func(r *kgo.Record) { m.seen[string(r.Value)] = true })
		if err := m.cl.CommitUncommittedOffsets(ctx); err != nil {
			t.Logf("commit: %v", err) // a rebalance can refuse one; the next poll commits again
		}
	}
	describe := func(wantMembers int, state string) kadm.DescribedConsumerGroup {
		t.Helper()
		for {
			ds, err := adm.DescribeConsumerGroups(ctx, group)
			d := ds[group]
			if err == nil && d.Err == nil && d.State == state && len(d.Members) == wantMembers {
				return d
			}
			if ctx.Err() != nil {
				t.Fatalf("group %s never %s with %d members: %v %v %+v", group, state, wantMembers, err, d.Err, d)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	produce("first")
	a, b := newMember("a"), newMember("b")
	count := func(m *member, prefix string) int {
		n := 0
		for v := range m.seen {
			if strings.HasPrefix(v, prefix+"-") {
				n++
			}
		}
		return n
	}
	for count(a, "first")+count(b, "first") < records {
		poll(a)
		poll(b)
	}
	d := describe(2, "Stable")
	if len(d.AssignedPartitions()[topic]) != partitions {
		t.Fatalf("two members: %+v", d)
	}
	for _, m := range d.Members {
		if m.MemberType != 1 || len(m.Assignment[topic]) == 0 {
			t.Fatalf("member %+v", m)
		}
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g := listed[group]; g.GroupType != "consumer" || g.ProtocolType != "consumer" {
		t.Fatalf("ListGroups: %+v", listed)
	}
	b.cl.Close() // leaves; a takes its partitions
	produce("second")
	for count(a, "second") < records {
		poll(a)
	}
	a.cl.Close()
	before := describe(0, "Empty")
	committed := fetchCommitted(t, n.kafkaAddr(), group, topic)
	total := int64(0)
	for _, o := range committed {
		total += o
	}
	if total != 2*records {
		t.Fatalf("committed %v, %d records in all, want %d", committed, total, 2*records)
	}

	n.kill()
	n.start()
	adm = newAdmin(t, n.kafkaAddr())
	after := describe(0, "Empty")
	if after.Epoch != before.Epoch || after.AssignmentEpoch != before.AssignmentEpoch {
		t.Fatalf("after the restart: epoch %d, assignment epoch %d; before: %d, %d", after.Epoch, after.AssignmentEpoch, before.Epoch, before.AssignmentEpoch)
	}
	if got := fetchCommitted(t, n.kafkaAddr(), group, topic); fmtOffsets(got) != fmtOffsets(committed) {
		t.Fatalf("committed after the restart %v, before %v", got, committed)
	}
	produce("third")
	c := newMember("c")
	for count(c, "third") < records {
		poll(c)
	}
	var old []string
	for v := range c.seen {
		if !strings.HasPrefix(v, "third-") {
			old = append(old, v)
		}
	}
	slices.Sort(old)
	if len(old) > 0 {
		t.Fatalf("after the restart the new member read %d committed records again: %v", len(old), old[:min(5, len(old))])
	}
	if d := describe(1, "Stable"); d.Epoch != before.Epoch+1 {
		t.Fatalf("the new member joined at epoch %d, want %d", d.Epoch, before.Epoch+1)
	}
}
