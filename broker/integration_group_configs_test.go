package broker_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
)

// groupOp is one IncrementalAlterConfigs operation on a group config.
type groupOp struct {
	op          kmsg.IncrementalAlterConfigOp
	name, value string
}

// alterGroupConfigs sends IncrementalAlterConfigs for one GROUP resource
// and returns its error and message.
func alterGroupConfigs(t testing.TB, cl *kgo.Client, group string, ops ...groupOp) (error, string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for _, o := range ops {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Op, c.Name = o.op, o.name
		if o.op != kmsg.IncrementalAlterConfigOpDelete {
			c.Value = kmsg.StringPtr(o.value)
		}
		r.Configs = append(r.Configs, c)
	}
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(testCtx(t, 10*time.Second), cl)
	if err != nil || len(resp.Resources) != 1 {
		t.Fatalf("IncrementalAlterConfigs: %v %+v", err, resp)
	}
	rr := resp.Resources[0]
	if rr.ResourceType != kmsg.ConfigResourceTypeGroupConfig || rr.ResourceName != group {
		t.Fatalf("answered for %v %q", rr.ResourceType, rr.ResourceName)
	}
	msg := ""
	if rr.ErrorMessage != nil {
		msg = *rr.ErrorMessage
	}
	return kerr.ErrorForCode(rr.ErrorCode), msg
}

// describeGroupConfigs describes a group's configs (v4, synonyms and
// documentation) as "value (SOURCE) [synonyms]" by key.
func describeGroupConfigs(t testing.TB, cl *kgo.Client, group string) map[string]string {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms, req.IncludeDocumentation = true, true
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	req.Resources = append(req.Resources, r)
	resp, err := req.RequestWith(testCtx(t, 10*time.Second), cl)
	if err != nil || len(resp.Resources) != 1 {
		t.Fatalf("DescribeConfigs: %v %+v", err, resp)
	}
	rr := resp.Resources[0]
	if err := kerr.ErrorForCode(rr.ErrorCode); err != nil {
		t.Fatalf("DescribeConfigs %s: %v", group, err)
	}
	out := map[string]string{}
	for _, c := range rr.Configs {
		var syns []string
		for _, s := range c.ConfigSynonyms {
			syns = append(syns, fmt.Sprintf("%s=%s(%s)", s.Name, deref(s.Value), s.Source))
		}
		if c.ReadOnly || c.IsSensitive || c.Documentation == nil || *c.Documentation == "" {
			t.Errorf("%s: read-only %v, sensitive %v, documentation %v", c.Name, c.ReadOnly, c.IsSensitive, c.Documentation)
		}
		out[c.Name] = fmt.Sprintf("%s (%s) [%s]", deref(c.Value), c.Source, strings.Join(syns, " "))
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// groupConfigsBroker lets consumer groups go down to a 1 s session and a
// 100 ms heartbeat interval (group.consumer.min.*), keeping Kafka's 45 s
// session and a 250 ms heartbeat interval as the broker's own.
var groupConfigsBroker = []string{
	"group.consumer.min.session.timeout.ms=1000",
	"group.consumer.heartbeat.interval.ms=250",
	"group.consumer.min.heartbeat.interval.ms=100",
}

// TestGroupConfigs: the GROUP config resource (Kafka's type 32) over real
// sockets: IncrementalAlterConfigs sets and deletes a group's configs,
// DescribeConfigs answers every group config with its source (the group's
// GROUP_CONFIG, else the broker's value as DEFAULT_CONFIG), bad values and
// unknown keys are INVALID_CONFIG with Kafka's message naming the key,
// ListConfigResources lists the group, the share partitions see the
// group's share.auto.offset.reset, and all of it survives a restart.
func TestGroupConfigs(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithConfig(groupConfigsBroker...))
	cl := b.Client(t)
	const group = "configured"
	setOp := kmsg.IncrementalAlterConfigOpSet

	if err, msg := alterGroupConfigs(t, cl, group,
		groupOp{setOp, "share.auto.offset.reset", "earliest"},
		groupOp{setOp, "consumer.session.timeout.ms", "2000"},
		groupOp{setOp, "share.isolation.level", "read_committed"}); err != nil {
		t.Fatalf("set: %v %s", err, msg)
	}
	want := map[string]string{
		"share.auto.offset.reset":        "earliest (GROUP_CONFIG) [share.auto.offset.reset=earliest(GROUP_CONFIG)]",
		"consumer.session.timeout.ms":    "2000 (GROUP_CONFIG) [consumer.session.timeout.ms=2000(GROUP_CONFIG)]",
		"share.isolation.level":          "read_committed (GROUP_CONFIG) [share.isolation.level=read_committed(GROUP_CONFIG)]",
		"consumer.heartbeat.interval.ms": "250 (DEFAULT_CONFIG) [consumer.heartbeat.interval.ms=250(DEFAULT_CONFIG)]",
		"share.record.lock.duration.ms":  "30000 (DEFAULT_CONFIG) [share.record.lock.duration.ms=30000(DEFAULT_CONFIG)]",
		"share.session.timeout.ms":       "45000 (DEFAULT_CONFIG) [share.session.timeout.ms=45000(DEFAULT_CONFIG)]",
	}
	check := func(when string) {
		t.Helper()
		got := describeGroupConfigs(t, cl, group)
		if len(got) != 11 {
			t.Errorf("%s: %d group configs described, want Kafka 4.2's 11: %v", when, len(got), got)
		}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s: %s = %s, want %s", when, k, got[k], w)
			}
		}
	}
	check("after the set")

	// Bad values and unknown keys: INVALID_CONFIG naming the key, and
	// nothing changes.
	for _, tc := range []struct {
		op   groupOp
		code *kerr.Error
		msg  string
	}{
		{groupOp{setOp, "consumer.session.timeout.ms", "500"}, kerr.InvalidConfig,
			"consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"},
		{groupOp{setOp, "consumer.session.timeout.ms", "70000"}, kerr.InvalidConfig,
			"consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms"},
		{groupOp{setOp, "consumer.heartbeat.interval.ms", "2000"}, kerr.InvalidConfig,
			"consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms"},
		{groupOp{setOp, "share.auto.offset.reset", "sometime"}, kerr.InvalidConfig,
			"Invalid value sometime for configuration share.auto.offset.reset"},
		{groupOp{setOp, "share.record.lock.duration.ms", "soon"}, kerr.InvalidConfig,
			"Invalid value soon for configuration share.record.lock.duration.ms: Not a number of type INT"},
		{groupOp{setOp, "consumer.session.timeout", "3000"}, kerr.InvalidConfig,
			"Unknown group config name: consumer.session.timeout"},
		{groupOp{kmsg.IncrementalAlterConfigOpAppend, "share.auto.offset.reset", "latest"}, kerr.InvalidConfig,
			"Can't APPEND to key share.auto.offset.reset because its type is not LIST."},
	} {
		err, msg := alterGroupConfigs(t, cl, group, tc.op)
		if err != tc.code || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s %s=%s: %v %q, want %v %q", tc.op.op, tc.op.name, tc.op.value, err, msg, tc.code, tc.msg)
		}
	}
	if err, msg := alterGroupConfigs(t, cl, "", groupOp{setOp, "share.auto.offset.reset", "earliest"}); err != kerr.InvalidRequest {
		t.Errorf("the default group: %v %q", err, msg)
	}
	check("after the refused alters")

	// ListConfigResources lists the group (and only groups with configs).
	if err, msg := alterGroupConfigs(t, cl, "emptied", groupOp{setOp, "share.auto.offset.reset", "earliest"}); err != nil {
		t.Fatal(err, msg)
	}
	if err, msg := alterGroupConfigs(t, cl, "emptied", groupOp{kmsg.IncrementalAlterConfigOpDelete, "share.auto.offset.reset", ""}); err != nil {
		t.Fatal(err, msg)
	}
	adm := b.Admin(t)
	listed, err := adm.ListConfigResources(testCtx(t, 10*time.Second), kadm.ConfigResourceGroupConfig)
	if err != nil || listed.Err != nil {
		t.Fatalf("ListConfigResources: %v %v", err, listed.Err)
	}
	if got := listed.Names(); len(got) != 1 || got[0] != group {
		t.Fatalf("groups with configs: %v", got)
	}

	// The share partitions are told the group's settings.
	sc := b.Node().ShareGroupConfigForTest(group)
	if sc.AutoOffsetReset != "earliest" || !sc.ReadCommitted || sc.RecordLockDuration != 0 {
		t.Fatalf("share partitions see %+v", sc)
	}
	if sc := b.Node().ShareGroupConfigForTest("other"); sc.AutoOffsetReset != "" || sc.ReadCommitted {
		t.Fatalf("a group without configs: %+v", sc)
	}

	// DELETE goes back to the broker's value; the configs survive a
	// restart (they are in the metadata log).
	if err, msg := alterGroupConfigs(t, cl, group, groupOp{kmsg.IncrementalAlterConfigOpDelete, "share.isolation.level", ""}); err != nil {
		t.Fatal(err, msg)
	}
	want["share.isolation.level"] = "read_uncommitted (DEFAULT_CONFIG) [share.isolation.level=read_uncommitted(DEFAULT_CONFIG)]"
	b.Restart(t)
	cl = b.Client(t)
	check("after a restart")
}

// TestGroupConfigsDeleteGroupsKeepsThem: DeleteGroups deletes a group's
// offsets, not its configs, as Kafka 4.2 does (they are metadata-log
// records the group coordinator does not own).
func TestGroupConfigsDeleteGroupsKeepsThem(t *testing.T) {
	b := brokertest.Start(t)
	cl := b.Client(t)
	adm := b.Admin(t)
	createTopic(t, adm, "gc-delete", 1)
	const group = "gc-deleted"
	if err, msg := alterGroupConfigs(t, cl, group, groupOp{kmsg.IncrementalAlterConfigOpSet, "share.auto.offset.reset", "earliest"}); err != nil {
		t.Fatal(err, msg)
	}
	ctx := testCtx(t, 10*time.Second)
	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "gc-delete", Partition: 0, At: 0, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, group, offsets); err != nil {
		t.Fatal(err)
	}
	deleted, err := adm.DeleteGroups(ctx, group)
	if err != nil || deleted[group].Err != nil {
		t.Fatalf("DeleteGroups: %v %v", err, deleted[group].Err)
	}
	if got := describeGroupConfigs(t, cl, group)["share.auto.offset.reset"]; !strings.HasPrefix(got, "earliest (GROUP_CONFIG)") {
		t.Fatalf("after DeleteGroups: share.auto.offset.reset = %s", got)
	}
}

// TestConsumerGroupFollowsGroupConfig: a KIP-848 member is told its
// group's consumer.heartbeat.interval.ms and fenced after its group's
// consumer.session.timeout.ms, not the broker's 45 s; an alter applies
// from the next heartbeat.
func TestConsumerGroupFollowsGroupConfig(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithConfig(groupConfigsBroker...))
	cl := b.Client(t)
	const group = "follows-config"
	setOp := kmsg.IncrementalAlterConfigOpSet
	if err, msg := alterGroupConfigs(t, cl, group,
		groupOp{setOp, "consumer.session.timeout.ms", "2000"},
		groupOp{setOp, "consumer.heartbeat.interval.ms", "500"}); err != nil {
		t.Fatal(err, msg)
	}

	heartbeat := func(memberID string, epoch int32) *kmsg.ConsumerGroupHeartbeatResponse {
		t.Helper()
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch = group, memberID, epoch
		req.RebalanceTimeoutMillis = -1
		if epoch == 0 {
			req.RebalanceTimeoutMillis = 30000
			req.SubscribedTopicNames = []string{"follows-config-topic"}
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		resp, err := req.RequestWith(testCtx(t, 10*time.Second), cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("heartbeat at epoch %d: %v %+v", epoch, err, resp)
		}
		return resp
	}
	members := func() int {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{group}
		resp, err := req.RequestWith(testCtx(t, 10*time.Second), cl)
		if err != nil || len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
			t.Fatalf("ConsumerGroupDescribe: %v %+v", err, resp)
		}
		return len(resp.Groups[0].Members)
	}

	const member = "member-one-aaaaaaaaaaa"
	resp := heartbeat(member, 0)
	if resp.HeartbeatIntervalMillis != 500 {
		t.Fatalf("joined with heartbeat interval %d ms, want the group's 500", resp.HeartbeatIntervalMillis)
	}
	if err, msg := alterGroupConfigs(t, cl, group, groupOp{setOp, "consumer.heartbeat.interval.ms", "700"}); err != nil {
		t.Fatal(err, msg)
	}
	if got := heartbeat(member, resp.MemberEpoch).HeartbeatIntervalMillis; got != 700 {
		t.Fatalf("heartbeat interval after the alter %d ms, want 700", got)
	}
	if n := members(); n != 1 {
		t.Fatalf("%d members after joining", n)
	}
	// The member goes silent: the group's 2 s session fences it long
	// before the broker's 45 s would (the bound is generous for a loaded
	// machine).
	deadline := time.Now().Add(20 * time.Second)
	for members() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the silent member was not fenced within 20 s; its group's session timeout is 2 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestShareGroupAutoOffsetResetEarliest: the reason share groups need group
// configs (franz-go's kgo.ShareGroup says so): with share.auto.offset.reset
// set to earliest, a franz-go share consumer that starts after the records
// were produced gets them all; without it, a share group only gets the
// records produced after it starts. And a share group's members are told
// its share.heartbeat.interval.ms.
func TestShareGroupAutoOffsetResetEarliest(t *testing.T) {
	ctx := testCtx(t, 60*time.Second)
	b := brokertest.Start(t)
	adm := b.Admin(t)
	const topic, group, partitions, perPartition = "backlog", "from-the-start", 3, 20
	createTopic(t, adm, topic, partitions)
	var backlog []*kgo.Record
	for i := range partitions * perPartition {
		backlog = append(backlog, &kgo.Record{Topic: topic, Partition: int32(i % partitions), Value: fmt.Appendf(nil, "%d", i)})
	}
	produceSync(t, b.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner())), backlog...)
	if err, msg := alterGroupConfigs(t, b.Client(t), group,
		groupOp{kmsg.IncrementalAlterConfigOpSet, "share.auto.offset.reset", "earliest"}); err != nil {
		t.Fatal(err, msg)
	}

	ledger := newShareLedger()
	stop := acceptAll(ctx, []*kgo.Client{shareConsumer(t, []string{b.Addr()}, group, topic)},
		func(who string, r *kgo.Record) { ledger.saw(who, r, true) })
	total := partitions * perPartition
	for ledger.acceptedCount() < total && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	if got := ledger.acceptedCount(); got != total {
		t.Fatalf("the share consumer accepted %d of the %d records produced before it started", got, total)
	}

	// A share group's members are told its share.heartbeat.interval.ms.
	const probe = "share-heartbeat-probe"
	if err, msg := alterGroupConfigs(t, b.Client(t), probe,
		groupOp{kmsg.IncrementalAlterConfigOpSet, "share.heartbeat.interval.ms", "7000"}); err != nil {
		t.Fatal(err, msg)
	}
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.GroupID, req.MemberID, req.MemberEpoch, req.SubscribedTopicNames = probe, "probe-member-aaaaaaaaaa", 0, []string{topic}
	resp, err := req.RequestWith(ctx, b.Client(t))
	if err != nil || resp.ErrorCode != 0 || resp.HeartbeatIntervalMillis != 7000 {
		t.Fatalf("ShareGroupHeartbeat: %v %+v, want the group's 7000 ms heartbeat interval", err, resp)
	}
}
