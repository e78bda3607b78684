package broker_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestAdminTopics creates, validates, grows and deletes topics, checking
// each answer's error code and what Metadata shows afterwards.
func TestAdminTopics(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	ctx := testCtx(t, 30*time.Second)

	created, err := adm.CreateTopics(ctx, 3, 1, map[string]*string{"retention.ms": kadm.StringPtr("123456")}, "t1", "t2")
	if err != nil || created.Error() != nil {
		t.Fatalf("create t1, t2: %v %v", err, created.Error())
	}
	if created["t1"].ID == created["t2"].ID || created["t1"].NumPartitions != 3 || created["t1"].ReplicationFactor != 1 {
		t.Fatalf("create responses %+v", created)
	}

	for _, tc := range []struct {
		name    string
		topic   string
		parts   int32
		configs map[string]*string
		want    error
	}{
		{"existing", "t1", 1, nil, kerr.TopicAlreadyExists},
		{"slash in name", "bad/name", 1, nil, kerr.InvalidTopicException},
		{"dot dot", "..", 1, nil, kerr.InvalidTopicException},
		{"too long", strings.Repeat("x", 250), 1, nil, kerr.InvalidTopicException},
		{"empty", "", 1, nil, kerr.InvalidTopicException},
		{"bad config value", "t3", 1, map[string]*string{"retention.ms": kadm.StringPtr("soon")}, kerr.InvalidConfig},
		{"unknown config", "t3", 1, map[string]*string{"no.such.config": kadm.StringPtr("1")}, kerr.InvalidConfig},
		{"zero partitions", "t3", 0, nil, kerr.InvalidPartitions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := adm.CreateTopic(ctx, tc.parts, 1, tc.configs, tc.topic)
			if !errors.Is(err, tc.want) {
				t.Fatalf("create %q: %v, want %v", tc.topic, err, tc.want)
			}
		})
	}
	// None of the failed creations left a topic behind.
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(topics.Names(), ","); got != "t1,t2" {
		t.Fatalf("topics after the failed creations: %s, want t1,t2", got)
	}

	// Create partitions: 3 → 5, then a record in partition 4.
	cp, err := adm.UpdatePartitions(ctx, 5, "t1")
	if err != nil || cp.Error() != nil {
		t.Fatalf("grow t1 to 5 partitions: %v %v", err, cp.Error())
	}
	cp, err = adm.UpdatePartitions(ctx, 2, "t1")
	if err != nil || !errors.Is(cp["t1"].Err, kerr.InvalidPartitions) {
		t.Fatalf("shrink t1 to 2: %v %v, want INVALID_PARTITIONS", err, cp["t1"].Err)
	}
	cp, err = adm.UpdatePartitions(ctx, 4, "nope")
	if err != nil || !errors.Is(cp["nope"].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("grow an unknown topic: %v %v, want UNKNOWN_TOPIC_OR_PARTITION", err, cp["nope"].Err)
	}
	prod := b.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produceSync(t, prod, &kgo.Record{Topic: "t1", Partition: 4, Value: []byte("p4")})
	td, err := adm.ListTopics(ctx, "t1")
	if err != nil || len(td["t1"].Partitions) != 5 {
		t.Fatalf("t1 metadata: %v %+v", err, td["t1"])
	}
	end, err := adm.ListEndOffsets(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := end.Lookup("t1", 4); o.Offset != 1 {
		t.Fatalf("t1[4] end offset %d, want 1", o.Offset)
	}

	// Delete: t2 goes, an unknown topic is an error, t1 stays.
	del, err := adm.DeleteTopics(ctx, "t2", "nope")
	if err != nil {
		t.Fatal(err)
	}
	if del["t2"].Err != nil || !errors.Is(del["nope"].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("delete t2, nope: %v, %v", del["t2"].Err, del["nope"].Err)
	}
	topics, err = adm.ListTopics(ctx)
	if err != nil || strings.Join(topics.Names(), ",") != "t1" {
		t.Fatalf("topics after deleting t2: %v %v", topics.Names(), err)
	}
	// A topic of the same name can be created again, with a new id.
	again, err := adm.CreateTopic(ctx, 1, 1, nil, "t2")
	if err != nil || again.ID == created["t2"].ID {
		t.Fatalf("recreate t2: %v, id %v (old %v)", err, again.ID, created["t2"].ID)
	}
	// The recreated topic starts empty.
	end, err = adm.ListEndOffsets(ctx, "t2")
	if o, _ := end.Lookup("t2", 0); err != nil || o.Offset != 0 {
		t.Fatalf("recreated t2 end offset %d (%v), want 0", o.Offset, err)
	}
}

// TestAdminTopicDeletionDisabled: with delete.topic.enable=false the
// deletion is refused and the topic stays.
func TestAdminTopicDeletionDisabled(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithConfig("delete.topic.enable=false"))
	adm := b.Admin(t)
	createTopic(t, adm, "keep", 1)
	resp, err := adm.DeleteTopic(testCtx(t, 10*time.Second), "keep")
	if err == nil {
		err = resp.Err
	}
	if !errors.Is(err, kerr.TopicDeletionDisabled) {
		t.Fatalf("delete: %v, want TOPIC_DELETION_DISABLED", err)
	}
}

// TestAdminACLs creates ACLs, finds them with filters and deletes them.
func TestAdminACLs(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	ctx := testCtx(t, 30*time.Second)

	read := kadm.NewACLs().Allow("User:alice").AllowHosts("*").Topics("orders", "payments").
		Operations(kadm.OpRead, kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral)
	deny := kadm.NewACLs().Deny("User:mallory").DenyHosts("10.0.0.1").Groups("g").
		Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternPrefixed)
	for _, builder := range []*kadm.ACLBuilder{read, deny} {
		res, err := adm.CreateACLs(ctx, builder)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("create ACL %+v: %v", r, r.Err)
			}
		}
	}

	describe := func(b *kadm.ACLBuilder) []kadm.DescribedACL {
		t.Helper()
		res, err := adm.DescribeACLs(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		var out []kadm.DescribedACL
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("describe ACLs: %v", r.Err)
			}
			out = append(out, r.Described...)
		}
		return out
	}
	all := kadm.NewACLs().AnyResource().Allow().Deny().AllowHosts().DenyHosts().
		Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny)
	if got := describe(all); len(got) != 5 {
		t.Fatalf("all ACLs: %d, want 5 (2 topics × 2 operations + 1): %+v", len(got), got)
	}
	aliceOrders := kadm.NewACLs().Topics("orders").Allow("User:alice").AllowHosts().
		Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternLiteral)
	if got := describe(aliceOrders); len(got) != 2 {
		t.Fatalf("alice's ACLs on orders: %+v, want 2", got)
	}
	// A MATCH filter on a group name finds the prefixed ACL that covers it.
	match := kadm.NewACLs().Groups("g-consumers").Allow().Deny().AllowHosts().DenyHosts().
		Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternMatch)
	got := describe(match)
	if len(got) != 1 || got[0].Principal != "User:mallory" || got[0].Host != "10.0.0.1" ||
		got[0].Permission != kmsg.ACLPermissionTypeDeny || got[0].Pattern != kadm.ACLPatternPrefixed {
		t.Fatalf("ACLs matching group g-consumers: %+v", got)
	}

	// Delete alice's read ACLs: 2 match (orders and payments).
	delRead := kadm.NewACLs().AnyResource().Allow("User:alice").AllowHosts().
		Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternAny)
	dres, err := adm.DeleteACLs(ctx, delRead)
	if err != nil {
		t.Fatal(err)
	}
	deleted := 0
	for _, r := range dres {
		if r.Err != nil {
			t.Fatalf("delete ACLs: %v", r.Err)
		}
		deleted += len(r.Deleted)
	}
	if deleted != 2 {
		t.Fatalf("deleted %d ACLs, want 2", deleted)
	}
	if got := describe(all); len(got) != 3 {
		t.Fatalf("ACLs after the deletion: %d, want 3", len(got))
	}
}

// TestDescribeCluster checks DescribeCluster and Metadata agree on the
// single node, its address and the controller.
func TestDescribeCluster(t *testing.T) {
	b := brokertest.Start(t)
	cl := b.Client(t)
	ctx := testCtx(t, 10*time.Second)
	req := kmsg.NewPtrDescribeClusterRequest()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || resp.ClusterID != b.Node().ClusterID() || resp.ControllerID != 1 || len(resp.Brokers) != 1 {
		t.Fatalf("DescribeCluster: error %d cluster %q controller %d brokers %d; want cluster %q, controller 1, 1 broker",
			resp.ErrorCode, resp.ClusterID, resp.ControllerID, len(resp.Brokers), b.Node().ClusterID())
	}
	br := resp.Brokers[0]
	if got := br.Host + ":" + itoa(br.Port); br.NodeID != 1 || got != b.Addr() {
		t.Fatalf("broker %d at %s, want 1 at %s", br.NodeID, got, b.Addr())
	}
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if md.Cluster != b.Node().ClusterID() || md.Controller != 1 || len(md.Brokers) != 1 {
		t.Fatalf("metadata: cluster %q controller %d brokers %v", md.Cluster, md.Controller, md.Brokers)
	}
}
