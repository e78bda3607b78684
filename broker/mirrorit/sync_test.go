package mirrorit

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/admin/cli"
)

// syncInterval is mirror.metadata.refresh.interval.ms in the sync tests.
const syncInterval = "mirror.metadata.refresh.interval.ms=300"

// TestSyncGroupOffsets: groups committing on the source get their offsets
// on the destination: a consumer of the group there resumes exactly where
// the source's left off (nothing read twice, nothing skipped), an offset
// beyond the destination's log is clamped to its end, an excluded group is
// never copied, and a group active on the destination is never
// overwritten.
func TestSyncGroupOffsets(t *testing.T) {
	t.Parallel()
	p := newPair(t, 60*time.Second, startOne(t, "source"), startOne(t, "destination"))
	const topic, partitions, perPartition = "orders", 2, 50
	p.src.createTopic(t, p.ctx, topic, partitions)
	writeEach(t, p, p.src, topic, partitions, perPartition, "g")
	p.createMirror(syncInterval, "mirror.groups.exclude=skip.*")
	p.start(topic)
	p.waitMirroring(topic, partitions, 20*time.Second)

	// A consumer of "busy" on the destination reads everything, commits
	// and stays in the group (Stable) for the rest of the test.
	busy := p.dst.client(t, kgo.ConsumerGroup("busy"), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	for read := 0; read < partitions*perPartition; {
		fs := busy.PollFetches(p.ctx)
		if p.ctx.Err() != nil {
			t.Fatalf("busy read %d records: %v", read, p.ctx.Err())
		}
		read += fs.NumRecords()
	}
	if err := busy.CommitUncommittedOffsets(p.ctx); err != nil {
		t.Fatal(err)
	}

	src := p.src.admin(t)
	commit := func(group string, offs map[int32]int64) {
		t.Helper()
		var os kadm.Offsets
		for part, at := range offs {
			os.Add(kadm.Offset{Topic: topic, Partition: part, At: at, LeaderEpoch: 0, Metadata: "meta-" + group})
		}
		resp, err := src.CommitOffsets(p.ctx, group, os)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatalf("commit %s on the source: %v", group, err)
		}
	}
	commit("g1", map[int32]int64{0: 30, 1: 20})
	commit("g2", map[int32]int64{0: 1_000_000, 1: 7})
	commit("skip-me", map[int32]int64{0: 5, 1: 5})
	commit("busy", map[int32]int64{0: 3, 1: 4})

	dst := p.dst.admin(t)
	fetch := func(group string) map[int32]kadm.Offset {
		t.Helper()
		os, err := dst.FetchOffsets(p.ctx, group)
		if err != nil {
			t.Fatalf("fetch %s on the destination: %v", group, err)
		}
		out := map[int32]kadm.Offset{}
		os.Each(func(o kadm.OffsetResponse) {
			if o.Topic == topic && o.Err == nil {
				out[o.Partition] = o.Offset
			}
		})
		return out
	}
	p.waitFor(15*time.Second, "g1 and g2 on the destination", func() string {
		g1, g2 := fetch("g1"), fetch("g2")
		if g1[0].At != 30 || g1[1].At != 20 || g2[0].At != perPartition || g2[1].At != 7 {
			return fmt.Sprintf("g1 %v g2 %v", g1, g2)
		}
		return ""
	})
	g1, g2 := fetch("g1"), fetch("g2")
	if g1[0].LeaderEpoch != 0 || g1[0].Metadata != "meta-g1" {
		t.Errorf("g1 p0 on the destination: epoch %d metadata %q, want the source's 0 and meta-g1", g1[0].LeaderEpoch, g1[0].Metadata)
	}
	if g2[0].LeaderEpoch != -1 {
		t.Errorf("g2 p0 clamped to %d keeps epoch %d, want -1", g2[0].At, g2[0].LeaderEpoch)
	}
	// Several more rounds: neither the excluded group nor the active one
	// are touched.
	time.Sleep(1200 * time.Millisecond)
	if got := fetch("skip-me"); len(got) != 0 {
		t.Errorf("excluded group skip-me synced: %v", got)
	}
	if got := fetch("busy"); got[0].At != perPartition || got[1].At != perPartition {
		t.Errorf("the active destination group busy was overwritten: %v, want %d on both", got, perPartition)
	}

	// g1 resumes on the destination where it left off on the source.
	cl := p.dst.client(t, kgo.ConsumerGroup("g1"), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	got := map[int32][]int64{}
	for n := 0; n < 2*perPartition-30-20; {
		fs := cl.PollFetches(p.ctx)
		if p.ctx.Err() != nil {
			t.Fatalf("g1 read %v: %v", got, p.ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) { got[r.Partition] = append(got[r.Partition], r.Offset) })
		n += fs.NumRecords()
	}
	for part, from := range map[int32]int64{0: 30, 1: 20} {
		var want []int64
		for o := from; o < perPartition; o++ {
			want = append(want, o)
		}
		if !slices.Equal(got[part], want) {
			t.Errorf("g1 p%d read offsets %v, want %d..%d once each", part, got[part], from, perPartition-1)
		}
	}
	p.logf("g1 resumed: p0 %d records, p1 %d records", len(got[0]), len(got[1]))
}

// TestSyncTopicConfigsPartitionsAndDeletion: source topic config changes
// (set and deleted; excluded properties aside) and a partition increase
// appear on the destination; a topic deleted on the source stops.
func TestSyncTopicConfigsPartitionsAndDeletion(t *testing.T) {
	t.Parallel()
	p := newPair(t, 60*time.Second, startOne(t, "source"), startOne(t, "destination"))
	p.src.createTopic(t, p.ctx, "cfg", 1)
	p.src.createTopic(t, p.ctx, "gone", 1)
	src, dst := p.src.admin(t), p.dst.admin(t)
	alter := func(ops ...kadm.AlterConfig) {
		t.Helper()
		resp, err := src.AlterTopicConfigs(p.ctx, ops, "cfg")
		if err == nil {
			_, err = resp.On("cfg", func(r *kadm.AlterConfigsResponse) error { return r.Err })
		}
		if err != nil {
			t.Fatalf("alter source configs: %v", err)
		}
	}
	set := func(k, v string) kadm.AlterConfig { return kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v} }
	alter(set("retention.ms", "123456"), set("max.message.bytes", "200000"), set("min.insync.replicas", "1"))
	p.createMirror(syncInterval)
	p.start("cfg", "gone")

	dynamic := func() map[string]string {
		rc, err := dst.DescribeTopicConfigs(p.ctx, "cfg")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, c := range rc[0].Configs {
			if c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil {
				out[c.Key] = *c.Value
			}
		}
		return out
	}
	want := func(w string) func() string {
		return func() string {
			d := dynamic()
			delete(d, "mirror.name")
			if got := fmt.Sprint(d); got != w {
				return got
			}
			return ""
		}
	}
	// min.insync.replicas is in mirror.topic.properties.exclude's default.
	p.waitFor(10*time.Second, "the source's configs", want("map[max.message.bytes:200000 retention.ms:123456]"))
	alter(set("retention.ms", "654321"), kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "max.message.bytes"})
	p.waitFor(10*time.Second, "the changed configs", want("map[retention.ms:654321]"))

	if resp, err := src.UpdatePartitions(p.ctx, 3, "cfg"); err != nil || resp.Error() != nil {
		t.Fatalf("source partitions: %v %v", err, resp.Error())
	}
	writeEach(t, p, p.src, "cfg", 3, 10, "c")
	p.waitMirroring("cfg", 3, 20*time.Second)

	if resp, err := src.DeleteTopics(p.ctx, "gone"); err != nil || resp.Error() != nil {
		t.Fatalf("delete source topic: %v %v", err, resp.Error())
	}
	p.waitState("gone", "STOPPED", 1, 15*time.Second)
	var warned bool
	for _, line := range strings.Split(p.dst.one.Logs(), "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, `msg="source topic deleted; stopping its mirror topic"`) &&
			strings.Contains(line, "mirror="+mirrorName) && strings.Contains(line, "topic=gone") {
			warned = true
		}
	}
	if !warned {
		t.Error("no WARN naming the mirror and the deleted source topic gone")
	}
}

// TestSyncACLs: the source ACLs mirror.acl.include selects appear on the
// destination and disappear with the source's; others are never copied,
// and the destination's own ACLs are never deleted.
func TestSyncACLs(t *testing.T) {
	t.Parallel()
	p := newPair(t, 60*time.Second, startOne(t, "source"), startOne(t, "destination"))
	src, dst := p.src.client(t), p.dst.client(t)
	type acl struct{ name, principal, op string }
	change := func(cl *kgo.Client, create bool, as ...acl) {
		t.Helper()
		var err error
		if create {
			req := kmsg.NewPtrCreateACLsRequest()
			for _, a := range as {
				c := kmsg.NewCreateACLsRequestCreation()
				c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, a.name, kmsg.ACLResourcePatternTypeLiteral
				c.Principal, c.Host, c.PermissionType = a.principal, "*", kmsg.ACLPermissionTypeAllow
				c.Operation, _ = kmsg.ParseACLOperation(a.op)
				req.Creations = append(req.Creations, c)
			}
			var resp *kmsg.CreateACLsResponse
			if resp, err = req.RequestWith(p.ctx, cl); err == nil {
				for _, r := range resp.Results {
					if r.ErrorCode != 0 {
						err = fmt.Errorf("code %d", r.ErrorCode)
					}
				}
			}
		} else {
			req := kmsg.NewPtrDeleteACLsRequest()
			for _, a := range as {
				f := kmsg.NewDeleteACLsRequestFilter()
				f.ResourceType, f.ResourceName, f.ResourcePatternType = kmsg.ACLResourceTypeTopic, &a.name, kmsg.ACLResourcePatternTypeLiteral
				f.Principal, f.Host, f.PermissionType = &a.principal, kmsg.StringPtr("*"), kmsg.ACLPermissionTypeAllow
				f.Operation, _ = kmsg.ParseACLOperation(a.op)
				req.Filters = append(req.Filters, f)
			}
			_, err = req.RequestWith(p.ctx, cl)
		}
		if err != nil {
			t.Fatalf("ACLs %v: %v", as, err)
		}
	}
	list := func() string {
		req := kmsg.NewPtrDescribeACLsRequest()
		req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
		req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		resp, err := req.RequestWith(p.ctx, dst)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range resp.Resources {
			for _, a := range r.ACLs {
				out = append(out, fmt.Sprintf("%s/%s/%s", r.ResourceName, a.Principal, strings.ToUpper(a.Operation.String())))
			}
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	aliceRead := acl{"orders1", "User:alice", "READ"}
	change(src, true, aliceRead, acl{"orders1", "User:bob", "READ"}, acl{"other", "User:alice", "READ"})
	// The destination's own ACLs, one the rules do not select, one they
	// do: neither is the syncer's to delete.
	change(dst, true, acl{"orders2", "User:carol", "READ"}, acl{"orders5", "User:alice", "READ"})
	p.createMirror(syncInterval, "mirror.acl.include=TOPIC;orders.*;*;*;User:alice")

	p.waitFor(10*time.Second, "alice's ACL on the destination", func() string {
		if got := list(); got != "orders1/User:alice/READ orders2/User:carol/READ orders5/User:alice/READ" {
			return got
		}
		return ""
	})
	// An operator's ACL the rules select, made after the syncer started.
	change(dst, true, acl{"orders3", "User:alice", "WRITE"})
	change(src, true, acl{"orders9", "User:alice", "DESCRIBE"})
	change(src, false, aliceRead)
	p.waitFor(10*time.Second, "the source's change on the destination", func() string {
		if got := list(); got != "orders2/User:carol/READ orders3/User:alice/WRITE orders5/User:alice/READ orders9/User:alice/DESCRIBE" {
			return got
		}
		return ""
	})
}

// TestSyncTopicDiscovery: `strait mirror start NAME --include --exclude`
// appends to mirror.topics.include/exclude, and the source topics
// matching them start mirroring by themselves, those there before and
// those created later; others never do. The sync counters are on the
// Prometheus endpoint.
func TestSyncTopicDiscovery(t *testing.T) {
	t.Parallel()
	p := newPair(t, 60*time.Second, startOne(t, "source"), startOne(t, "destination", brokertest.WithMetrics()))
	for _, topic := range []string{"auto-1", "auto-skip", "manual"} {
		p.src.createTopic(t, p.ctx, topic, 2)
		writeEach(t, p, p.src, topic, 2, 5, topic)
	}
	p.createMirror(syncInterval)
	var out, errb bytes.Buffer
	code := cli.Main(p.ctx, []string{"--bootstrap-server", p.dst.seeds()[0], "start", mirrorName, "--include", "auto-.*", "--exclude", ".*-skip"}, &out, &errb)
	if code != 0 || errb.Len() > 0 {
		t.Fatalf("strait mirror start --include: exit %d\n%s%s", code, out.String(), errb.String())
	}
	p.logf("strait mirror start --include: %s", out.String())
	cfgs := p.dst.one.Node().Image().MirrorConfig(mirrorName)
	if cfgs["mirror.topics.include"] != "auto-.*" || cfgs["mirror.topics.exclude"] != "__.*,.*-skip" {
		t.Fatalf("mirror configs after start --include: %v", cfgs)
	}
	p.waitMirroring("auto-1", 2, 15*time.Second)

	p.src.createTopic(t, p.ctx, "auto-2", 3)
	writeEach(t, p, p.src, "auto-2", 3, 5, "auto-2")
	p.waitMirroring("auto-2", 3, 15*time.Second)
	p.checkIdentity("auto-2", 15)

	time.Sleep(600 * time.Millisecond) // two more rounds
	topics, err := p.dst.admin(t).ListTopics(p.ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := slices.DeleteFunc(topics.Names(), func(n string) bool { return strings.HasPrefix(n, "__") })
	if got := strings.Join(names, " "); got != "auto-1 auto-2" {
		t.Errorf("destination topics %q, want only auto-1 auto-2", got)
	}

	m := mirrorMetrics(t, p.ctx, p.dst.one.MetricsAddr())
	if m["strait_mirror_sync_rounds_total"] < 3 {
		t.Errorf("sync rounds %v, want at least 3", m)
	}
	for _, name := range []string{"strait_mirror_topic_metadata_refresh_errors_total", "strait_mirror_topic_config_sync_errors_total",
		"strait_mirror_consumer_group_offset_sync_errors_total", "strait_mirror_acl_sync_errors_total"} {
		if _, ok := m[name]; !ok {
			t.Errorf("%s{mirror=%q} not exported: %v", name, mirrorName, m)
		}
	}
	p.logf("sync metrics %v", m)
}
