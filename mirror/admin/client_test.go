package admin_test

import (
	"context"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/mirror/admin"
	"github.com/strait-io/strait/mirror/admin/admintest"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

func newClient(t *testing.T, b *admintest.Broker) *admin.Client {
	t.Helper()
	c, err := admin.NewClient([]string{b.Addr()}, kgo.RetryTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// only returns the single mirror request the broker received.
func only[T kmsg.Request](t *testing.T, b *admintest.Broker) T {
	t.Helper()
	got := b.Received()
	if len(got) != 1 {
		t.Fatalf("broker received %d mirror requests, want 1: %+v", len(got), got)
	}
	r, ok := got[0].(T)
	if !ok {
		t.Fatalf("broker received %T", got[0])
	}
	return r
}

func TestCreateMirrorSendsSortedConfigs(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyCreateMirror, func(_ context.Context, req kmsg.Request) kmsg.Response {
		return req.ResponseKind()
	})
	c := newClient(t, b)
	err := c.CreateMirror(testCtx(t), "m1", map[string]string{
		"mirror.topics.include": "x",
		"bootstrap.servers":     "src:9092",
		"security.protocol":     "PLAINTEXT",
	})
	if err != nil {
		t.Fatal(err)
	}
	req := only[*mirrormsg.CreateMirrorRequest](t, b)
	if req.MirrorName != "m1" {
		t.Fatalf("MirrorName %q", req.MirrorName)
	}
	var got []string
	for _, c := range req.Config {
		got = append(got, c.Name+"="+*c.Value)
	}
	want := []string{"bootstrap.servers=src:9092", "mirror.topics.include=x", "security.protocol=PLAINTEXT"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("configs %q, want %q", got, want)
	}
}

func TestRequestLevelErrors(t *testing.T) {
	msg := kmsg.StringPtr("mirror m1 has 2 topics not stopped")
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyCreateMirror, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.CreateMirrorResponse)
		r.ErrorCode = mirrormsg.ClusterMirrorAlreadyExists.Code // 136: kerr says CONTROLLER_ID_NOT_REGISTERED
		return r
	})
	b.Handle(mirrormsg.KeyDeleteMirror, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.DeleteMirrorResponse)
		r.ErrorCode, r.ErrorMessage = mirrormsg.ClusterMirrorNotEmpty.Code, msg
		return r
	})
	b.Handle(mirrormsg.KeyListMirrors, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.ListMirrorsResponse)
		r.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return r
	})
	b.Handle(mirrormsg.KeyDescribeMirrors, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.DescribeMirrorsResponse)
		r.ErrorCode = mirrormsg.ClusterMirrorAuthorizationFailed.Code
		return r
	})
	b.Handle(mirrormsg.KeyStartMirrorTopics, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.StartMirrorTopicsResponse)
		r.ErrorCode, r.ErrorMessage = kerr.InvalidRegularExpression.Code, kmsg.StringPtr("bad")
		return r
	})
	b.Handle(mirrormsg.KeyStopMirrorTopics, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.StopMirrorTopicsResponse)
		r.ErrorCode = mirrormsg.UnknownClusterMirror.Code
		return r
	})
	b.Handle(mirrormsg.KeyPauseMirrorTopics, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.PauseMirrorTopicsResponse)
		r.ErrorCode = mirrormsg.UnknownClusterMirror.Code
		return r
	})
	b.Handle(mirrormsg.KeyResumeMirrorTopics, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.ResumeMirrorTopicsResponse)
		r.ErrorCode = mirrormsg.UnknownClusterMirror.Code
		return r
	})
	c := newClient(t, b)
	ctx := testCtx(t)
	_, listErr := c.ListMirrors(ctx)
	_, descErr := c.DescribeMirrors(ctx, "m1")
	_, startErr := c.StartMirrorTopics(ctx, "m1", "t")
	_, stopErr := c.StopMirrorTopics(ctx, "m1", "t")
	_, pauseErr := c.PauseMirrorTopics(ctx, "m1", "t")
	_, resumeErr := c.ResumeMirrorTopics(ctx, "m1", "t")
	for _, tc := range []struct {
		err    error
		is     *kerr.Error
		text   string
		detail string
	}{
		{c.CreateMirror(ctx, "m1", nil), mirrormsg.ClusterMirrorAlreadyExists,
			"CreateMirror m1: CLUSTER_MIRROR_ALREADY_EXISTS: The cluster mirror already exists.", "The cluster mirror already exists."},
		{c.DeleteMirror(ctx, "m1"), mirrormsg.ClusterMirrorNotEmpty,
			"DeleteMirror m1: CLUSTER_MIRROR_NOT_EMPTY: mirror m1 has 2 topics not stopped", *msg},
		{listErr, kerr.ClusterAuthorizationFailed, "ListMirrors: CLUSTER_AUTHORIZATION_FAILED: " + kerr.ClusterAuthorizationFailed.Description, kerr.ClusterAuthorizationFailed.Description},
		{descErr, mirrormsg.ClusterMirrorAuthorizationFailed, "DescribeMirrors: CLUSTER_MIRROR_AUTHORIZATION_FAILED: Cluster mirror authorization failed.", "Cluster mirror authorization failed."},
		{startErr, kerr.InvalidRegularExpression, "StartMirrorTopics m1: INVALID_REGULAR_EXPRESSION: bad", "bad"},
		{stopErr, mirrormsg.UnknownClusterMirror, "StopMirrorTopics m1: UNKNOWN_CLUSTER_MIRROR: The cluster mirror does not exist.", "The cluster mirror does not exist."},
		{pauseErr, mirrormsg.UnknownClusterMirror, "PauseMirrorTopics m1: UNKNOWN_CLUSTER_MIRROR: The cluster mirror does not exist.", "The cluster mirror does not exist."},
		{resumeErr, mirrormsg.UnknownClusterMirror, "ResumeMirrorTopics m1: UNKNOWN_CLUSTER_MIRROR: The cluster mirror does not exist.", "The cluster mirror does not exist."},
	} {
		if !errors.Is(tc.err, tc.is) {
			t.Errorf("%v: not %s", tc.err, tc.is.Message)
			continue
		}
		if tc.err.Error() != tc.text {
			t.Errorf("error text %q, want %q", tc.err.Error(), tc.text)
		}
		var ae *admin.Error
		if !errors.As(tc.err, &ae) || ae.Detail() != tc.detail {
			t.Errorf("%v: *admin.Error %+v, detail want %q", tc.err, ae, tc.detail)
		}
		if got := admin.ErrorName(tc.err); got != tc.is.Message {
			t.Errorf("ErrorName %q, want %q", got, tc.is.Message)
		}
	}
	if n := len(b.Received()); n != 8 {
		t.Fatalf("broker received %d requests, want 8", n)
	}
}

func TestListMirrorsSorted(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyListMirrors, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.ListMirrorsResponse)
		for _, n := range []string{"zeta", "alpha"} {
			m := mirrormsg.NewListMirrorsResponseListedMirror()
			m.MirrorName, m.SourceBootstrap, m.SourceClusterID, m.TopicCount = n, n+":9092", "id-"+n, int32(len(n))
			r.Mirrors = append(r.Mirrors, m)
		}
		return r
	})
	got, err := newClient(t, b).ListMirrors(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []admin.ListedMirror{
		{Name: "alpha", SourceBootstrap: "alpha:9092", SourceClusterID: "id-alpha", TopicCount: 5},
		{Name: "zeta", SourceBootstrap: "zeta:9092", SourceClusterID: "id-zeta", TopicCount: 4},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// describeHandler answers for m1 (two topics, partitions out of order) and
// m2 (an error), and for no other name.
func describeHandler(_ context.Context, req kmsg.Request) kmsg.Response {
	r := req.ResponseKind().(*mirrormsg.DescribeMirrorsResponse)
	m1 := mirrormsg.NewDescribeMirrorsResponseDescribedMirror()
	m1.MirrorName = "m1"
	for _, tn := range []string{"orders", "audit"} {
		tp := mirrormsg.NewDescribeMirrorsResponseTopicPartitions()
		tp.TopicName = tn
		for _, i := range []int32{1, 0} {
			p := mirrormsg.NewDescribeMirrorsResponsePartitionDetail()
			p.PartitionIndex, p.State = i, "MIRRORING"
			p.SourceOffset, p.DestinationOffset, p.Lag, p.LastMirrorEpoch = 100+int64(i), 90, 10+int64(i), 3
			p.LagMs = 700 + int64(i)
			p.DestinationHighWatermark, p.CommittedLag, p.LagMeasuredAtMs = 88, 9+int64(i), 1_700_000_000_000
			if tn == "audit" && i == 1 {
				p.State, p.ErrorMessage, p.OffsetsSkipped = "FAILED", kmsg.StringPtr("source topic id changed"), 7
				p.SourceOffset, p.DestinationOffset, p.Lag, p.LastMirrorEpoch = -1, -1, -1, -1
				p.LagMs, p.RetryCount = -1, 2                                              // LagMs at its default: not sent, decoded as -1
				p.DestinationHighWatermark, p.CommittedLag, p.LagMeasuredAtMs = -1, -1, -1 // likewise
			}
			tp.Partitions = append(tp.Partitions, p)
		}
		m1.Topics = append(m1.Topics, tp)
	}
	m2 := mirrormsg.NewDescribeMirrorsResponseDescribedMirror()
	m2.MirrorName, m2.ErrorCode = "m2", mirrormsg.ClusterMirrorAuthorizationFailed.Code
	r.Mirrors = append(r.Mirrors, m2, m1)
	return r
}

func TestDescribeMirrors(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyDescribeMirrors, describeHandler)
	c := newClient(t, b)
	ctx := testCtx(t)

	got, err := c.DescribeMirrors(ctx, "m1", "gone", "m2", "m1")
	if err != nil {
		t.Fatal(err)
	}
	if req := only[*mirrormsg.DescribeMirrorsRequest](t, b); !reflect.DeepEqual(req.MirrorNames, []string{"m1", "gone", "m2"}) {
		t.Fatalf("MirrorNames %q", req.MirrorNames)
	}
	if len(got) != 3 || got[0].Name != "m1" || got[1].Name != "gone" || got[2].Name != "m2" {
		t.Fatalf("mirrors %+v", got)
	}
	if got[0].Err != nil || !errors.Is(got[1].Err, mirrormsg.UnknownClusterMirror) || !errors.Is(got[2].Err, mirrormsg.ClusterMirrorAuthorizationFailed) {
		t.Fatalf("errors %v, %v, %v", got[0].Err, got[1].Err, got[2].Err)
	}
	measured := time.UnixMilli(1_700_000_000_000).UTC()
	want := []admin.TopicDescription{
		{Name: "audit", Partitions: []admin.PartitionDescription{
			{Partition: 0, State: "MIRRORING", SourceHighWatermark: 100, DestinationHighWatermark: 88, DestinationLogEndOffset: 90, Lag: 10, CommittedLag: 9, LagMs: 700, LagMeasuredAt: &measured, LastMirrorEpoch: 3},
			{Partition: 1, State: "FAILED", SourceHighWatermark: -1, DestinationHighWatermark: -1, DestinationLogEndOffset: -1, Lag: -1, LagUnknown: true, CommittedLag: -1, LagMs: -1, LastMirrorEpoch: -1, RetryCount: 2, OffsetsSkipped: 7, LastError: "source topic id changed"},
		}},
		{Name: "orders", Partitions: []admin.PartitionDescription{
			{Partition: 0, State: "MIRRORING", SourceHighWatermark: 100, DestinationHighWatermark: 88, DestinationLogEndOffset: 90, Lag: 10, CommittedLag: 9, LagMs: 700, LagMeasuredAt: &measured, LastMirrorEpoch: 3},
			{Partition: 1, State: "MIRRORING", SourceHighWatermark: 101, DestinationHighWatermark: 88, DestinationLogEndOffset: 90, Lag: 11, CommittedLag: 10, LagMs: 701, LagMeasuredAt: &measured, LastMirrorEpoch: 3},
		}},
	}
	if !reflect.DeepEqual(got[0].Topics, want) {
		t.Fatalf("topics %+v\nwant %+v", got[0].Topics, want)
	}

	// No names: every mirror, null on the wire, sorted by name.
	all, err := c.DescribeMirrors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Name != "m1" || all[1].Name != "m2" {
		t.Fatalf("all mirrors %+v", all)
	}
	if reqs := b.Received(); len(reqs) != 2 || reqs[1].(*mirrormsg.DescribeMirrorsRequest).MirrorNames != nil {
		t.Fatalf("second request %+v", reqs[len(reqs)-1])
	}
}

func TestTopicPatternMatchesOnlyTheTopic(t *testing.T) {
	for _, tc := range []struct {
		topic, pattern string
		no             []string
	}{
		{"orders", `^orders$`, []string{"orders2", "xorders", "order"}},
		{"a.b", `^a\.b$`, []string{"axb", "a.bc", "za.b"}},
		{"a-b_c.d", `^a-b_c\.d$`, []string{"a-b_cxd"}},
	} {
		p := admin.TopicPattern(tc.topic)
		if p != tc.pattern {
			t.Errorf("TopicPattern(%q) = %q, want %q", tc.topic, p, tc.pattern)
		}
		re := regexp.MustCompile(p)
		if !re.MatchString(tc.topic) {
			t.Errorf("%q does not match %q", p, tc.topic)
		}
		for _, n := range tc.no {
			if re.MatchString(n) {
				t.Errorf("%q matches %q", p, n)
			}
		}
	}
}

func TestStartMirrorTopics(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyStartMirrorTopics, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.StartMirrorTopicsResponse)
		r.MirrorName = "m1"
		ok := mirrormsg.NewStartMirrorTopicsResponseTopicResult()
		ok.Name = "orders"
		bad := mirrormsg.NewStartMirrorTopicsResponseTopicResult()
		bad.Name, bad.ErrorCode, bad.ErrorMessage = "a.b", mirrormsg.TopicAlreadyInClusterMirror.Code, kmsg.StringPtr("a.b is in mirror m0")
		r.Topics = append(r.Topics, ok, bad)
		return r
	})
	c := newClient(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rs, err := c.StartMirrorTopics(ctx, "m1", "orders", "a.b")
	if err != nil {
		t.Fatal(err)
	}
	req := only[*mirrormsg.StartMirrorTopicsRequest](t, b)
	if req.MirrorName != "m1" || !reflect.DeepEqual(req.IncludePatterns, []string{`^orders$`, `^a\.b$`}) || req.ExcludePatterns != nil {
		t.Fatalf("request %+v", req)
	}
	// The ctx had 5 s: the broker gets 90% of what was left.
	if req.TimeoutMs < 4000 || req.TimeoutMs > 4500 {
		t.Fatalf("TimeoutMs %d, want within (4000, 4500]", req.TimeoutMs)
	}
	if len(rs) != 2 || rs[0].Topic != "a.b" || rs[1].Topic != "orders" {
		t.Fatalf("results %+v", rs)
	}
	if !errors.Is(rs[0].Err, mirrormsg.TopicAlreadyInClusterMirror) || rs[0].Detail() != "a.b is in mirror m0" || rs[1].Err != nil || rs[1].Detail() != "" {
		t.Fatalf("results %+v", rs)
	}
	if f := rs.Failed(); len(f) != 1 || f[0].Topic != "a.b" {
		t.Fatalf("Failed %+v", f)
	}
	if _, ok := rs[0].Err.(*kerr.Error); !ok {
		t.Fatalf("per-topic Err is %T, want *kerr.Error", rs[0].Err)
	}

	// Without a deadline the broker gets 30 s.
	if _, err := c.StartMirrorTopics(context.Background(), "m1", "orders"); err != nil {
		t.Fatal(err)
	}
	if reqs := b.Received(); reqs[1].(*mirrormsg.StartMirrorTopicsRequest).TimeoutMs != 30000 {
		t.Fatalf("TimeoutMs without deadline %d", reqs[1].(*mirrormsg.StartMirrorTopicsRequest).TimeoutMs)
	}
}

func TestStopPauseResumeSendNames(t *testing.T) {
	b := admintest.NewBroker(t)
	// Each answers every topic it was sent; "busy" with the key's error.
	answer := map[int16]*kerr.Error{
		mirrormsg.KeyStopMirrorTopics:   mirrormsg.MirrorTopicAlreadyPaused,
		mirrormsg.KeyPauseMirrorTopics:  mirrormsg.MirrorTopicBeingStopped,
		mirrormsg.KeyResumeMirrorTopics: mirrormsg.MirrorTopicNotPaused,
	}
	b.Handle(mirrormsg.KeyStopMirrorTopics, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.StopMirrorTopicsResponse)
		for _, tm := range req.(*mirrormsg.StopMirrorTopicsRequest).Topics {
			tr := mirrormsg.NewStopMirrorTopicsResponseTopicResult()
			tr.Name = tm.TopicName
			if tm.TopicName == "busy" {
				tr.ErrorCode = answer[req.Key()].Code
			}
			r.Topics = append(r.Topics, tr)
		}
		return r
	})
	b.Handle(mirrormsg.KeyPauseMirrorTopics, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.PauseMirrorTopicsResponse)
		for _, td := range req.(*mirrormsg.PauseMirrorTopicsRequest).Topics {
			tr := mirrormsg.NewPauseMirrorTopicsResponseTopicResult()
			tr.Name = td.TopicName
			if td.TopicName == "busy" {
				tr.ErrorCode = answer[req.Key()].Code
			}
			r.Topics = append(r.Topics, tr)
		}
		return r
	})
	b.Handle(mirrormsg.KeyResumeMirrorTopics, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.ResumeMirrorTopicsResponse)
		for _, td := range req.(*mirrormsg.ResumeMirrorTopicsRequest).Topics[1:] { // drops the first: Missing
			tr := mirrormsg.NewResumeMirrorTopicsResponseTopicResult()
			tr.Name = td.TopicName
			if td.TopicName == "busy" {
				tr.ErrorCode = answer[req.Key()].Code
			}
			r.Topics = append(r.Topics, tr)
		}
		return r
	})
	c := newClient(t, b)
	ctx := testCtx(t)
	topics := []string{"quiet", "busy", "a.b"}
	type call func(context.Context, string, ...string) (admin.TopicResults, error)
	for i, tc := range []struct {
		name    string
		call    call
		key     int16
		results int
		missing []string
	}{
		{"stop", c.StopMirrorTopics, mirrormsg.KeyStopMirrorTopics, 3, nil},
		{"pause", c.PauseMirrorTopics, mirrormsg.KeyPauseMirrorTopics, 3, nil},
		{"resume", c.ResumeMirrorTopics, mirrormsg.KeyResumeMirrorTopics, 2, []string{"quiet"}},
	} {
		rs, err := tc.call(ctx, "m1", topics...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(rs) != tc.results || !reflect.DeepEqual(rs.Missing(topics), tc.missing) {
			t.Fatalf("%s: results %+v, missing %q", tc.name, rs, rs.Missing(topics))
		}
		f := rs.Failed()
		if len(f) != 1 || f[0].Topic != "busy" || !errors.Is(f[0].Err, answer[tc.key]) || f[0].Detail() != answer[tc.key].Description {
			t.Fatalf("%s: failed %+v", tc.name, f)
		}
		reqs := b.Received()
		if len(reqs) != i+1 || reqs[i].Key() != tc.key {
			t.Fatalf("%s: received %d requests, last key %d", tc.name, len(reqs), reqs[len(reqs)-1].Key())
		}
		var sent []string
		switch r := reqs[i].(type) {
		case *mirrormsg.StopMirrorTopicsRequest:
			if r.StateOffset != -1 || r.Patterns != nil {
				t.Fatalf("stop request %+v", r)
			}
			for _, tm := range r.Topics {
				sent = append(sent, tm.TopicName)
			}
		case *mirrormsg.PauseMirrorTopicsRequest:
			for _, td := range r.Topics {
				sent = append(sent, td.TopicName)
				if td.TopicID != [16]byte{} {
					t.Fatalf("pause TopicID %x", td.TopicID)
				}
			}
		case *mirrormsg.ResumeMirrorTopicsRequest:
			for _, td := range r.Topics {
				sent = append(sent, td.TopicName)
			}
		}
		if !reflect.DeepEqual(sent, topics) {
			t.Fatalf("%s sent %q, want %q", tc.name, sent, topics)
		}
	}
}

func TestNoTopicsIsAnErrorBeforeSending(t *testing.T) {
	b := admintest.NewBroker(t)
	c := newClient(t, b)
	ctx := testCtx(t)
	for _, err := range []error{
		func() error { _, err := c.StartMirrorTopics(ctx, "m1"); return err }(),
		func() error { _, err := c.StopMirrorTopics(ctx, "m1", ""); return err }(),
		func() error { _, err := c.PauseMirrorTopics(ctx, "m1"); return err }(),
		func() error { _, err := c.ResumeMirrorTopics(ctx, "m1"); return err }(),
	} {
		if err == nil {
			t.Fatal("no error")
		}
	}
	if n := len(b.Received()); n != 0 {
		t.Fatalf("broker received %d requests", n)
	}
}

// TestErrorNamesAreMirrorNames: 134 is READ_ONLY_TOPIC for this client,
// although kerr calls it GROUP_DELETION_FAILED.
func TestErrorNamesAreMirrorNames(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyPauseMirrorTopics, func(_ context.Context, req kmsg.Request) kmsg.Response {
		r := req.ResponseKind().(*mirrormsg.PauseMirrorTopicsResponse)
		tr := mirrormsg.NewPauseMirrorTopicsResponseTopicResult()
		tr.Name, tr.ErrorCode = "t", 134
		r.Topics = append(r.Topics, tr)
		return r
	})
	rs, err := newClient(t, b).PauseMirrorTopics(testCtx(t), "m1", "t")
	if err != nil {
		t.Fatal(err)
	}
	if got := admin.ErrorName(rs[0].Err); got != "READ_ONLY_TOPIC" || kerr.ErrorForCode(134).(*kerr.Error).Message == got {
		t.Fatalf("code 134 named %q", got)
	}
}

func TestBrokerWithoutMirrorAPIs(t *testing.T) {
	b := admintest.NewBroker(t, admintest.WithoutMirrorAPIs())
	start := time.Now()
	err := newClient(t, b).DeleteMirror(testCtx(t), "m1")
	if err == nil || !strings.Contains(err.Error(), "broker is too old") {
		t.Fatalf("err %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	if n := len(b.Received()); n != 0 {
		t.Fatalf("broker received %d mirror requests", n)
	}
}

func TestWrapUsesTheGivenClient(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyListMirrors, func(_ context.Context, req kmsg.Request) kmsg.Response { return req.ResponseKind() })
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.MaxVersions(mirrormsg.MaxVersions(nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c := admin.Wrap(cl)
	ms, err := c.ListMirrors(testCtx(t))
	if err != nil || len(ms) != 0 || ms == nil {
		t.Fatalf("ListMirrors %v, %v", ms, err)
	}
	c.Close() // does not close cl
	if _, err := c.ListMirrors(testCtx(t)); err != nil {
		t.Fatalf("after Close of the wrapper: %v", err)
	}
}

// TestWrapWithoutMaxVersions documents why Wrap needs a client built with
// mirrormsg.MaxVersions.
func TestWrapWithoutMaxVersions(t *testing.T) {
	b := admintest.NewBroker(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// kgo's default max versions (kversion.Stable) lack the mirror keys.
	_, err = admin.Wrap(cl).ListMirrors(testCtx(t))
	if err == nil || !strings.Contains(err.Error(), "request key is unknown") {
		t.Fatalf("err %v", err)
	}
	if n := len(b.Received()); n != 0 {
		t.Fatalf("broker received %d mirror requests", n)
	}
}
