package broker_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestGroupAdmin lists, describes, trims and deletes a consumer group,
// with the errors Kafka gives while the group still has a member.
func TestGroupAdmin(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	ctx := testCtx(t, 30*time.Second)
	const topic, group = "ga", "ga-group"
	createTopic(t, adm, topic, 2)
	prod := b.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := 0; i < 10; i++ {
		produceSync(t, prod, &kgo.Record{Topic: topic, Partition: int32(i % 2), Value: []byte("v")})
	}

	cons := b.Client(t, kgo.ClientID("ga-member"), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.Balancers(kgo.RangeBalancer()))
	pollN(ctx, t, cons, 10)
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}

	lg, err := adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := lg[group]; !ok || g.ProtocolType != "consumer" || g.State != "Stable" || g.Coordinator != 1 {
		t.Fatalf("ListGroups: %+v, want %s Stable consumer on 1", lg, group)
	}
	dg, err := adm.DescribeGroups(ctx, group, "no-such-group")
	if err != nil {
		t.Fatal(err)
	}
	d := dg[group]
	if d.Err != nil || d.State != "Stable" || d.ProtocolType != "consumer" || d.Protocol != "range" || len(d.Members) != 1 ||
		d.Members[0].ClientID != "ga-member" {
		t.Fatalf("DescribeGroups: %+v", d)
	}
	if got := d.AssignedPartitions().Sorted(); len(got) != 1 || !slices.Equal(got[0].Partitions, []int32{0, 1}) {
		t.Fatalf("assigned %v, want %s[0 1]", got, topic)
	}
	// A group that does not exist is described as Dead (DescribeGroups
	// before v6 has no GROUP_ID_NOT_FOUND).
	if d := dg["no-such-group"]; d.Err != nil || d.State != "Dead" || len(d.Members) != 0 {
		t.Fatalf("DescribeGroups of a missing group: %+v", d)
	}

	// While the member consumes the topic, its offsets cannot be deleted,
	// nor can the group.
	del, err := adm.DeleteOffsets(ctx, group, kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := del.Lookup(topic, 0); !errors.Is(e, kerr.GroupSubscribedToTopic) {
		t.Fatalf("OffsetDelete on a subscribed topic: %v, want GROUP_SUBSCRIBED_TO_TOPIC", e)
	}
	dgr, err := adm.DeleteGroup(ctx, group)
	if err == nil {
		err = dgr.Err
	}
	if !errors.Is(err, kerr.NonEmptyGroup) {
		t.Fatalf("DeleteGroups of a group with a member: %v, want NON_EMPTY_GROUP", err)
	}

	cons.Close() // leaves the group
	dg, err = adm.DescribeGroups(ctx, group)
	if err != nil || dg[group].State != "Empty" || len(dg[group].Members) != 0 {
		t.Fatalf("after the member left: %v %+v, want Empty", err, dg[group])
	}
	del, err = adm.DeleteOffsets(ctx, group, kadm.TopicsSet{topic: {0: {}}})
	if e, _ := del.Lookup(topic, 0); err != nil || e != nil {
		t.Fatalf("OffsetDelete on an empty group: %v %v", err, e)
	}
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := offs.Lookup(topic, 0); ok {
		t.Fatalf("%s still has a committed offset after OffsetDelete", tp(topic, 0))
	}
	if o, ok := offs.Lookup(topic, 1); !ok || o.At != 5 {
		t.Fatalf("%s committed offset %+v, want 5", tp(topic, 1), o)
	}

	dgr, err = adm.DeleteGroup(ctx, group)
	if err != nil || dgr.Err != nil {
		t.Fatalf("DeleteGroups of an empty group: %v %v", err, dgr.Err)
	}
	lg, err = adm.ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lg[group]; ok {
		t.Fatalf("ListGroups still has %s after its deletion", group)
	}
	dgr, err = adm.DeleteGroup(ctx, group)
	if err == nil {
		err = dgr.Err
	}
	if !errors.Is(err, kerr.GroupIDNotFound) {
		t.Fatalf("deleting %s again: %v, want GROUP_ID_NOT_FOUND", group, err)
	}
	offs, err = adm.FetchOffsets(ctx, group)
	if err != nil || len(offs) != 0 {
		t.Fatalf("offsets of a deleted group: %v %v, want none", offs, err)
	}
}
