package mirrorit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/admin"
)

// mirrorName is the mirror every test creates on its destination.
const mirrorName = "m1"

// side is one cluster of a test: a single Strait node, a three-node Strait
// cluster or franz-go's kfake (exactly one is set).
type side struct {
	name string
	one  *brokertest.Broker
	many *brokertest.Cluster
	fake *kfake.Cluster
	// clientOpts reach a secured cluster (TLS, SASL): every client the
	// test makes of this side starts with them.
	clientOpts []kgo.Opt
}

// startOne starts a single-node Strait cluster.
func startOne(t *testing.T, name string, opts ...brokertest.Option) *side {
	t.Helper()
	return &side{name: name, one: brokertest.Start(t, opts...)}
}

// startThree starts a three-node Strait cluster whose new topics have three
// replicas, two of them needed in sync for acks=all.
func startThree(t *testing.T, name string, opts ...brokertest.Option) *side {
	t.Helper()
	opts = append([]brokertest.Option{brokertest.WithConfig("default.replication.factor=3", "min.insync.replicas=2")}, opts...)
	return &side{name: name, many: brokertest.StartCluster(t, 3, opts...)}
}

// startFake starts franz-go's kfake with n brokers.
func startFake(t *testing.T, name string, n int, opts ...kfake.Opt) *side {
	t.Helper()
	kc, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(n)}, opts...)...)
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(kc.Close)
	return &side{name: name, fake: kc}
}

// seeds are the cluster's bootstrap addresses.
func (s *side) seeds() []string {
	switch {
	case s.one != nil:
		return []string{s.one.Addr()}
	case s.many != nil:
		return s.many.Addrs()
	default:
		return s.fake.ListenAddrs()
	}
}

// client is a kgo client of the cluster, closed when the test ends. Its
// metadata refreshes quickly, so it follows leader changes at once.
func (s *side) client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	all := append(append([]kgo.Opt{
		kgo.SeedBrokers(s.seeds()...),
		kgo.MetadataMinAge(50 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
	}, s.clientOpts...), opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		t.Fatalf("%s: new client: %v", s.name, err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func (s *side) admin(t testing.TB) *kadm.Client {
	t.Helper()
	return kadm.NewClient(s.client(t))
}

// createTopic creates a topic (Strait: with the cluster's default
// replication factor) and waits until every partition has a leader.
func (s *side) createTopic(t *testing.T, ctx context.Context, topic string, partitions int32) {
	t.Helper()
	if s.fake != nil {
		if err := s.fake.CreateTopic(topic, partitions, nil); err != nil {
			t.Fatalf("%s: create %s: %v", s.name, topic, err)
		}
		return
	}
	resp, err := s.admin(t).CreateTopic(ctx, partitions, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("%s: create %s: %v", s.name, topic, err)
	}
	if s.many != nil {
		s.many.WaitForISR(t, topic, 3, 30*time.Second)
	}
}

// leader is the partition's leader per the newest metadata image (Strait
// clusters only).
func (s *side) leader(topic string, p int32) int32 {
	if s.many != nil {
		return s.many.Leader(topic, p)
	}
	return 1
}

// endOffsets are the high watermarks of every partition of topic.
func (s *side) endOffsets(t testing.TB, ctx context.Context, topic string) map[int32]int64 {
	t.Helper()
	for attempt := 0; ; attempt++ {
		out, err := listEnds(ctx, s.admin(t), topic)
		if err == nil {
			return out
		}
		if attempt == 50 || ctx.Err() != nil {
			t.Fatalf("%s: end offsets of %s: %v", s.name, topic, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pair is a source and a destination with a mirror client on the
// destination; ctx bounds the whole test.
type pair struct {
	t        *testing.T
	ctx      context.Context
	src, dst *side
	mirror   *admin.Client
	began    time.Time
}

func newPair(t *testing.T, timeout time.Duration, src, dst *side) *pair {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return &pair{t: t, ctx: ctx, src: src, dst: dst, mirror: mirrorClient(t, dst), began: time.Now()}
}

// mirrorClient is the Go admin client of mirrors, bootstrapped at s.
func mirrorClient(t *testing.T, s *side) *admin.Client {
	t.Helper()
	c, err := admin.NewClient(s.seeds(), append([]kgo.Opt{kgo.MetadataMinAge(50 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond })}, s.clientOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// logf logs with the time since the pair was set up.
func (p *pair) logf(format string, args ...any) {
	p.t.Helper()
	p.t.Logf("%6.2fs "+format, append([]any{time.Since(p.began).Seconds()}, args...)...)
}

// createMirror creates the mirror on the destination pointing at the
// source's bootstrap addresses.
func (p *pair) createMirror(extra ...string) {
	p.t.Helper()
	cfg := map[string]string{"bootstrap.servers": strings.Join(p.src.seeds(), ",")}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		cfg[k] = v
	}
	if err := p.mirror.CreateMirror(p.ctx, mirrorName, cfg); err != nil {
		p.t.Fatalf("create mirror: %v", err)
	}
}

// topicsCall is StartMirrorTopics, StopMirrorTopics, ...
type topicsCall func(ctx context.Context, mirror string, topics ...string) (admin.TopicResults, error)

// call runs a per-topic mirror call and fails the test unless every topic
// succeeded.
func (p *pair) call(what string, f topicsCall, topics ...string) {
	p.t.Helper()
	rs, err := f(p.ctx, mirrorName, topics...)
	if err != nil {
		p.t.Fatalf("%s %v: %v", what, topics, err)
	}
	if f := rs.Failed(); len(f) > 0 {
		p.t.Fatalf("%s %v: %+v", what, topics, f)
	}
	if m := rs.Missing(topics); len(m) > 0 {
		p.t.Fatalf("%s: no result for %v", what, m)
	}
	p.logf("%s %v", what, topics)
}

func (p *pair) start(topics ...string) {
	p.t.Helper()
	p.call("start", p.mirror.StartMirrorTopics, topics...)
}
func (p *pair) stop(topics ...string) {
	p.t.Helper()
	p.call("stop", p.mirror.StopMirrorTopics, topics...)
}
func (p *pair) pause(topics ...string) {
	p.t.Helper()
	p.call("pause", p.mirror.PauseMirrorTopics, topics...)
}
func (p *pair) resume(topics ...string) {
	p.t.Helper()
	p.call("resume", p.mirror.ResumeMirrorTopics, topics...)
}

// describe is the destination's view of topic in the mirror (partitions
// sorted), or an error.
func (p *pair) describe(topic string) (admin.TopicDescription, error) {
	ds, err := p.mirror.DescribeMirrors(p.ctx, mirrorName)
	if err != nil {
		return admin.TopicDescription{}, err
	}
	if len(ds) != 1 || ds[0].Err != nil {
		return admin.TopicDescription{}, fmt.Errorf("describe %s: %+v", mirrorName, ds)
	}
	for _, td := range ds[0].Topics {
		if td.Name == topic {
			return td, nil
		}
	}
	return admin.TopicDescription{}, fmt.Errorf("describe %s: topic %s not listed in %+v", mirrorName, topic, ds[0].Topics)
}

func formatPartitions(td admin.TopicDescription) string {
	var b strings.Builder
	for _, pd := range td.Partitions {
		fmt.Fprintf(&b, " [p%d %s srcHW=%d dstLEO=%d lag=%d lme=%d skipped=%d err=%q]", pd.Partition, pd.State,
			pd.SourceHighWatermark, pd.DestinationLogEndOffset, pd.Lag, pd.LastMirrorEpoch, pd.OffsetsSkipped, pd.LastError)
	}
	return b.String()
}

// waitFor polls cond every 50 ms until it returns "" (done), failing the
// test after timeout with the last thing cond said.
func (p *pair) waitFor(timeout time.Duration, what string, cond func() string) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		if last = cond(); last == "" {
			return
		}
		if time.Now().After(deadline) || p.ctx.Err() != nil {
			p.t.Fatalf("timed out after %v waiting for %s; last: %s", timeout, what, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitState waits until every partition of topic is in state (as the
// destination's DescribeMirrors shows it).
func (p *pair) waitState(topic, state string, partitions int, timeout time.Duration) admin.TopicDescription {
	p.t.Helper()
	var td admin.TopicDescription
	p.waitFor(timeout, fmt.Sprintf("%s: every partition %s", topic, state), func() string {
		var err error
		if td, err = p.describe(topic); err != nil {
			return err.Error()
		}
		if len(td.Partitions) != partitions {
			return fmt.Sprintf("%d partitions described, want %d:%s", len(td.Partitions), partitions, formatPartitions(td))
		}
		for _, pd := range td.Partitions {
			if pd.State != state {
				return formatPartitions(td)
			}
		}
		return ""
	})
	p.logf("%s: %s", topic, formatPartitions(td))
	return td
}

// waitMirroring waits until every partition of topic is MIRRORING with lag
// 0 and the destination has everything the source has: its log end offset
// (DescribeMirrors) and its high watermark (ListOffsets) equal the source's
// high watermark.
func (p *pair) waitMirroring(topic string, partitions int, timeout time.Duration) {
	p.t.Helper()
	var td admin.TopicDescription
	p.waitFor(timeout, fmt.Sprintf("%s: every partition MIRRORING with lag 0", topic), func() string {
		var err error
		if td, err = p.describe(topic); err != nil {
			return err.Error()
		}
		if len(td.Partitions) != partitions {
			return fmt.Sprintf("%d partitions described, want %d:%s", len(td.Partitions), partitions, formatPartitions(td))
		}
		srcHW := p.src.endOffsets(p.t, p.ctx, topic)
		dstHW := p.dst.endOffsets(p.t, p.ctx, topic)
		for _, pd := range td.Partitions {
			if pd.State != "MIRRORING" || pd.Lag != 0 || pd.DestinationLogEndOffset != srcHW[pd.Partition] || dstHW[pd.Partition] != srcHW[pd.Partition] {
				return fmt.Sprintf("source HW %v, destination HW %v;%s", srcHW, dstHW, formatPartitions(td))
			}
		}
		return ""
	})
	p.logf("%s mirrored:%s", topic, formatPartitions(td))
}

// checkIdentity compares topic on both sides and fails the test unless
// they are identical and at least wantRecords records were compared.
func (p *pair) checkIdentity(topic string, wantRecords int64) *Report {
	p.t.Helper()
	r, _, _ := identity(p.t, p.ctx, p.src, p.dst, topic)
	p.logf("identity %v", r)
	assertIdentical(p.t, r, wantRecords)
	return r
}

func assertIdentical(t *testing.T, r *Report, wantRecords int64) {
	t.Helper()
	for _, e := range r.Examples {
		t.Error(e)
	}
	if !r.OK() {
		t.Fatalf("not identical: %v", r)
	}
	if r.Records < wantRecords {
		t.Fatalf("compared %d records, want at least %d", r.Records, wantRecords)
	}
}

// startOffsets are the destination's log start offsets of topic.
func startOffsets(t testing.TB, p *pair, topic string) map[int32]int64 {
	t.Helper()
	l, err := p.dst.admin(t).ListStartOffsets(p.ctx, topic)
	if err == nil {
		err = l.Error()
	}
	if err != nil {
		t.Fatalf("start offsets of %s: %v", topic, err)
	}
	out := map[int32]int64{}
	l.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// errCode is the Kafka error code of err (0 for nil, -1 for errors that
// carry none).
func errCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return -1
}

// adminTopic is a mirror topic as DescribeMirrors shows it.
type adminTopic = admin.TopicDescription

func newAdm(cl *kgo.Client) *kadm.Client { return kadm.NewClient(cl) }
