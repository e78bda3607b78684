package raftmeta

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/ctrlrpc"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/raftmeta/mirrorstate"
	"github.com/strait-io/strait/storage/clock"
)

// mirrorClockStart is the controller's clock in these tests: CreateMirror
// stamps mirrors with it.
var mirrorClockStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newMirrorController is a controller with brokers 1..n and the manual
// clock at mirrorClockStart.
func newMirrorController(t *testing.T, cfg Config, n int) (*Controller, *memLog) {
	t.Helper()
	cfg.Clock = clock.NewManual(mirrorClockStart)
	var ids []int32
	for i := int32(1); i <= int32(n); i++ {
		ids = append(ids, i)
	}
	return newTestController(t, cfg, ids...)
}

// mirrorCode names a code as the mirror RPCs mean it (the KIP's codes
// first: kerr knows 134-136 as other errors).
func mirrorCode(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return mirrormsg.TypedErrorForCode(code).Message
}

func createMirrorReq(name string, kv ...string) *mirrormsg.CreateMirrorRequest {
	req := mirrormsg.NewPtrCreateMirrorRequest()
	req.MirrorName = name
	for i := 0; i+1 < len(kv); i += 2 {
		cfg := mirrormsg.NewCreateMirrorRequestMirrorConfig()
		cfg.Name, cfg.Value = kv[i], kmsg.StringPtr(kv[i+1])
		req.Config = append(req.Config, cfg)
	}
	return req
}

func mustCreateMirror(t *testing.T, c *Controller, name string, kv ...string) {
	t.Helper()
	if len(kv) == 0 {
		kv = []string{"bootstrap.servers", "source:9092"}
	}
	resp := c.CreateMirror(context.Background(), createMirrorReq(name, kv...))
	if resp.ErrorCode != 0 {
		t.Fatalf("create mirror %s: %s %s", name, mirrorCode(resp.ErrorCode), deref(resp.ErrorMessage))
	}
}

func srcTopic(name string, id int, partitions int32) mirrormsg.StartMirrorTopicsRequestSourceTopic {
	st := mirrormsg.NewStartMirrorTopicsRequestSourceTopic()
	st.Name, st.TopicID, st.NumPartitions = name, testID(id), partitions
	return st
}

func startReq(mirror string, topics ...mirrormsg.StartMirrorTopicsRequestSourceTopic) *mirrormsg.StartMirrorTopicsRequest {
	req := mirrormsg.NewPtrStartMirrorTopicsRequest()
	req.MirrorName, req.Topics, req.TimeoutMs = mirror, topics, 5000
	for _, t := range topics {
		req.IncludePatterns = append(req.IncludePatterns, t.Name)
	}
	return req
}

func stopReq(mirror string, topics ...string) *mirrormsg.StopMirrorTopicsRequest {
	req := mirrormsg.NewPtrStopMirrorTopicsRequest()
	req.MirrorName = mirror
	for _, t := range topics {
		req.Topics = append(req.Topics, mirrormsg.StopMirrorTopicsRequestTopicMetadata{TopicName: t})
	}
	return req
}

func pauseReq(mirror string, topics ...string) *mirrormsg.PauseMirrorTopicsRequest {
	req := mirrormsg.NewPtrPauseMirrorTopicsRequest()
	req.MirrorName = mirror
	for _, t := range topics {
		req.Topics = append(req.Topics, mirrormsg.PauseMirrorTopicsRequestTopicData{TopicName: t})
	}
	return req
}

func resumeReq(mirror string, topics ...string) *mirrormsg.ResumeMirrorTopicsRequest {
	req := mirrormsg.NewPtrResumeMirrorTopicsRequest()
	req.MirrorName = mirror
	for _, t := range topics {
		req.Topics = append(req.Topics, mirrormsg.ResumeMirrorTopicsRequestTopicData{TopicName: t})
	}
	return req
}

// topicResults prints a Start/Stop/Pause/Resume answer: the top-level
// code, then name=CODE per topic.
func topicResults(resp kmsg.Response) string {
	var top int16
	var parts []string
	add := func(name string, code int16) { parts = append(parts, name+"="+mirrorCode(code)) }
	switch r := resp.(type) {
	case *mirrormsg.StartMirrorTopicsResponse:
		top = r.ErrorCode
		for _, t := range r.Topics {
			add(t.Name, t.ErrorCode)
		}
	case *mirrormsg.StopMirrorTopicsResponse:
		top = r.ErrorCode
		for _, t := range r.Topics {
			add(t.Name, t.ErrorCode)
		}
	case *mirrormsg.PauseMirrorTopicsResponse:
		top = r.ErrorCode
		for _, t := range r.Topics {
			add(t.Name, t.ErrorCode)
		}
	case *mirrormsg.ResumeMirrorTopicsResponse:
		top = r.ErrorCode
		for _, t := range r.Topics {
			add(t.Name, t.ErrorCode)
		}
	}
	return strings.TrimSpace(mirrorCode(top) + " " + strings.Join(parts, " "))
}

// mirrorNames prints every topic's mirror.name, by topic.
func mirrorNames(img *Image) string {
	var parts []string
	for _, n := range img.TopicNames() {
		if v, ok := img.TopicConfig(n)[MirrorNameConfig]; ok {
			parts = append(parts, n+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

func TestCreateMirror(t *testing.T) {
	c, log := newMirrorController(t, Config{}, 2)
	ctx := context.Background()
	resp := c.CreateMirror(ctx, createMirrorReq("east",
		"bootstrap.servers", "e1:9092, e2:9092",
		"security.protocol", "SASL_SSL",
		"sasl.mechanism", "SCRAM-SHA-512",
		"sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="mirror" password="s3cr\"et";`,
		"mirror.topics.include", "orders.*,payments",
		"mirror.support.unclean.leader.election", "true"))
	if resp.ErrorCode != 0 || resp.ErrorMessage != nil {
		t.Fatalf("create: %s %s", mirrorCode(resp.ErrorCode), deref(resp.ErrorMessage))
	}
	img := log.Image()
	m := img.Mirrors["east"]
	if m == nil || m.ID.IsZero() || m.CreateTimeMs != mirrorClockStart.UnixMilli() {
		t.Fatalf("mirror %+v", m)
	}
	if got := configsOf(img, ConfigResourceMirror, "east"); got != `bootstrap.servers=e1:9092, e2:9092 mirror.support.unclean.leader.election=true mirror.topics.include=orders.*,payments sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="mirror" password="s3cr\"et"; sasl.mechanism=SCRAM-SHA-512 security.protocol=SASL_SSL` {
		t.Fatalf("configs %s", got)
	}
	// The first mirror creates __mirror_state: 50 partitions, compacted,
	// replication factor 3 lowered to the 2 brokers.
	ms := img.Topics[MirrorStateTopic]
	if ms == nil || len(ms.Partitions) != 50 || len(ms.Partitions[0].Replicas) != 2 || img.TopicConfig(MirrorStateTopic)["cleanup.policy"] != "compact" {
		t.Fatalf("__mirror_state: %+v configs %v", ms, img.TopicConfig(MirrorStateTopic))
	}
	if log.proposals() != 3 { // two registrations, the mirror
		t.Fatalf("%d proposals", log.proposals())
	}
	// Secrets are null when described.
	entries, ok := DescribeMirrorConfigs(img, "east")
	var shown []string
	for _, e := range entries {
		shown = append(shown, fmt.Sprintf("%s=%s/%v", e.Name, deref(e.Value), e.Sensitive))
	}
	if !ok || strings.Join(shown, " ") != "bootstrap.servers=e1:9092, e2:9092/false mirror.support.unclean.leader.election=true/false "+
		"mirror.topics.include=orders.*,payments/false sasl.jaas.config=<nil>/true sasl.mechanism=SCRAM-SHA-512/false security.protocol=SASL_SSL/false" {
		t.Fatalf("described %v %v", ok, shown)
	}
	if _, ok := DescribeMirrorConfigs(img, "west"); ok {
		t.Fatal("described an unknown mirror")
	}

	// A second mirror leaves __mirror_state alone.
	mustCreateMirror(t, c, "west")
	img = log.Image()
	if len(img.Mirrors) != 2 || img.Topics[MirrorStateTopic] != ms || img.Mirrors["west"].ID == m.ID {
		t.Fatalf("second mirror:\n%s", formatMirrors(img))
	}

	before := log.proposals()
	for _, tc := range []struct {
		name string
		req  *mirrormsg.CreateMirrorRequest
		code *kerr.Error
		msg  string
	}{
		{"exists", createMirrorReq("east", "bootstrap.servers", "x:1"), mirrormsg.ClusterMirrorAlreadyExists, "Cluster mirror 'east' already exists."},
		{"empty name", createMirrorReq("", "bootstrap.servers", "x:1"), kerr.InvalidRequest, "Mirror name is invalid: the empty string is not allowed"},
		{"bad char", createMirrorReq("a b", "bootstrap.servers", "x:1"), kerr.InvalidRequest, "contains one or more characters"},
		{"paused suffix", createMirrorReq("m.paused", "bootstrap.servers", "x:1"), kerr.InvalidRequest, "ends in '.paused'"},
		{"removed suffix", createMirrorReq("m.removed", "bootstrap.servers", "x:1"), kerr.InvalidRequest, "ends in '.removed'"},
		{"duplicate key", createMirrorReq("m", "bootstrap.servers", "x:1", "bootstrap.servers", "y:1"), kerr.InvalidRequest, "duplicate config keys"},
		{"null value", &mirrormsg.CreateMirrorRequest{MirrorName: "m", Config: []mirrormsg.CreateMirrorRequestMirrorConfig{{Name: "bootstrap.servers"}}}, kerr.InvalidConfig, "Null value not supported for mirror configs: bootstrap.servers"},
		{"no bootstrap", createMirrorReq("m"), kerr.InvalidConfig, "Missing required mirror config bootstrap.servers"},
		{"unknown key", createMirrorReq("m", "bootstrap.servers", "x:1", "client.id", "c"), kerr.InvalidConfig, "Unknown mirror config name: client.id"},
		{"class", createMirrorReq("m", "bootstrap.servers", "x:1", "security.protocol", "SASL_SSL", "sasl.login.callback.handler.class", "com.Evil"), kerr.InvalidConfig, "class names are not accepted"},
		{"file", createMirrorReq("m", "bootstrap.servers", "x:1", "security.protocol", "SSL", "ssl.truststore.location", "/etc/passwd"), kerr.InvalidConfig, "file paths are not accepted"},
	} {
		resp := c.CreateMirror(ctx, tc.req)
		if resp.ErrorCode != tc.code.Code || !strings.Contains(deref(resp.ErrorMessage), tc.msg) {
			t.Errorf("%s: %s %q, want %s %q", tc.name, mirrorCode(resp.ErrorCode), deref(resp.ErrorMessage), tc.code.Message, tc.msg)
		}
	}
	if n := log.proposals() - before; n != 0 {
		t.Fatalf("%d proposals for refused creates", n)
	}
	if len(log.Image().Mirrors) != 2 {
		t.Fatalf("mirrors:\n%s", formatMirrors(log.Image()))
	}
}

// TestCreateMirrorStateTopicUnplaceable: with no active broker
// __mirror_state cannot be placed, and the mirror is not created either.
func TestCreateMirrorStateTopicUnplaceable(t *testing.T) {
	c, log := newMirrorController(t, Config{}, 0)
	resp := c.CreateMirror(context.Background(), createMirrorReq("east", "bootstrap.servers", "e:9092"))
	if resp.ErrorCode != kerr.InvalidReplicationFactor.Code || !strings.HasPrefix(deref(resp.ErrorMessage), "Creating __mirror_state with the first mirror: ") {
		t.Fatalf("%s %s", mirrorCode(resp.ErrorCode), deref(resp.ErrorMessage))
	}
	if len(log.Image().Mirrors) != 0 || log.proposals() != 0 {
		t.Fatalf("mirrors %d proposals %d", len(log.Image().Mirrors), log.proposals())
	}
}

func TestStartMirrorTopics(t *testing.T) {
	c, log := newMirrorController(t, Config{DefaultReplicationFactor: 2}, 3)
	ctx := context.Background()
	mustCreateMirror(t, c, "east")
	mustCreateMirror(t, c, "west")
	mustCreate(t, c, newTopic("local", 2, 1))
	localID := log.Image().Topics["local"].ID

	// A missing topic is created with the source's id and partition count
	// and the default replication factor; an existing one with the same
	// id and fewer partitions gets the missing ones. One batch.
	st := srcTopic("local", 0, 4)
	st.TopicID = localID
	before := log.proposals()
	resp := c.StartMirrorTopics(ctx, startReq("east", srcTopic("orders", 41, 3), st))
	if got := topicResults(resp); got != "NONE orders=NONE local=NONE" || resp.MirrorName != "east" {
		t.Fatalf("start: %s", got)
	}
	img := log.Image()
	orders := img.Topics["orders"]
	if orders == nil || orders.ID != testID(41) || len(orders.Partitions) != 3 || len(orders.Partitions[0].Replicas) != 2 {
		t.Fatalf("orders: %+v", orders)
	}
	if local := img.Topics["local"]; len(local.Partitions) != 4 || len(local.Partitions[3].Replicas) != 1 || local.ID != localID {
		t.Fatalf("local: %+v", local)
	}
	if got := mirrorNames(img); got != "local=east orders=east" {
		t.Fatalf("mirror.name: %s", got)
	}
	if log.proposals()-before != 1 {
		t.Fatalf("%d proposals", log.proposals()-before)
	}

	// Per-topic refusals, in one request with a topic that succeeds.
	mustCreate(t, c, newTopic("other-id", 1, 1))
	mustCreate(t, c, newTopic("in-west", 1, 1))
	westID := log.Image().Topics["in-west"].ID
	w := srcTopic("in-west", 0, 1)
	w.TopicID = westID
	if got := topicResults(c.StartMirrorTopics(ctx, startReq("west", w))); got != "NONE in-west=NONE" {
		t.Fatalf("start in west: %s", got)
	}
	dupA, dupB := srcTopic("dup", 50, 1), srcTopic("dup", 51, 1)
	sameA, sameB := srcTopic("same-a", 52, 1), srcTopic("same-b", 52, 1)
	resp = c.StartMirrorTopics(ctx, startReq("east",
		srcTopic("fresh", 60, 2),    // created
		srcTopic("other-id", 61, 1), // exists with another id
		w,                           // mirroring in west
		srcTopic("orders", 41, 3),   // already mirroring in east
		srcTopic("__consumer_offsets", 62, 50),
		srcTopic("bad/name", 63, 1),
		srcTopic("no-id", 0, 1),
		srcTopic("no-partitions", 64, 0),
		dupA, dupB, sameA, sameB,
	))
	want := "NONE fresh=NONE other-id=TOPIC_ALREADY_EXISTS in-west=TOPIC_ALREADY_IN_CLUSTER_MIRROR " +
		"orders=MIRROR_TOPIC_NOT_STOPPED __consumer_offsets=INVALID_TOPIC_EXCEPTION bad/name=INVALID_TOPIC_EXCEPTION no-id=INVALID_REQUEST " +
		"no-partitions=INVALID_PARTITIONS dup=INVALID_REQUEST dup=INVALID_REQUEST same-a=INVALID_REQUEST same-b=INVALID_REQUEST"
	if got := topicResults(resp); got != want {
		t.Fatalf("start:\n got %s\nwant %s", got, want)
	}
	msgs := map[string]string{}
	for _, tr := range resp.Topics {
		msgs[tr.Name] = deref(tr.ErrorMessage)
	}
	for name, msg := range map[string]string{
		"other-id": "Topic 'other-id' exists with topic id ",
		"in-west":  "Topic 'in-west' is mirroring in cluster mirror 'west'.",
		"orders":   "Topic 'orders' is mirroring in cluster mirror 'east' (mirror.name=east).",
		"fresh":    "<nil>",
	} {
		if !strings.HasPrefix(msgs[name], msg) {
			t.Errorf("%s: message %q, want %q", name, msgs[name], msg)
		}
	}
	img = log.Image()
	if f := img.Topics["fresh"]; f == nil || f.ID != testID(60) || mirrorNames(img) != "fresh=east in-west=west local=east orders=east" {
		t.Fatalf("after: %s", mirrorNames(img))
	}
	for _, n := range []string{"orders-copy", "dup", "same-a", "same-b", "no-id", "__consumer_offsets"} {
		if img.Topics[n] != nil {
			t.Errorf("%s was created", n)
		}
	}

	// A new name with an id another topic has.
	copyResp := c.StartMirrorTopics(ctx, startReq("east", srcTopic("orders-copy", 41, 3)))
	if got := topicResults(copyResp); got != "NONE orders-copy=TOPIC_ALREADY_EXISTS" ||
		deref(copyResp.Topics[0].ErrorMessage) != "Topic id AAAAAAAAAAAAAAAAAAAAKQ of 'orders-copy' already belongs to topic 'orders'." {
		t.Fatalf("orders-copy: %s %s", got, deref(copyResp.Topics[0].ErrorMessage))
	}

	// More partitions here than on the source.
	big := srcTopic("local", 0, 2)
	big.TopicID = localID
	if got := topicResults(c.StartMirrorTopics(ctx, startReq("west", big))); got != "NONE local=TOPIC_ALREADY_IN_CLUSTER_MIRROR" {
		t.Fatalf("start local in west: %s", got)
	}
	mustCreate(t, c, newTopic("wide", 3, 1))
	wide := srcTopic("wide", 0, 2)
	wide.TopicID = log.Image().Topics["wide"].ID
	if got := topicResults(c.StartMirrorTopics(ctx, startReq("east", wide))); got != "NONE wide=INVALID_PARTITIONS" {
		t.Fatalf("start wide: %s", got)
	}

	// Paused, or stopped then started again (failback), or moved to
	// another mirror once stopped (migration).
	if got := topicResults(c.PauseMirrorTopics(ctx, pauseReq("east", "orders"))); got != "NONE orders=NONE" {
		t.Fatalf("pause: %s", got)
	}
	ordersSrc := srcTopic("orders", 41, 3)
	if got := topicResults(c.StartMirrorTopics(ctx, startReq("east", ordersSrc))); got != "NONE orders=MIRROR_TOPIC_NOT_STOPPED" {
		t.Fatalf("start paused: %s", got)
	}
	if got := topicResults(c.StopMirrorTopics(ctx, stopReq("east", "orders", "fresh"))); got != "NONE orders=NONE fresh=NONE" {
		t.Fatalf("stop: %s", got)
	}
	if got := topicResults(c.StartMirrorTopics(ctx, startReq("east", ordersSrc))); got != "NONE orders=NONE" {
		t.Fatalf("restart stopped: %s", got)
	}
	if got := topicResults(c.StartMirrorTopics(ctx, startReq("west", srcTopic("fresh", 60, 2)))); got != "NONE fresh=NONE" {
		t.Fatalf("migrate stopped: %s", got)
	}
	if got := mirrorNames(log.Image()); got != "fresh=west in-west=west local=east orders=east" {
		t.Fatalf("after restart: %s", got)
	}

	// Request-level refusals.
	before = log.proposals()
	none := mirrormsg.NewPtrStartMirrorTopicsRequest()
	none.MirrorName = "east"
	if r := c.StartMirrorTopics(ctx, none); r.ErrorCode != kerr.InvalidRequest.Code || deref(r.ErrorMessage) != "StartMirrorTopics names no topics." {
		t.Fatalf("no topics: %s %s", mirrorCode(r.ErrorCode), deref(r.ErrorMessage))
	}
	none.IncludePatterns = []string{"orders.*"}
	if r := c.StartMirrorTopics(ctx, none); r.ErrorCode != kerr.InvalidRequest.Code || !strings.Contains(deref(r.ErrorMessage), "without resolved Topics") {
		t.Fatalf("unresolved: %s %s", mirrorCode(r.ErrorCode), deref(r.ErrorMessage))
	}
	if got := topicResults(c.StartMirrorTopics(ctx, startReq("north", srcTopic("n", 70, 1)))); got != "UNKNOWN_CLUSTER_MIRROR n=UNKNOWN_CLUSTER_MIRROR" {
		t.Fatalf("unknown mirror: %s", got)
	}
	if log.proposals() != before {
		t.Fatalf("%d proposals for refused starts", log.proposals()-before)
	}
}

// mirrorSetup is a controller with mirrors east and west and topics a..e
// in east (a, b mirroring; c paused; d stopped), f in west, g in none.
func mirrorSetup(t *testing.T) (*Controller, *memLog) {
	t.Helper()
	c, log := newMirrorController(t, Config{}, 1)
	ctx := context.Background()
	mustCreateMirror(t, c, "east")
	mustCreateMirror(t, c, "west")
	resp := c.StartMirrorTopics(ctx, startReq("east", srcTopic("a", 1, 1), srcTopic("b", 2, 1), srcTopic("c", 3, 1), srcTopic("d", 4, 1)))
	if got := topicResults(resp); got != "NONE a=NONE b=NONE c=NONE d=NONE" {
		t.Fatalf("setup start: %s", got)
	}
	if got := topicResults(c.StartMirrorTopics(ctx, startReq("west", srcTopic("f", 6, 1)))); got != "NONE f=NONE" {
		t.Fatalf("setup start west: %s", got)
	}
	mustCreate(t, c, newTopic("g", 1, 1))
	if got := topicResults(c.PauseMirrorTopics(ctx, pauseReq("east", "c"))); got != "NONE c=NONE" {
		t.Fatalf("setup pause: %s", got)
	}
	if got := topicResults(c.StopMirrorTopics(ctx, stopReq("east", "d"))); got != "NONE d=NONE" {
		t.Fatalf("setup stop: %s", got)
	}
	if got := mirrorNames(log.Image()); got != "a=east b=east c=east.paused d=east.removed f=west" {
		t.Fatalf("setup: %s", got)
	}
	return c, log
}

func TestStopPauseResumeMirrorTopics(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		call      func(c *Controller) kmsg.Response
		want      string
		after     string
		proposals int
	}{
		{"stop", func(c *Controller) kmsg.Response {
			return c.StopMirrorTopics(ctx, stopReq("east", "a", "c", "d", "f", "g", "nope"))
		},
			"NONE a=NONE c=NONE d=INVALID_CLUSTER_MIRROR_STATES f=TOPIC_NOT_IN_CLUSTER_MIRROR g=TOPIC_NOT_IN_CLUSTER_MIRROR nope=UNKNOWN_TOPIC_OR_PARTITION",
			"a=east.removed b=east c=east.removed d=east.removed f=west", 1},
		{"pause", func(c *Controller) kmsg.Response {
			return c.PauseMirrorTopics(ctx, pauseReq("east", "a", "c", "d", "f", "g", "nope"))
		},
			"NONE a=NONE c=MIRROR_TOPIC_ALREADY_PAUSED d=INVALID_CLUSTER_MIRROR_STATES f=TOPIC_NOT_IN_CLUSTER_MIRROR g=TOPIC_NOT_IN_CLUSTER_MIRROR nope=UNKNOWN_TOPIC_OR_PARTITION",
			"a=east.paused b=east c=east.paused d=east.removed f=west", 1},
		{"resume", func(c *Controller) kmsg.Response {
			return c.ResumeMirrorTopics(ctx, resumeReq("east", "a", "c", "d", "f", "g", "nope"))
		},
			"NONE a=MIRROR_TOPIC_NOT_PAUSED c=NONE d=MIRROR_TOPIC_NOT_PAUSED f=TOPIC_NOT_IN_CLUSTER_MIRROR g=TOPIC_NOT_IN_CLUSTER_MIRROR nope=UNKNOWN_TOPIC_OR_PARTITION",
			"a=east b=east c=east d=east.removed f=west", 1},
		{"duplicates", func(c *Controller) kmsg.Response { return c.StopMirrorTopics(ctx, stopReq("east", "a", "b", "a")) },
			"NONE a=INVALID_REQUEST b=NONE a=INVALID_REQUEST",
			"a=east b=east.removed c=east.paused d=east.removed f=west", 1},
		{"unknown mirror", func(c *Controller) kmsg.Response { return c.PauseMirrorTopics(ctx, pauseReq("north", "a")) },
			"UNKNOWN_CLUSTER_MIRROR a=UNKNOWN_CLUSTER_MIRROR",
			"a=east b=east c=east.paused d=east.removed f=west", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, log := mirrorSetup(t)
			before := log.proposals()
			if got := topicResults(tc.call(c)); got != tc.want {
				t.Fatalf("\n got %s\nwant %s", got, tc.want)
			}
			if got := mirrorNames(log.Image()); got != tc.after {
				t.Fatalf("mirror.name: %s, want %s", got, tc.after)
			}
			if n := log.proposals() - before; n != tc.proposals {
				t.Fatalf("%d proposals, want %d", n, tc.proposals)
			}
		})
	}
}

func TestMirrorTopicsMessagesAndIDs(t *testing.T) {
	c, log := mirrorSetup(t)
	ctx := context.Background()
	img := log.Image()

	resp := c.PauseMirrorTopics(ctx, pauseReq("east", "c", "f"))
	if m := deref(resp.Topics[0].ErrorMessage); m != "Topic 'c' is paused in cluster mirror 'east' (mirror.name=east.paused)." {
		t.Errorf("c: %q", m)
	}
	if m := deref(resp.Topics[1].ErrorMessage); m != "Topic 'f' belongs to cluster mirror 'west', not 'east'." {
		t.Errorf("f: %q", m)
	}

	// By id alone (the answer names the topic), by name and id, with an
	// id that is not the topic's, an unknown id, neither.
	req := mirrormsg.NewPtrPauseMirrorTopicsRequest()
	req.MirrorName = "east"
	req.Topics = []mirrormsg.PauseMirrorTopicsRequestTopicData{
		{TopicID: img.Topics["a"].ID},
		{TopicName: "b", TopicID: img.Topics["b"].ID},
		{TopicName: "d", TopicID: img.Topics["a"].ID},
		{TopicID: testID(99)},
		{},
	}
	if got := topicResults(c.PauseMirrorTopics(ctx, req)); got != "NONE a=NONE b=NONE d=UNKNOWN_TOPIC_ID =UNKNOWN_TOPIC_ID =INVALID_REQUEST" {
		t.Fatalf("by id: %s", got)
	}
	if got := mirrorNames(log.Image()); got != "a=east.paused b=east.paused c=east.paused d=east.removed f=west" {
		t.Fatalf("after: %s", got)
	}

	// Stop patterns add the mirror's topics not yet stopped; a bad one
	// fails the request.
	sr := stopReq("east", "a")
	sr.Patterns = []string{"[b-d]"}
	if got := topicResults(c.StopMirrorTopics(ctx, sr)); got != "NONE a=NONE b=NONE c=NONE" {
		t.Fatalf("patterns: %s", got)
	}
	before := log.proposals()
	sr.Patterns = []string{"("}
	if r := c.StopMirrorTopics(ctx, sr); r.ErrorCode != kerr.InvalidRegularExpression.Code || len(r.Topics) != 0 || log.proposals() != before {
		t.Fatalf("bad pattern: %s %v", mirrorCode(r.ErrorCode), r.Topics)
	}
}

func TestDeleteMirror(t *testing.T) {
	c, log := mirrorSetup(t)
	ctx := context.Background()
	del := func(name string) *mirrormsg.DeleteMirrorResponse {
		req := mirrormsg.NewPtrDeleteMirrorRequest()
		req.MirrorName = name
		return c.DeleteMirror(ctx, req)
	}
	before := log.proposals()
	if r := del("north"); r.ErrorCode != mirrormsg.UnknownClusterMirror.Code {
		t.Fatalf("unknown: %s", mirrorCode(r.ErrorCode))
	}
	r := del("east")
	if r.ErrorCode != mirrormsg.ClusterMirrorNotEmpty.Code || deref(r.ErrorMessage) != "Cluster mirror 'east' still has 3 topic(s) not stopped: a, b, c." {
		t.Fatalf("busy: %s %s", mirrorCode(r.ErrorCode), deref(r.ErrorMessage))
	}
	if log.proposals() != before {
		t.Fatal("refused deletes appended records")
	}
	// Paused topics count as mirroring too.
	if got := topicResults(c.StopMirrorTopics(ctx, stopReq("east", "a", "b"))); got != "NONE a=NONE b=NONE" {
		t.Fatal(got)
	}
	if r := del("east"); r.ErrorCode != mirrormsg.ClusterMirrorNotEmpty.Code || !strings.HasSuffix(deref(r.ErrorMessage), "not stopped: c.") {
		t.Fatalf("paused: %s %s", mirrorCode(r.ErrorCode), deref(r.ErrorMessage))
	}
	if got := topicResults(c.StopMirrorTopics(ctx, stopReq("east", "c"))); got != "NONE c=NONE" {
		t.Fatal(got)
	}
	if r := del("east"); r.ErrorCode != 0 || r.ErrorMessage != nil {
		t.Fatalf("delete: %s %s", mirrorCode(r.ErrorCode), deref(r.ErrorMessage))
	}
	img := log.Image()
	if _, ok := img.Mirrors["east"]; ok || img.MirrorConfig("east") != nil || len(img.Mirrors) != 1 {
		t.Fatalf("east left:\n%s", formatMirrors(img))
	}
	// Stopped topics keep their mirror.name; a new east finds them
	// stopped and can start them again.
	if got := mirrorNames(img); got != "a=east.removed b=east.removed c=east.removed d=east.removed f=west" {
		t.Fatalf("after: %s", got)
	}
	mustCreateMirror(t, c, "east")
	if got := topicResults(c.StartMirrorTopics(ctx, startReq("east", srcTopic("a", 1, 1)))); got != "NONE a=NONE" {
		t.Fatal(got)
	}
}

func TestListAndDescribeMirrors(t *testing.T) {
	c, log := mirrorSetup(t)
	ctx := context.Background()
	lr := c.ListMirrors(ctx, mirrormsg.NewPtrListMirrorsRequest())
	var listed []string
	for _, m := range lr.Mirrors {
		listed = append(listed, fmt.Sprintf("%s:%s:%d:%q", m.MirrorName, m.SourceBootstrap, m.TopicCount, m.SourceClusterID))
	}
	if lr.ErrorCode != 0 || strings.Join(listed, " ") != `east:source:9092:4:"" west:source:9092:1:""` {
		t.Fatalf("list: %s %v", mirrorCode(lr.ErrorCode), listed)
	}

	describe := func(names []string) string {
		req := mirrormsg.NewPtrDescribeMirrorsRequest()
		req.MirrorNames = names
		resp := c.DescribeMirrors(ctx, req)
		var out []string
		for _, m := range resp.Mirrors {
			var topics []string
			for _, tp := range m.Topics {
				topics = append(topics, fmt.Sprintf("%s/%d", tp.TopicName, len(tp.Partitions)))
			}
			out = append(out, fmt.Sprintf("%s:%s:%v:%d", m.MirrorName, mirrorCode(m.ErrorCode), topics, m.AuthorizedOperations))
		}
		return mirrorCode(resp.ErrorCode) + " " + strings.Join(out, " ")
	}
	if got := describe(nil); got != "NONE east:NONE:[a/0 b/0 c/0 d/0]:-2147483648 west:NONE:[f/0]:-2147483648" {
		t.Fatalf("describe all: %s", got)
	}
	if got := describe([]string{"west", "north"}); got != "NONE west:NONE:[f/0]:-2147483648 north:UNKNOWN_CLUSTER_MIRROR:[]:-2147483648" {
		t.Fatalf("describe some: %s", got)
	}
	// Brokers answer from their own image with the same functions.
	if got := ListMirrors(log.Image(), mirrormsg.NewPtrListMirrorsRequest()); len(got.Mirrors) != 2 {
		t.Fatalf("image list: %+v", got)
	}
	if got := DescribeMirrors(EmptyImage(), mirrormsg.NewPtrDescribeMirrorsRequest()); len(got.Mirrors) != 0 {
		t.Fatalf("empty describe: %+v", got)
	}
}

// bumpReq asks to bump partitions given as {index, leader epoch, min}.
func bumpReq(brokerID int32, brokerEpoch int64, topic Uuid, parts ...[3]int32) *mirrormsg.BumpLeaderEpochsRequest {
	req := mirrormsg.NewPtrBumpLeaderEpochsRequest()
	req.BrokerID, req.BrokerEpoch = brokerID, brokerEpoch
	rt := mirrormsg.NewBumpLeaderEpochsRequestTopicState()
	rt.TopicID = topic
	for _, p := range parts {
		lp := mirrormsg.NewBumpLeaderEpochsRequestLeaderEpochState()
		lp.PartitionIndex, lp.LeaderEpoch, lp.MinLeaderEpoch = p[0], p[1], p[2]
		rt.Partitions = append(rt.Partitions, lp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

func bumpResults(resp *mirrormsg.BumpLeaderEpochsResponse) string {
	out := mirrorCode(resp.ErrorCode)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out += fmt.Sprintf(" %s-%d=%s", t.TopicName, p.PartitionIndex, mirrorCode(p.ErrorCode))
		}
	}
	return out
}

func TestBumpLeaderEpochs(t *testing.T) {
	c, log := newMirrorController(t, Config{}, 2)
	ctx := context.Background()
	mustCreateMirror(t, c, "east")
	if got := topicResults(c.StartMirrorTopics(ctx, startReq("east", srcTopic("m", 1, 2)))); got != "NONE m=NONE" {
		t.Fatal(got)
	}
	mustCreate(t, c, newTopic("plain", 1, 1))
	img := log.Image()
	m := img.Topics["m"]
	p0, p1 := m.Partitions[0], m.Partitions[1]
	if p0.Leader == p1.Leader {
		t.Fatalf("both partitions led by %d", p0.Leader)
	}
	epochOf := func(b int32) int64 { return log.Image().Brokers[b].Epoch }
	leader0, other := p0.Leader, p1.Leader

	// The leader at its epoch raises it to the minimum; the leader stays.
	before := log.proposals()
	resp := c.BumpLeaderEpochs(ctx, bumpReq(leader0, epochOf(leader0), m.ID, [3]int32{0, 0, 7}))
	if got := bumpResults(resp); got != "NONE m-0=NONE" {
		t.Fatalf("bump: %s", got)
	}
	np := log.Image().Topics["m"].Partitions[0]
	if np.LeaderEpoch != 7 || np.Leader != leader0 || np.PartitionEpoch != p0.PartitionEpoch+1 || log.proposals()-before != 1 {
		t.Fatalf("after bump: %+v (%d proposals)", np, log.proposals()-before)
	}
	// At or below the epoch: success, nothing appended (a retry).
	before = log.proposals()
	if got := bumpResults(c.BumpLeaderEpochs(ctx, bumpReq(leader0, -1, m.ID, [3]int32{0, 7, 7}, [3]int32{0, -1, 3}))); got != "NONE m-0=NONE m-0=NONE" || log.proposals() != before {
		t.Fatalf("no-op bump: %s (%d proposals)", got, log.proposals()-before)
	}
	// -1 asks for one bump; a second entry for the partition at the old
	// epoch is then fenced.
	if got := bumpResults(c.BumpLeaderEpochs(ctx, bumpReq(leader0, -1, m.ID, [3]int32{0, 7, -1}, [3]int32{0, 7, 9}))); got != "NONE m-0=NONE m-0=FENCED_LEADER_EPOCH" {
		t.Fatalf("plain bump: %s", got)
	}
	if e := log.Image().Topics["m"].Partitions[0].LeaderEpoch; e != 8 {
		t.Fatalf("epoch %d, want 8", e)
	}

	// Refusals per partition.
	before = log.proposals()
	for _, tc := range []struct {
		name string
		req  *mirrormsg.BumpLeaderEpochsRequest
		want string
	}{
		{"not leader", bumpReq(other, -1, m.ID, [3]int32{0, 8, 20}), "NONE m-0=NOT_LEADER_FOR_PARTITION"},
		{"fenced", bumpReq(leader0, -1, m.ID, [3]int32{0, 7, 20}), "NONE m-0=FENCED_LEADER_EPOCH"},
		{"ahead", bumpReq(leader0, -1, m.ID, [3]int32{0, 9, 20}), "NONE m-0=NOT_CONTROLLER"},
		{"max epoch", bumpReq(leader0, -1, m.ID, [3]int32{0, 8, 1<<31 - 1}), "NONE m-0=INVALID_REQUEST"},
		{"unknown partition", bumpReq(leader0, -1, m.ID, [3]int32{2, -1, 20}), "NONE m-2=UNKNOWN_TOPIC_OR_PARTITION"},
		{"unknown topic", bumpReq(leader0, -1, testID(99), [3]int32{0, -1, 20}), "NONE -0=UNKNOWN_TOPIC_ID"},
		{"not a mirror topic", bumpReq(leader0, -1, img.Topics["plain"].ID, [3]int32{0, -1, 20}), "NONE plain-0=TOPIC_NOT_IN_CLUSTER_MIRROR"},
		{"stale broker epoch", bumpReq(leader0, epochOf(leader0)+1, m.ID, [3]int32{0, 8, 20}), "STALE_BROKER_EPOCH"},
		{"unknown broker", bumpReq(9, -1, m.ID, [3]int32{0, 8, 20}), "STALE_BROKER_EPOCH"},
	} {
		if got := bumpResults(c.BumpLeaderEpochs(ctx, tc.req)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if log.proposals() != before {
		t.Fatalf("%d proposals for refused bumps", log.proposals()-before)
	}
	// BrokerId -1 is the sender the channel names; in process, this node
	// (1).
	idx := int32(0)
	if leader0 != 1 {
		idx = 1
	}
	cur := log.Image().Topics["m"].Partitions[idx].LeaderEpoch
	if got := bumpResults(c.BumpLeaderEpochs(ctx, bumpReq(-1, -1, m.ID, [3]int32{idx, cur, cur + 5}))); got != fmt.Sprintf("NONE m-%d=NONE", idx) {
		t.Fatalf("in-process bump: %s", got)
	}
	if got := bumpResults(c.BumpLeaderEpochs(ctx, bumpReq(-1, -1, m.ID, [3]int32{1 - idx, -1, 50}))); got != fmt.Sprintf("NONE m-%d=NOT_LEADER_FOR_PARTITION", 1-idx) {
		t.Fatalf("in-process bump of another's partition: %s", got)
	}
	// Stopped mirror topics may still bump (STOPPING does).
	if got := topicResults(c.StopMirrorTopics(ctx, stopReq("east", "m"))); got != "NONE m=NONE" {
		t.Fatal(got)
	}
	e0 := log.Image().Topics["m"].Partitions[0].LeaderEpoch
	if got := bumpResults(c.BumpLeaderEpochs(ctx, bumpReq(leader0, -1, m.ID, [3]int32{0, e0, e0 + 1}))); got != "NONE m-0=NONE" {
		t.Fatalf("bump after stop: %s", got)
	}
}

// TestMirrorNameGuard: the config APIs cannot write mirror.name, and the
// ConfigValidator never sees it.
func TestMirrorNameGuard(t *testing.T) {
	var seen []string
	cfg := Config{ConfigValidator: func(res ConfigResource, configs map[string]*string) error {
		for k := range configs {
			seen = append(seen, k)
			if k == MirrorNameConfig {
				return fmt.Errorf("Unknown topic config name: %s", k)
			}
		}
		return nil
	}}
	c, log := newMirrorController(t, cfg, 1)
	ctx := context.Background()
	mustCreateMirror(t, c, "east")
	if got := topicResults(c.StartMirrorTopics(ctx, startReq("east", srcTopic("m", 1, 1)))); got != "NONE m=NONE" {
		t.Fatal(got)
	}

	// CreateTopics with mirror.name.
	r := c.CreateTopics(ctx, createReq(7, newTopic("x", 1, 1, MirrorNameConfig, "east")))
	if r.Topics[0].ErrorCode != kerr.InvalidConfig.Code {
		t.Fatalf("create: %s", codeName(r.Topics[0].ErrorCode))
	}
	// IncrementalAlterConfigs: SET or DELETE mirror.name is refused, SET
	// to its value is a no-op, other keys of a mirror topic pass.
	for _, tc := range []struct {
		op   op
		code int16
	}{
		{op{MirrorNameConfig, set, s("west")}, kerr.InvalidConfig.Code},
		{op{MirrorNameConfig, del, nil}, kerr.InvalidConfig.Code},
		{op{MirrorNameConfig, set, s("east")}, 0},
		{op{"retention.ms", set, s("1000")}, 0},
	} {
		ir := c.IncrementalAlterConfigs(ctx, incReq(false, incRes(topicT, "m", tc.op)))
		if ir.Resources[0].ErrorCode != tc.code {
			t.Errorf("incremental %v: %s", tc.op, codeName(ir.Resources[0].ErrorCode))
		}
	}
	// Legacy AlterConfigs replaces the other keys and keeps mirror.name.
	ac := kmsg.NewPtrAlterConfigsRequest()
	res := kmsg.NewAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "m"
	res.Configs = []kmsg.AlterConfigsRequestResourceConfig{{Name: "cleanup.policy", Value: s("compact")}}
	ac.Resources = append(ac.Resources, res)
	if code := c.AlterConfigs(ctx, ac).Resources[0].ErrorCode; code != 0 {
		t.Fatalf("legacy alter: %s", codeName(code))
	}
	if got := configsOf(log.Image(), ConfigResourceTopic, "m"); got != "cleanup.policy=compact mirror.name=east" {
		t.Fatalf("configs after legacy alter: %s", got)
	}
	for _, k := range seen {
		if k == MirrorNameConfig {
			t.Fatal("the validator saw mirror.name")
		}
	}
	if _, d := log.Image().TopicMirror("m"); d != mirrorstate.DesiredStart {
		t.Fatalf("desired %v", d)
	}
}

// TestMirrorRequestsNotController: every mirror request answers
// NOT_CONTROLLER on a node that is not the active controller, so the
// channel moves on, and nothing is appended.
func TestMirrorRequestsNotController(t *testing.T) {
	c, log := mirrorSetup(t)
	log.mu.Lock()
	log.leader = false
	log.mu.Unlock()
	before := log.proposals()
	del := mirrormsg.NewPtrDeleteMirrorRequest()
	del.MirrorName = "east"
	for _, req := range []kmsg.Request{
		createMirrorReq("north", "bootstrap.servers", "n:1"), del,
		mirrormsg.NewPtrListMirrorsRequest(), mirrormsg.NewPtrDescribeMirrorsRequest(),
		startReq("east", srcTopic("n", 9, 1)), stopReq("east", "a"), pauseReq("east", "a"), resumeReq("east", "c"),
		bumpReq(1, -1, log.Image().Topics["a"].ID, [3]int32{0, -1, 5}),
	} {
		resp, err := c.ServeControllerRequest(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", mirrormsg.NameForKey(req.Key()), err)
		}
		if resp.Key() != req.Key() {
			t.Fatalf("%s answered by key %d", mirrormsg.NameForKey(req.Key()), resp.Key())
		}
		if !ctrlrpc.HasErrorCode(resp, kerr.NotController.Code) {
			t.Errorf("%s on a follower: %+v", mirrormsg.NameForKey(req.Key()), resp)
		}
	}
	if log.proposals() != before {
		t.Fatal("a follower appended records")
	}
	// The coordinator's RPCs are not the controller's.
	if _, err := c.ServeControllerRequest(context.Background(), mirrormsg.NewPtrReadMirrorStatesRequest()); err == nil {
		t.Fatal("ReadMirrorStates served by the controller channel")
	}
}

// TestCreateMirrorStateTopicWithABrokerDown: the first mirror, created
// while one broker of three is fenced, gets __mirror_state with
// mirror.state.topic.replication.factor=3 replicas, the fenced broker's out
// of the ISR, not two replicas for good; a single broker gets one.
func TestCreateMirrorStateTopicWithABrokerDown(t *testing.T) {
	c, log := newMirrorController(t, Config{}, 2)
	if err := c.RegisterBroker(context.Background(), Broker{ID: 3, Fenced: true}); err != nil {
		t.Fatal(err)
	}
	if resp := c.CreateMirror(context.Background(), createMirrorReq("east", "bootstrap.servers", "e:9092")); resp.ErrorCode != 0 {
		t.Fatalf("%s %s", mirrorCode(resp.ErrorCode), deref(resp.ErrorMessage))
	}
	for _, p := range log.Image().Topics[MirrorStateTopic].Partitions {
		if len(p.Replicas) != 3 || len(p.ISR) != 2 || p.Leader == 3 {
			t.Fatalf("%s-%d: replicas %v, ISR %v, leader %d; want 3 replicas, broker 3 out of the ISR", MirrorStateTopic, p.Index, p.Replicas, p.ISR, p.Leader)
		}
	}

	single, log1 := newMirrorController(t, Config{}, 1)
	if resp := single.CreateMirror(context.Background(), createMirrorReq("east", "bootstrap.servers", "e:9092")); resp.ErrorCode != 0 {
		t.Fatalf("single broker: %s %s", mirrorCode(resp.ErrorCode), deref(resp.ErrorMessage))
	}
	if p := log1.Image().Topics[MirrorStateTopic].Partitions[0]; len(p.Replicas) != 1 {
		t.Fatalf("single broker: %s-0 has replicas %v, want 1", MirrorStateTopic, p.Replicas)
	}
}
