package raftmeta

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func alterReq(validateOnly bool, resources ...kmsg.AlterConfigsRequestResource) *kmsg.AlterConfigsRequest {
	r := kmsg.NewPtrAlterConfigsRequest()
	r.Version = 2
	r.ValidateOnly = validateOnly
	r.Resources = resources
	return r
}

func alterRes(t kmsg.ConfigResourceType, name string, kv ...*string) kmsg.AlterConfigsRequestResource {
	r := kmsg.NewAlterConfigsRequestResource()
	r.ResourceType = t
	r.ResourceName = name
	for i := 0; i+1 < len(kv); i += 2 {
		r.Configs = append(r.Configs, kmsg.AlterConfigsRequestResourceConfig{Name: *kv[i], Value: kv[i+1]})
	}
	return r
}

func incReq(validateOnly bool, resources ...kmsg.IncrementalAlterConfigsRequestResource) *kmsg.IncrementalAlterConfigsRequest {
	r := kmsg.NewPtrIncrementalAlterConfigsRequest()
	r.Version = 1
	r.ValidateOnly = validateOnly
	r.Resources = resources
	return r
}

type op struct {
	name  string
	op    kmsg.IncrementalAlterConfigOp
	value *string
}

func incRes(t kmsg.ConfigResourceType, name string, ops ...op) kmsg.IncrementalAlterConfigsRequestResource {
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType = t
	r.ResourceName = name
	for _, o := range ops {
		r.Configs = append(r.Configs, kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: o.name, Op: o.op, Value: o.value})
	}
	return r
}

var (
	set      = kmsg.IncrementalAlterConfigOpSet
	del      = kmsg.IncrementalAlterConfigOpDelete
	appendOp = kmsg.IncrementalAlterConfigOpAppend
	subtract = kmsg.IncrementalAlterConfigOpSubtract
	topicT   = kmsg.ConfigResourceTypeTopic
	brokerT  = kmsg.ConfigResourceTypeBroker
	s        = kmsg.StringPtr
)

func configsOf(img *Image, t ConfigResourceType, name string) string {
	m := img.Configs[ConfigResource{Type: t, Name: name}]
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, k+"="+m[k])
	}
	return strings.Join(kv, " ")
}

// configValidator rejects nulls and retention.ms=bad, and records what it
// saw.
type configValidator struct{ seen []string }

func (v *configValidator) validate(res ConfigResource, configs map[string]*string) error {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		kv = append(kv, k+"="+deref(configs[k]))
	}
	v.seen = append(v.seen, fmt.Sprintf("%d/%s: %s", res.Type, res.Name, strings.Join(kv, " ")))
	// The broker's validator rejects null values, as Kafka's does.
	for k, val := range configs {
		if val == nil {
			return fmt.Errorf("Null value not supported for topic configs: %s", k)
		}
	}
	if p := configs["retention.ms"]; p != nil && *p == "bad" {
		return fmt.Errorf("Invalid value bad for configuration retention.ms: Not a number of type LONG")
	}
	if configs["policy"] != nil {
		return fmt.Errorf("rejected by policy: %w", kerr.PolicyViolation)
	}
	return nil
}

func TestAlterConfigs(t *testing.T) {
	v := &configValidator{}
	c, log := newTestController(t, Config{ConfigValidator: v.validate}, 1)
	ctx := context.Background()
	mustCreate(t, c, newTopic("t", 1, 1, "retention.ms", "10", "segment.ms", "20"))

	// The legacy API replaces the whole set: segment.ms goes.
	resp := c.AlterConfigs(ctx, alterReq(false,
		alterRes(topicT, "t", s("retention.ms"), s("11"), s("cleanup.policy"), s("compact")),
		alterRes(brokerT, "", s("log.retention.ms"), s("5")),
		alterRes(brokerT, "1", s("log.cleaner.threads"), s("2"))))
	for _, r := range resp.Resources {
		if r.ErrorCode != 0 {
			t.Fatalf("%s: %s %s", r.ResourceName, codeName(r.ErrorCode), deref(r.ErrorMessage))
		}
	}
	img := log.Image()
	if got := configsOf(img, ConfigResourceTopic, "t"); got != "cleanup.policy=compact retention.ms=11" {
		t.Fatalf("topic configs %q", got)
	}
	if got := configsOf(img, ConfigResourceBroker, ""); got != "log.retention.ms=5" {
		t.Fatalf("cluster configs %q", got)
	}
	if got := configsOf(img, ConfigResourceBroker, "1"); got != "log.cleaner.threads=2" {
		t.Fatalf("broker 1 configs %q", got)
	}
	// The validator saw each resource as it would be after the change.
	if want := "2/t: cleanup.policy=compact retention.ms=11"; !slices.Contains(v.seen, want) {
		t.Fatalf("validator saw %q, want %q among them", v.seen, want)
	}

	for _, tc := range []struct {
		name string
		res  []kmsg.AlterConfigsRequestResource
		code *kerr.Error
		msg  string
	}{
		{"unknown topic", []kmsg.AlterConfigsRequestResource{alterRes(topicT, "nope", s("a"), s("b"))}, kerr.UnknownTopicOrPartition, "The topic 'nope' does not exist."},
		{"default topic", []kmsg.AlterConfigsRequestResource{alterRes(topicT, "", s("a"), s("b"))}, kerr.InvalidRequest, "Default topic resources are not allowed."},
		{"invalid topic", []kmsg.AlterConfigsRequestResource{alterRes(topicT, "a b", s("a"), s("b"))}, kerr.InvalidTopicException, "Topic name is invalid"},
		{"other broker", []kmsg.AlterConfigsRequestResource{alterRes(brokerT, "2", s("a"), s("b"))}, kerr.InvalidRequest, "Unexpected broker id, expected 1, but received 2"},
		{"broker name", []kmsg.AlterConfigsRequestResource{alterRes(brokerT, "one", s("a"), s("b"))}, kerr.InvalidRequest, "Node id must be an integer, but it is: one"},
		{"resource type", []kmsg.AlterConfigsRequestResource{alterRes(kmsg.ConfigResourceTypeBrokerLogger, "1", s("a"), s("b"))}, kerr.InvalidRequest, "Unknown resource type 8"},
		{"duplicate key", []kmsg.AlterConfigsRequestResource{alterRes(topicT, "t", s("a"), s("1"), s("a"), s("2"))}, kerr.InvalidRequest, "Error due to duplicate config keys"},
		{"null value", []kmsg.AlterConfigsRequestResource{alterRes(topicT, "t", s("a"), nil)}, kerr.InvalidRequest, "Null value not supported for : a"},
		{"topic validator", []kmsg.AlterConfigsRequestResource{alterRes(topicT, "t", s("retention.ms"), s("bad"))}, kerr.InvalidConfig, "Invalid value bad for configuration retention.ms"},
		{"broker validator", []kmsg.AlterConfigsRequestResource{alterRes(brokerT, "", s("retention.ms"), s("bad"))}, kerr.InvalidRequest, "Invalid value bad for configuration retention.ms"},
		{"validator kerr", []kmsg.AlterConfigsRequestResource{alterRes(topicT, "t", s("policy"), s("x"))}, kerr.PolicyViolation, "rejected by policy"},
		{"duplicate resource", []kmsg.AlterConfigsRequestResource{alterRes(topicT, "t", s("a"), s("1")), alterRes(topicT, "t", s("b"), s("1"))}, kerr.InvalidRequest, "Each resource must appear at most once."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := log.Image()
			resp := c.AlterConfigs(ctx, alterReq(false, tc.res...))
			for _, r := range resp.Resources {
				if r.ErrorCode != tc.code.Code || !strings.Contains(deref(r.ErrorMessage), tc.msg) {
					t.Fatalf("got %s %q, want %s %q", codeName(r.ErrorCode), deref(r.ErrorMessage), tc.code.Message, tc.msg)
				}
			}
			if log.Image() != before {
				t.Fatal("a failed alter changed the image")
			}
		})
	}

	// Failures are per resource; ValidateOnly writes nothing.
	resp = c.AlterConfigs(ctx, alterReq(false, alterRes(topicT, "nope"), alterRes(topicT, "t", s("retention.ms"), s("12"))))
	if resp.Resources[0].ErrorCode != kerr.UnknownTopicOrPartition.Code || resp.Resources[1].ErrorCode != 0 {
		t.Fatalf("mixed: %s %s", codeName(resp.Resources[0].ErrorCode), codeName(resp.Resources[1].ErrorCode))
	}
	if got := configsOf(log.Image(), ConfigResourceTopic, "t"); got != "retention.ms=12" {
		t.Fatalf("after mixed: %q", got)
	}
	before := log.proposals()
	resp = c.AlterConfigs(ctx, alterReq(true, alterRes(topicT, "t")))
	if resp.Resources[0].ErrorCode != 0 || log.proposals() != before || configsOf(log.Image(), ConfigResourceTopic, "t") != "retention.ms=12" {
		t.Fatal("validate-only wrote records")
	}
	// Setting a topic's configs to what they are appends nothing; a broker
	// resource is always written (KAFKA-14136).
	c.AlterConfigs(ctx, alterReq(false, alterRes(topicT, "t", s("retention.ms"), s("12"))))
	if log.proposals() != before {
		t.Fatal("an unchanged topic config was written")
	}
	c.AlterConfigs(ctx, alterReq(false, alterRes(brokerT, "", s("log.retention.ms"), s("5"))))
	if log.proposals() != before+1 {
		t.Fatal("an unchanged broker config was not written")
	}
}

func TestIncrementalAlterConfigs(t *testing.T) {
	v := &configValidator{}
	c, log := newTestController(t, Config{ConfigValidator: v.validate}, 1)
	ctx := context.Background()
	mustCreate(t, c, newTopic("t", 1, 1, "retention.ms", "10", "segment.ms", "20"))

	steps := []struct {
		ops  []op
		want string
	}{
		{[]op{{"retention.ms", set, s("11")}, {"segment.ms", del, nil}}, "retention.ms=11"},
		// APPEND to an unset list starts from its default.
		{[]op{{"cleanup.policy", appendOp, s("compact")}}, "cleanup.policy=delete,compact retention.ms=11"},
		{[]op{{"cleanup.policy", appendOp, s("compact,delete")}}, "cleanup.policy=delete,compact retention.ms=11"},
		{[]op{{"cleanup.policy", subtract, s("delete")}}, "cleanup.policy=compact retention.ms=11"},
		{[]op{{"leader.replication.throttled.replicas", appendOp, s("0:1,1:1")}}, "cleanup.policy=compact leader.replication.throttled.replicas=0:1,1:1 retention.ms=11"},
		{[]op{{"leader.replication.throttled.replicas", subtract, s("0:1,1:1")}, {"retention.ms", del, nil}}, "cleanup.policy=compact leader.replication.throttled.replicas="},
		// Deleting an unset key is fine.
		{[]op{{"nothing", del, nil}}, "cleanup.policy=compact leader.replication.throttled.replicas="},
	}
	for i, st := range steps {
		resp := c.IncrementalAlterConfigs(ctx, incReq(false, incRes(topicT, "t", st.ops...)))
		if r := resp.Resources[0]; r.ErrorCode != 0 {
			t.Fatalf("step %d: %s %s", i, codeName(r.ErrorCode), deref(r.ErrorMessage))
		}
		if got := configsOf(log.Image(), ConfigResourceTopic, "t"); got != st.want {
			t.Fatalf("step %d: configs %q, want %q", i, got, st.want)
		}
	}
	if want := "2/t: cleanup.policy=delete,compact retention.ms=11"; !slices.Contains(v.seen, want) {
		t.Fatalf("validator saw %q", v.seen)
	}

	resp := c.IncrementalAlterConfigs(ctx, incReq(false,
		incRes(brokerT, "", op{"log.retention.ms", set, s("7")}),
		incRes(brokerT, "1", op{"num.io.threads", set, s("4")})))
	if resp.Resources[0].ErrorCode != 0 || resp.Resources[1].ErrorCode != 0 {
		t.Fatalf("broker: %s %s", codeName(resp.Resources[0].ErrorCode), codeName(resp.Resources[1].ErrorCode))
	}
	if configsOf(log.Image(), ConfigResourceBroker, "") != "log.retention.ms=7" || configsOf(log.Image(), ConfigResourceBroker, "1") != "num.io.threads=4" {
		t.Fatal("broker configs not set")
	}

	for _, tc := range []struct {
		name string
		res  []kmsg.IncrementalAlterConfigsRequestResource
		code *kerr.Error
		msg  string
	}{
		{"unknown topic", []kmsg.IncrementalAlterConfigsRequestResource{incRes(topicT, "nope", op{"a", set, s("1")})}, kerr.UnknownTopicOrPartition, "The topic 'nope' does not exist."},
		{"other broker", []kmsg.IncrementalAlterConfigsRequestResource{incRes(brokerT, "7", op{"a", set, s("1")})}, kerr.InvalidRequest, "Unexpected broker id, expected 1, but received 7"},
		{"broker logger", []kmsg.IncrementalAlterConfigsRequestResource{incRes(kmsg.ConfigResourceTypeBrokerLogger, "1", op{"kafka", set, s("DEBUG")})}, kerr.InvalidRequest, "Unknown resource type 8"},
		{"append non-list", []kmsg.IncrementalAlterConfigsRequestResource{incRes(topicT, "t", op{"retention.ms", appendOp, s("1")})}, kerr.InvalidConfig, "Can't APPEND to key retention.ms because its type is not LIST."},
		{"subtract non-list", []kmsg.IncrementalAlterConfigsRequestResource{incRes(topicT, "t", op{"retention.ms", subtract, s("1")})}, kerr.InvalidConfig, "Can't SUBTRACT to key retention.ms because its type is not LIST."},
		{"unknown op", []kmsg.IncrementalAlterConfigsRequestResource{incRes(topicT, "t", op{"retention.ms", 9, s("1")})}, kerr.InvalidRequest, "Unknown operations type 9"},
		{"null set", []kmsg.IncrementalAlterConfigsRequestResource{incRes(topicT, "t", op{"retention.ms", set, nil}, op{"x", appendOp, nil})}, kerr.InvalidRequest, "Null value not supported for : retention.ms, x"},
		{"duplicate key", []kmsg.IncrementalAlterConfigsRequestResource{incRes(topicT, "t", op{"a", set, s("1")}, op{"a", del, nil})}, kerr.InvalidRequest, "Error due to duplicate config keys"},
		{"validator", []kmsg.IncrementalAlterConfigsRequestResource{incRes(topicT, "t", op{"segment.ms", set, s("1")}, op{"retention.ms", set, s("bad")})}, kerr.InvalidConfig, "Invalid value bad for configuration retention.ms"},
		{"duplicate resource", []kmsg.IncrementalAlterConfigsRequestResource{incRes(brokerT, ""), incRes(brokerT, "")}, kerr.InvalidRequest, "Each resource must appear at most once."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := log.Image()
			resp := c.IncrementalAlterConfigs(ctx, incReq(false, tc.res...))
			for _, r := range resp.Resources {
				if r.ErrorCode != tc.code.Code || !strings.Contains(deref(r.ErrorMessage), tc.msg) {
					t.Fatalf("got %s %q, want %s %q", codeName(r.ErrorCode), deref(r.ErrorMessage), tc.code.Message, tc.msg)
				}
			}
			if log.Image() != before {
				t.Fatal("a failed alter changed the image")
			}
		})
	}

	// Deleting the topic deletes its configs.
	c.DeleteTopics(ctx, deleteReq(6, "t"))
	if img := log.Image(); img.TopicConfig("t") != nil {
		t.Fatal("configs outlived the topic")
	}
}
