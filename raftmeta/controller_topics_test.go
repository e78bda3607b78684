package raftmeta

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestCreateTopics(t *testing.T) {
	c, log := newTestController(t, Config{NumPartitions: 3}, 1)
	ctx := context.Background()

	req := createReq(7, newTopic("orders", -1, -1, "retention.ms", "1000", "cleanup.policy", "compact"))
	resp := c.CreateTopics(ctx, req)
	if len(resp.Topics) != 1 {
		t.Fatalf("%d results", len(resp.Topics))
	}
	rt := resp.Topics[0]
	img := log.Image()
	topic := img.Topics["orders"]
	if rt.ErrorCode != 0 || topic == nil {
		t.Fatalf("create: %s %s", codeName(rt.ErrorCode), deref(rt.ErrorMessage))
	}
	if Uuid(rt.TopicID) != topic.ID || topic.ID.IsZero() || rt.NumPartitions != 3 || rt.ReplicationFactor != 1 {
		t.Fatalf("response %+v; image id %s", rt, topic.ID)
	}
	var cfgs []string
	for _, c := range rt.Configs {
		cfgs = append(cfgs, fmt.Sprintf("%s=%s/%d", c.Name, deref(c.Value), c.Source))
	}
	if got := strings.Join(cfgs, " "); got != "cleanup.policy=compact/1 retention.ms=1000/1" {
		t.Fatalf("configs %q", got)
	}
	if len(topic.Partitions) != 3 {
		t.Fatalf("%d partitions", len(topic.Partitions))
	}
	for i, p := range topic.Partitions {
		want := Partition{Topic: "orders", TopicID: topic.ID, Index: int32(i), Replicas: []int32{1}, ISR: []int32{1}, Leader: 1}
		if fmt.Sprint(*p) != fmt.Sprint(want) {
			t.Fatalf("partition %d = %+v, want %+v", i, *p, want)
		}
	}
	if got := img.TopicConfig("orders"); len(got) != 2 || got["retention.ms"] != "1000" || got["cleanup.policy"] != "compact" {
		t.Fatalf("image configs %v", got)
	}

	// Fields the request's version does not have stay at their defaults.
	resp = c.CreateTopics(ctx, createReq(4, newTopic("v4", 2, 1)))
	if rt := resp.Topics[0]; rt.ErrorCode != 0 || rt.NumPartitions != -1 || rt.ReplicationFactor != -1 || rt.TopicID != [16]byte{} {
		t.Fatalf("v4 response %+v", rt)
	}
	resp = c.CreateTopics(ctx, createReq(0, newTopic("v4", 2, 1)))
	if rt := resp.Topics[0]; rt.ErrorCode != kerr.TopicAlreadyExists.Code || rt.ErrorMessage != nil {
		t.Fatalf("v0 response %+v", rt)
	}
	if len(log.Image().Topics["v4"].Partitions) != 2 {
		t.Fatal("v4 topic not created with 2 partitions")
	}
}

func TestCreateTopicsValidation(t *testing.T) {
	long := strings.Repeat("x", 249)
	manual := func(name string, np int32, rf int16, assign ...[]int32) kmsg.CreateTopicsRequestTopic {
		rt := newTopic(name, np, rf)
		for i, r := range assign {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition = int32(i)
			a.Replicas = r
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		}
		return rt
	}
	withPartitions := func(rt kmsg.CreateTopicsRequestTopic, ps ...int32) kmsg.CreateTopicsRequestTopic {
		for i := range rt.ReplicaAssignment {
			rt.ReplicaAssignment[i].Partition = ps[i]
		}
		return rt
	}
	nullCfg := newTopic("nullcfg", 1, 1)
	nullCfg.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "a"}, {Name: "retention.ms", Value: kmsg.StringPtr("1")}, {Name: "b"}}

	for _, tc := range []struct {
		name  string
		topic kmsg.CreateTopicsRequestTopic
		code  *kerr.Error
		msg   string
	}{
		{"metadata topic", newTopic("__cluster_metadata", 1, 1), kerr.InvalidRequest, "Creation of internal topic __cluster_metadata is prohibited."},
		{"empty name", newTopic("", 1, 1), kerr.InvalidTopicException, "Topic name is invalid: the empty string is not allowed"},
		{"dot", newTopic(".", 1, 1), kerr.InvalidTopicException, "Topic name is invalid: '.' is not allowed"},
		{"dotdot", newTopic("..", 1, 1), kerr.InvalidTopicException, "Topic name is invalid: '..' is not allowed"},
		{"too long", newTopic(long+"x", 1, 1), kerr.InvalidTopicException, "is longer than the max allowed length 249"},
		{"bad char", newTopic("a/b", 1, 1), kerr.InvalidTopicException, "Topic name is invalid: 'a/b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"},
		{"exists", newTopic("existing", 1, 1), kerr.TopicAlreadyExists, "Topic 'existing' already exists."},
		{"collides", newTopic("my_topic", 1, 1), kerr.InvalidTopicException, "Topic 'my_topic' collides with existing topic: my.topic"},
		{"null config", nullCfg, kerr.InvalidConfig, "Null value not supported for topic configs: a,b"},
		{"validator", newTopic("badcfg", 1, 1, "retention.ms", "soon"), kerr.InvalidConfig, `invalid value "soon" for retention.ms`},
		{"validator kerr", newTopic("policy", 1, 1, "forbidden", "1"), kerr.PolicyViolation, "forbidden"},
		{"rf zero", newTopic("rf0", 1, 0), kerr.InvalidReplicationFactor, "Replication factor must be larger than 0, or -1 to use the default value."},
		{"rf -2", newTopic("rf-2", 1, -2), kerr.InvalidReplicationFactor, "Replication factor must be larger than 0"},
		{"rf > brokers", newTopic("rf4", 1, 4), kerr.InvalidReplicationFactor, "Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be reached because only 3 broker(s) are registered."},
		{"partitions zero", newTopic("p0", 0, 1), kerr.InvalidPartitions, "Number of partitions was set to an invalid non-positive value."},
		{"partitions -2", newTopic("p-2", -2, 1), kerr.InvalidPartitions, "Number of partitions was set to an invalid non-positive value."},
		{"too many partitions", newTopic("huge", 10001, 1), kerr.InvalidPartitions, "with 10001 partitions would append more than 10000"},
		{"manual with rf", manual("m1", -1, 1, []int32{1}), kerr.InvalidRequest, "A manual partition assignment was specified, but replication factor was not set to -1."},
		{"manual with partitions", manual("m2", 1, -1, []int32{1}), kerr.InvalidRequest, "but numPartitions was not set to -1."},
		{"manual empty", manual("m3", -1, -1, []int32{}), kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list."},
		{"manual unknown broker", manual("m4", -1, -1, []int32{1, 7}), kerr.InvalidReplicaAssignment, "includes broker 7, but no such broker is registered."},
		{"manual repeated broker", manual("m5", -1, -1, []int32{2, 2}), kerr.InvalidReplicaAssignment, "includes the broker 2 more than once."},
		{"manual uneven", manual("m6", -1, -1, []int32{1, 2}, []int32{1}), kerr.InvalidReplicaAssignment, "includes a partition with 1 replica(s), but this is not consistent with previous partitions, which have 2 replica(s)."},
		{"manual duplicate partition", withPartitions(manual("m7", -1, -1, []int32{1}, []int32{2}), 0, 0), kerr.InvalidReplicaAssignment, "Found multiple manual partition assignments for partition 0"},
		{"manual gap", withPartitions(manual("m8", -1, -1, []int32{1}, []int32{2}), 0, 2), kerr.InvalidReplicaAssignment, "partitions should be a consecutive 0-based integer sequence"},
		{"manual fenced", manual("m9", -1, -1, []int32{3}), kerr.InvalidReplicaAssignment, "All brokers specified in the manual partition assignment for partition 0 are fenced or in controlled shutdown."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, log := newTestController(t, Config{ConfigValidator: func(res ConfigResource, configs map[string]*string) error {
				if v := configs["retention.ms"]; v != nil && *v == "soon" {
					return fmt.Errorf("invalid value %q for retention.ms", *v)
				}
				if configs["forbidden"] != nil {
					return fmt.Errorf("forbidden: %w", kerr.PolicyViolation)
				}
				return nil
			}}, 1, 2)
			ctx := context.Background()
			// Broker 3 registered fenced.
			if err := c.RegisterBroker(ctx, Broker{ID: 3, Fenced: true}); err != nil {
				t.Fatal(err)
			}
			mustCreate(t, c, newTopic("existing", 1, 1), newTopic("my.topic", 1, 1))
			before, proposals := log.Image(), log.proposals()
			resp := c.CreateTopics(ctx, createReq(7, tc.topic))
			rt := resp.Topics[0]
			if rt.ErrorCode != tc.code.Code || !strings.Contains(deref(rt.ErrorMessage), tc.msg) {
				t.Fatalf("got %s %q, want %s %q", codeName(rt.ErrorCode), deref(rt.ErrorMessage), tc.code.Message, tc.msg)
			}
			if rt.TopicID != [16]byte{} || rt.NumPartitions != -1 || rt.ReplicationFactor != -1 {
				t.Fatalf("failed topic has fields set: %+v", rt)
			}
			if log.Image() != before || log.proposals() != proposals {
				t.Fatal("a failed create wrote records")
			}
		})
	}
	t.Run("249 characters", func(t *testing.T) {
		c, _ := newTestController(t, Config{}, 1)
		mustCreate(t, c, newTopic(long, 1, 1))
	})
}

func TestCreateTopicsRequestLevel(t *testing.T) {
	c, log := newTestController(t, Config{}, 1, 2, 3)
	ctx := context.Background()

	// Duplicates fail once each, after the others; a collision within the
	// request fails the later topic; the rest are created in one batch.
	resp := c.CreateTopics(ctx, createReq(7,
		newTopic("a.b", 1, 1), newTopic("dup", 1, 1), newTopic("ok", 2, 3), newTopic("a_b", 1, 1), newTopic("dup", 1, 1)))
	var got []string
	for _, rt := range resp.Topics {
		got = append(got, rt.Topic+":"+codeName(rt.ErrorCode))
	}
	want := []string{"a.b:NONE", "ok:NONE", "a_b:INVALID_TOPIC_EXCEPTION", "dup:INVALID_REQUEST"}
	if !slices.Equal(got, want) {
		t.Fatalf("results %v, want %v", got, want)
	}
	if msg := deref(resp.Topics[3].ErrorMessage); msg != "Duplicate topic name." {
		t.Fatalf("duplicate message %q", msg)
	}
	if log.proposals() != 4 { // 3 registrations + 1 create
		t.Fatalf("%d proposals", log.proposals())
	}
	img := log.Image()
	if _, ok := img.Topics["dup"]; ok {
		t.Fatal("duplicated topic was created")
	}
	// RF 3 over three brokers: every partition on all three, leaders spread.
	for _, p := range img.Topics["ok"].Partitions {
		s := slices.Sorted(slices.Values(p.Replicas))
		if !slices.Equal(s, []int32{1, 2, 3}) || p.Leader != p.Replicas[0] || !slices.Equal(p.ISR, p.Replicas) {
			t.Fatalf("partition %+v", *p)
		}
	}
	if l0, l1 := img.Topics["ok"].Partitions[0].Leader, img.Topics["ok"].Partitions[1].Leader; l0 == l1 {
		t.Fatalf("both partitions led by %d", l0)
	}

	// ValidateOnly answers like a create and writes nothing.
	req := createReq(7, newTopic("vo", 4, 2), newTopic("ok", 1, 1))
	req.ValidateOnly = true
	before := log.proposals()
	resp = c.CreateTopics(ctx, req)
	if rt := resp.Topics[0]; rt.ErrorCode != 0 || rt.NumPartitions != 4 || rt.ReplicationFactor != 2 || rt.TopicID != [16]byte{} {
		t.Fatalf("validate-only %+v", rt)
	}
	if resp.Topics[1].ErrorCode != kerr.TopicAlreadyExists.Code {
		t.Fatalf("validate-only existing: %s", codeName(resp.Topics[1].ErrorCode))
	}
	if log.proposals() != before || log.Image().Topics["vo"] != nil {
		t.Fatal("validate-only wrote records")
	}

	// A follower answers NOT_CONTROLLER for every topic.
	log.mu.Lock()
	log.leader = false
	log.mu.Unlock()
	resp = c.CreateTopics(ctx, createReq(7, newTopic("x", 1, 1), newTopic("", 1, 1)))
	for _, rt := range resp.Topics {
		if rt.ErrorCode != kerr.NotController.Code {
			t.Fatalf("follower answered %s for %q", codeName(rt.ErrorCode), rt.Topic)
		}
	}
}

func TestPlaceReplicas(t *testing.T) {
	brokers := []int32{1, 2, 3, 4}
	placed, err := placeReplicas(brokers, nil, "t", 0, 8, 3)
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[int32]int{}
	followers := map[int32]int{}
	for _, r := range placed {
		if len(r) != 3 || len(slices.Compact(slices.Sorted(slices.Values(r)))) != 3 {
			t.Fatalf("replicas %v", r)
		}
		leaders[r[0]]++
		for _, f := range r[1:] {
			followers[f]++
		}
	}
	for _, b := range brokers {
		if leaders[b] != 2 || followers[b] != 4 {
			t.Fatalf("broker %d leads %d and follows %d of 8 partitions: %v", b, leaders[b], followers[b], placed)
		}
	}
	again, _ := placeReplicas(brokers, nil, "t", 0, 8, 3)
	if fmt.Sprint(again) != fmt.Sprint(placed) {
		t.Fatal("placement is not reproducible")
	}
	// Other names start elsewhere.
	starts := map[int32]bool{}
	for i := range 20 {
		p, _ := placeReplicas(brokers, nil, fmt.Sprint("topic-", i), 0, 1, 1)
		starts[p[0][0]] = true
	}
	if len(starts) < 3 {
		t.Fatalf("20 topics start on %d brokers only", len(starts))
	}
	if p, _ := placeReplicas([]int32{5}, nil, "x", 0, 3, 1); fmt.Sprint(p) != "[[5] [5] [5]]" {
		t.Fatalf("single broker: %v", p)
	}
	if _, e := placeReplicas(nil, []int32{1}, "x", 0, 1, 1); e == nil || e.code != kerr.InvalidReplicationFactor.Code || !strings.Contains(e.msg, "All brokers are currently fenced.") {
		t.Fatalf("no brokers: %+v", e)
	}
}

// TestPlaceReplicasOnInactiveBrokersLast: as Kafka's StripedReplicaPlacer,
// fenced or stopping brokers take replicas only once the active ones run
// out, never the leader's.
func TestPlaceReplicasOnInactiveBrokersLast(t *testing.T) {
	placed, e := placeReplicas([]int32{1, 2}, []int32{3, 4}, "t", 0, 4, 3)
	if e != nil {
		t.Fatal(e.msg)
	}
	onInactive := map[int32]int{}
	for _, r := range placed {
		if len(r) != 3 || !slices.Equal(slices.Sorted(slices.Values(r[:2])), []int32{1, 2}) || r[2] < 3 {
			t.Fatalf("replicas %v: want the active brokers 1 and 2 first, leader among them, then one inactive", r)
		}
		onInactive[r[2]]++
	}
	if onInactive[3] != 2 || onInactive[4] != 2 {
		t.Fatalf("inactive brokers hold %v of the third replicas, want 2 each: %v", onInactive, placed)
	}
	if _, e := placeReplicas([]int32{1, 2}, []int32{3, 4}, "t", 0, 1, 5); e == nil || !strings.Contains(e.msg, "only 4 broker(s) are registered") {
		t.Fatalf("rf 5 of 4 registered: %+v", e)
	}

	// CreateTopics with broker 3 fenced: three replicas, the ISR the two
	// active ones, and the leader one of them.
	c, log := newTestController(t, Config{}, 1, 2)
	if err := c.RegisterBroker(context.Background(), Broker{ID: 3, Fenced: true}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, newTopic("t", 3, 3))
	for _, p := range log.Image().Topics["t"].Partitions {
		if len(p.Replicas) != 3 || p.Replicas[2] != 3 || !slices.Equal(p.ISR, p.Replicas[:2]) || p.Leader != p.Replicas[0] {
			t.Fatalf("partition %d: replicas %v, ISR %v, leader %d; want broker 3 last and out of the ISR", p.Index, p.Replicas, p.ISR, p.Leader)
		}
	}
}

func deleteReq(version int16, names ...string) *kmsg.DeleteTopicsRequest {
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = version
	req.TimeoutMillis = 5000
	if version < 6 {
		req.TopicNames = names
		return req
	}
	for _, n := range names {
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, rt)
	}
	return req
}

func TestDeleteTopics(t *testing.T) {
	c, log := newTestController(t, Config{}, 1)
	ctx := context.Background()
	mustCreate(t, c, newTopic("a", 1, 1, "retention.ms", "5"), newTopic("b", 2, 1), newTopic("c", 1, 1), newTopic("d", 1, 1))
	ids := map[string]Uuid{}
	for n, tp := range log.Image().Topics {
		ids[n] = tp.ID
	}

	// v5, by name.
	resp := c.DeleteTopics(ctx, deleteReq(5, "a", "nope", "x", "x"))
	var got []string
	for _, rt := range resp.Topics {
		got = append(got, deref(rt.Topic)+":"+codeName(rt.ErrorCode)+":"+deref(rt.ErrorMessage))
	}
	want := []string{"a:NONE:<nil>", "nope:UNKNOWN_TOPIC_OR_PARTITION:This server does not host this topic-partition.",
		"x:INVALID_REQUEST:Duplicate topic name.", "x:INVALID_REQUEST:Duplicate topic name."}
	if !slices.Equal(got, want) {
		t.Fatalf("v5 results\n got %v\nwant %v", got, want)
	}
	img := log.Image()
	if _, ok := img.Topics["a"]; ok {
		t.Fatal("a still exists")
	}
	if img.TopicConfig("a") != nil {
		t.Fatal("a's configs survived it")
	}

	// v6, by id and by name.
	req := deleteReq(6, "c")
	add := func(name *string, id Uuid) {
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.Topic, rt.TopicID = name, id
		req.Topics = append(req.Topics, rt)
	}
	add(nil, ids["b"])
	add(nil, testID(99))
	add(kmsg.StringPtr("d"), ids["d"])
	add(nil, Uuid{})
	add(nil, ids["c"])
	resp = c.DeleteTopics(ctx, req)
	got = nil
	for _, rt := range resp.Topics {
		got = append(got, fmt.Sprintf("%s/%s:%s", deref(rt.Topic), fmtID(rt.TopicID), codeName(rt.ErrorCode)))
	}
	want = []string{
		"c/" + ids["c"].String() + ":INVALID_REQUEST", // its id was given too
		"b/" + ids["b"].String() + ":NONE",
		"<nil>/#99:UNKNOWN_TOPIC_ID",
		"d/" + ids["d"].String() + ":INVALID_REQUEST", // name and id
		"<nil>/#0:INVALID_REQUEST",                    // neither
		"c/" + ids["c"].String() + ":INVALID_REQUEST",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("v6 results\n got %v\nwant %v", got, want)
	}
	if names := log.Image().TopicNames(); !slices.Equal(names, []string{"c", "d"}) {
		t.Fatalf("topics left %v", names)
	}
}

func TestCreatePartitions(t *testing.T) {
	c, log := newTestController(t, Config{}, 1, 2, 3)
	ctx := context.Background()
	if err := c.RegisterBroker(ctx, Broker{ID: 4, Fenced: true}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, newTopic("t", 2, 2), newTopic("u", 1, 1))
	req := func(validateOnly bool, topics ...kmsg.CreatePartitionsRequestTopic) *kmsg.CreatePartitionsRequest {
		r := kmsg.NewPtrCreatePartitionsRequest()
		r.Version = 3
		r.TimeoutMillis = 5000
		r.ValidateOnly = validateOnly
		r.Topics = topics
		return r
	}
	topic := func(name string, count int32, assign ...[]int32) kmsg.CreatePartitionsRequestTopic {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic = name
		rt.Count = count
		if assign != nil {
			rt.Assignment = []kmsg.CreatePartitionsRequestTopicAssignment{}
		}
		for _, a := range assign {
			rt.Assignment = append(rt.Assignment, kmsg.CreatePartitionsRequestTopicAssignment{Replicas: a})
		}
		return rt
	}
	for _, tc := range []struct {
		name  string
		topic kmsg.CreatePartitionsRequestTopic
		code  *kerr.Error
		msg   string
	}{
		{"unknown", topic("nope", 3), kerr.UnknownTopicOrPartition, "This server does not host this topic-partition."},
		{"same count", topic("t", 2), kerr.InvalidPartitions, "Topic already has 2 partition(s)."},
		{"fewer", topic("t", 1), kerr.InvalidPartitions, "The topic t currently has 2 partition(s); 1 would not be an increase."},
		{"assignment count", topic("t", 4, []int32{1, 2}), kerr.InvalidReplicaAssignment, "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."},
		{"empty assignment", topic("t", 3, [][]int32{}...), kerr.InvalidReplicaAssignment, "Attempted to add 1 additional partition(s), but only 0 assignment(s) were specified."},
		{"assignment rf", topic("t", 3, []int32{1}), kerr.InvalidReplicaAssignment, "includes a partition with 1 replica(s), but this is not consistent with previous partitions, which have 2 replica(s)."},
		{"assignment broker", topic("t", 3, []int32{1, 9}), kerr.InvalidReplicaAssignment, "includes broker 9, but no such broker is registered."},
		{"assignment fenced", topic("u", 2, []int32{4}), kerr.InvalidReplicaAssignment, "for partition 1 are fenced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := log.Image()
			resp := c.CreatePartitions(ctx, req(false, tc.topic))
			rt := resp.Topics[0]
			if rt.ErrorCode != tc.code.Code || !strings.Contains(deref(rt.ErrorMessage), tc.msg) {
				t.Fatalf("got %s %q, want %s %q", codeName(rt.ErrorCode), deref(rt.ErrorMessage), tc.code.Message, tc.msg)
			}
			if log.Image() != before {
				t.Fatal("a failed request changed the image")
			}
		})
	}

	// Validate-only, then for real: placed and manual; duplicates fail.
	resp := c.CreatePartitions(ctx, req(true, topic("t", 5)))
	if resp.Topics[0].ErrorCode != 0 || len(log.Image().Topics["t"].Partitions) != 2 {
		t.Fatalf("validate-only: %s, %d partitions", codeName(resp.Topics[0].ErrorCode), len(log.Image().Topics["t"].Partitions))
	}
	resp = c.CreatePartitions(ctx, req(false, topic("t", 4), topic("u", 3, []int32{3}, []int32{4, 3}[1:]), topic("x", 2), topic("x", 3)))
	var got []string
	for _, rt := range resp.Topics {
		got = append(got, rt.Topic+":"+codeName(rt.ErrorCode))
	}
	if want := []string{"t:NONE", "u:NONE", "x:INVALID_REQUEST"}; !slices.Equal(got, want) {
		t.Fatalf("results %v, want %v", got, want)
	}
	img := log.Image()
	tp := img.Topics["t"]
	if len(tp.Partitions) != 4 {
		t.Fatalf("t has %d partitions", len(tp.Partitions))
	}
	for _, p := range tp.Partitions[2:] {
		if len(p.Replicas) != 2 || slices.Contains(p.Replicas, 4) || p.Leader != p.Replicas[0] || p.LeaderEpoch != 0 {
			t.Fatalf("new partition %+v", *p)
		}
	}
	u := img.Topics["u"]
	if len(u.Partitions) != 3 || fmt.Sprint(u.Partitions[1].Replicas, u.Partitions[2].Replicas, u.Partitions[2].Leader) != "[3] [3] 3" {
		t.Fatalf("u partitions %v %v", *u.Partitions[1], *u.Partitions[2])
	}
}

func TestWriteTimeoutKeepsSlot(t *testing.T) {
	c, log := newTestController(t, Config{}, 1)
	gate := make(chan struct{})
	log.mu.Lock()
	log.gate = gate
	log.mu.Unlock()

	// The first create times out waiting for its batch to apply...
	req := createReq(7, newTopic("slow", 1, 1))
	req.TimeoutMillis = 50
	resp := c.CreateTopics(context.Background(), req)
	if rt := resp.Topics[0]; rt.ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("got %s %s", codeName(rt.ErrorCode), deref(rt.ErrorMessage))
	}
	// ...and the next write waits for it rather than validating against
	// an image without it.
	done := make(chan *kmsg.CreateTopicsResponse)
	go func() { done <- c.CreateTopics(context.Background(), createReq(7, newTopic("slow", 1, 1))) }()
	// Give the second create time to (wrongly) propose before the first
	// batch applies.
	time.Sleep(50 * time.Millisecond)
	if n := log.proposals(); n != 2 { // the registration and the first create
		t.Fatalf("%d proposals while the first batch was pending", n)
	}
	gate <- struct{}{} // the first batch applies
	resp = <-done
	if rt := resp.Topics[0]; rt.ErrorCode != kerr.TopicAlreadyExists.Code {
		t.Fatalf("second create: %s", codeName(rt.ErrorCode))
	}
	if log.proposals() != 2 {
		t.Fatalf("%d proposals", log.proposals())
	}
	// A cancelled context while waiting for the slot.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.RegisterBroker(ctx, Broker{ID: 2}); !errors.Is(err, context.Canceled) {
		t.Fatalf("register with a cancelled context: %v", err)
	}
}
