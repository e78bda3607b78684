package configdef

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
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	srcTopic   = kmsg.ConfigSourceDynamicTopicConfig
	srcBroker  = kmsg.ConfigSourceDynamicBrokerConfig
	srcDynDef  = kmsg.ConfigSourceDynamicDefaultBrokerConfig
	srcStatic  = kmsg.ConfigSourceStaticBrokerConfig
	srcDefault = kmsg.ConfigSourceDefaultConfig
)

// testSources are a broker with a server.properties, one cluster-wide
// dynamic config and one per-broker dynamic config.
func testSources() Sources {
	return Sources{
		NodeID: 1,
		Static: map[string]string{
			"node.id":               "1",
			"log.retention.hours":   "24",
			"log.segment.bytes":     "536870912",
			"compression.type":      "lz4",
			"num.io.threads":        "8",
			"ssl.keystore.password": "secret",
			"listener.name.x.foo":   "bar",
		},
		DynamicDefault: map[string]string{"log.cleanup.policy": "compact", "log.retention.ms": "1000"},
		DynamicBroker:  map[string]string{"message.max.bytes": "3000000"},
	}
}

// describeOne is what a test reads of one entry: value (or "<nil>"),
// source, and synonyms as name=value(source).
func describeOne(e kmsg.DescribeConfigsResponseResourceConfig) string {
	v := "<nil>"
	if e.Value != nil {
		v = *e.Value
	}
	var syns []string
	for _, s := range e.ConfigSynonyms {
		sv := "<nil>"
		if s.Value != nil {
			sv = *s.Value
		}
		syns = append(syns, fmt.Sprintf("%s=%s(%s)", s.Name, sv, s.Source))
	}
	return fmt.Sprintf("%s=%s source=%s ro=%v sensitive=%v type=%s syn=[%s]",
		e.Name, v, e.Source, e.ReadOnly, e.IsSensitive, e.ConfigType, strings.Join(syns, " "))
}

func byName(entries []kmsg.DescribeConfigsResponseResourceConfig) map[string]kmsg.DescribeConfigsResponseResourceConfig {
	m := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, e := range entries {
		m[e.Name] = e
	}
	return m
}

// TestDescribeTopic follows Kafka's ConfigHelper.createTopicConfigEntry for
// a topic with overrides on a broker with static and dynamic configs.
func TestDescribeTopic(t *testing.T) {
	src := testSources()
	overrides := map[string]string{"retention.ms": "60000", "segment.bytes": "1048576", "cleanup.policy": "delete , compact"}
	entries := DescribeTopic(overrides, src, DescribeOptions{IncludeSynonyms: true})
	if len(entries) != len(topicDefs) {
		t.Fatalf("%d entries, want every topic config (%d)", len(entries), len(topicDefs))
	}
	for i := 1; i < len(entries); i++ {
		if entries[i-1].Name >= entries[i].Name {
			t.Fatalf("entries not sorted: %s before %s", entries[i-1].Name, entries[i].Name)
		}
	}
	got := byName(entries)
	for name, want := range map[string]string{
		// Overridden: the topic's value first. log.retention.ms is set by
		// the cluster-wide dynamic config, so its chain follows.
		"retention.ms":  "retention.ms=60000 source=DYNAMIC_TOPIC_CONFIG ro=false sensitive=false type=LONG syn=[retention.ms=60000(DYNAMIC_TOPIC_CONFIG) log.retention.ms=1000(DYNAMIC_DEFAULT_BROKER_CONFIG) log.retention.hours=24(STATIC_BROKER_CONFIG) log.retention.hours=168(DEFAULT_CONFIG)]",
		"segment.bytes": "segment.bytes=1048576 source=DYNAMIC_TOPIC_CONFIG ro=false sensitive=false type=INT syn=[segment.bytes=1048576(DYNAMIC_TOPIC_CONFIG) log.segment.bytes=536870912(STATIC_BROKER_CONFIG) log.segment.bytes=1073741824(DEFAULT_CONFIG)]",
		// The canonical list, in the topic synonym too.
		"cleanup.policy": "cleanup.policy=delete,compact source=DYNAMIC_TOPIC_CONFIG ro=false sensitive=false type=LIST syn=[cleanup.policy=delete,compact(DYNAMIC_TOPIC_CONFIG) log.cleanup.policy=compact(DYNAMIC_DEFAULT_BROKER_CONFIG) log.cleanup.policy=delete(DEFAULT_CONFIG)]",
		// Inherited from the broker, per broker and static.
		"max.message.bytes": "max.message.bytes=3000000 source=DYNAMIC_BROKER_CONFIG ro=false sensitive=false type=INT syn=[message.max.bytes=3000000(DYNAMIC_BROKER_CONFIG) message.max.bytes=1048588(DEFAULT_CONFIG)]",
		"compression.type":  "compression.type=lz4 source=STATIC_BROKER_CONFIG ro=false sensitive=false type=STRING syn=[compression.type=lz4(STATIC_BROKER_CONFIG) compression.type=producer(DEFAULT_CONFIG)]",
		// Kafka's chain starts at log.roll.ms, which nothing sets: the
		// log.roll.hours default is dropped and the source is DEFAULT_CONFIG.
		"segment.ms": "segment.ms=604800000 source=DEFAULT_CONFIG ro=false sensitive=false type=LONG syn=[]",
		// No broker synonym at all.
		"remote.storage.enable":                 "remote.storage.enable=false source=DEFAULT_CONFIG ro=false sensitive=false type=BOOLEAN syn=[]",
		"leader.replication.throttled.replicas": "leader.replication.throttled.replicas= source=DEFAULT_CONFIG ro=false sensitive=false type=LIST syn=[]",
		"min.cleanable.dirty.ratio":             "min.cleanable.dirty.ratio=0.5 source=DEFAULT_CONFIG ro=false sensitive=false type=DOUBLE syn=[log.cleaner.min.cleanable.ratio=0.5(DEFAULT_CONFIG)]",
	} {
		if g := describeOne(got[name]); g != want {
			t.Errorf("%s\n got %s\nwant %s", name, g, want)
		}
	}
	if d := got["retention.ms"].Documentation; d != nil {
		t.Errorf("documentation not asked for, got %q", *d)
	}
}

// TestDescribeTopicRetentionFromHours pins a Kafka quirk we keep: a
// retention.ms inherited from log.retention.hours reports its value but no
// synonyms and DEFAULT_CONFIG, because ConfigHelper drops the synonym chain
// up to log.retention.ms, which nothing set.
func TestDescribeTopicRetentionFromHours(t *testing.T) {
	src := Sources{NodeID: 1, Static: map[string]string{"log.retention.hours": "24"}}
	e := DescribeTopic(nil, src, DescribeOptions{Names: []string{"retention.ms"}, IncludeSynonyms: true})
	if len(e) != 1 {
		t.Fatalf("%d entries", len(e))
	}
	want := "retention.ms=86400000 source=DEFAULT_CONFIG ro=false sensitive=false type=LONG syn=[]"
	if g := describeOne(e[0]); g != want {
		t.Fatalf("\n got %s\nwant %s", g, want)
	}
}

func TestDescribeTopicOptions(t *testing.T) {
	src := testSources()
	e := DescribeTopic(map[string]string{"retention.ms": "5"}, src, DescribeOptions{
		Names: []string{"retention.ms", "no.such.config", "log.retention.ms"}, IncludeDocumentation: true,
	})
	if len(e) != 1 || e[0].Name != "retention.ms" {
		t.Fatalf("filter: %v", e)
	}
	if e[0].ConfigSynonyms != nil {
		t.Errorf("synonyms not asked for: %v", e[0].ConfigSynonyms)
	}
	if e[0].Source != srcTopic || e[0].IsDefault {
		t.Errorf("source %v isDefault %v", e[0].Source, e[0].IsDefault)
	}
	if e[0].Documentation == nil || !strings.Contains(*e[0].Documentation, "-1 is no limit") {
		t.Errorf("documentation %v", e[0].Documentation)
	}
}

func TestDescribeBroker(t *testing.T) {
	src := testSources()
	entries, err := DescribeBroker("1", src, DescribeOptions{IncludeSynonyms: true, IncludeDocumentation: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(brokerDefs)+3 {
		t.Fatalf("%d entries, want the %d implemented keys and the 3 other set keys", len(entries), len(brokerDefs))
	}
	got := byName(entries)
	for name, want := range map[string]string{
		"log.retention.hours":   "log.retention.hours=24 source=STATIC_BROKER_CONFIG ro=true sensitive=false type=INT syn=[log.retention.hours=24(STATIC_BROKER_CONFIG) log.retention.hours=168(DEFAULT_CONFIG)]",
		"log.retention.ms":      "log.retention.ms=1000 source=DYNAMIC_DEFAULT_BROKER_CONFIG ro=false sensitive=false type=LONG syn=[log.retention.ms=1000(DYNAMIC_DEFAULT_BROKER_CONFIG) log.retention.hours=24(STATIC_BROKER_CONFIG) log.retention.hours=168(DEFAULT_CONFIG)]",
		"log.retention.minutes": "log.retention.minutes=<nil> source=DEFAULT_CONFIG ro=true sensitive=false type=INT syn=[]",
		"message.max.bytes":     "message.max.bytes=3000000 source=DYNAMIC_BROKER_CONFIG ro=false sensitive=false type=INT syn=[message.max.bytes=3000000(DYNAMIC_BROKER_CONFIG) message.max.bytes=1048588(DEFAULT_CONFIG)]",
		"num.partitions":        "num.partitions=1 source=DEFAULT_CONFIG ro=true sensitive=false type=INT syn=[num.partitions=1(DEFAULT_CONFIG)]",
		"node.id":               "node.id=1 source=STATIC_BROKER_CONFIG ro=true sensitive=false type=INT syn=[node.id=1(STATIC_BROKER_CONFIG) node.id=1(DEFAULT_CONFIG)]",
		"broker.rack":           "broker.rack=<nil> source=DEFAULT_CONFIG ro=true sensitive=false type=STRING syn=[]",
		"num.io.threads":        "num.io.threads=8 source=STATIC_BROKER_CONFIG ro=false sensitive=false type=INT syn=[num.io.threads=8(STATIC_BROKER_CONFIG)]",
		"ssl.keystore.password": "ssl.keystore.password=<nil> source=STATIC_BROKER_CONFIG ro=false sensitive=true type=PASSWORD syn=[ssl.keystore.password=<nil>(STATIC_BROKER_CONFIG)]",
		"listener.name.x.foo":   "listener.name.x.foo=<nil> source=STATIC_BROKER_CONFIG ro=true sensitive=true type=UNKNOWN syn=[listener.name.x.foo=<nil>(STATIC_BROKER_CONFIG)]",
	} {
		if g := describeOne(got[name]); g != want {
			t.Errorf("%s\n got %s\nwant %s", name, g, want)
		}
	}
	if d := got["num.io.threads"].Documentation; d == nil || *d != unsupportedDoc {
		t.Errorf("num.io.threads documentation %v", d)
	}

	// The cluster-wide resource lists only its own dynamic configs.
	entries, err = DescribeBroker("", src, DescribeOptions{IncludeSynonyms: true})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range entries {
		lines = append(lines, describeOne(e))
	}
	want := []string{
		"log.cleanup.policy=compact source=DYNAMIC_DEFAULT_BROKER_CONFIG ro=false sensitive=false type=LIST syn=[log.cleanup.policy=compact(DYNAMIC_DEFAULT_BROKER_CONFIG)]",
		"log.retention.ms=1000 source=DYNAMIC_DEFAULT_BROKER_CONFIG ro=false sensitive=false type=LONG syn=[log.retention.ms=1000(DYNAMIC_DEFAULT_BROKER_CONFIG)]",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("cluster default\n got %s\nwant %s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	for name, msg := range map[string]string{
		"2": "Unexpected broker id, expected 1 or empty string, but received 2",
		"x": "Broker id must be an integer, but it is: x",
	} {
		_, err := DescribeBroker(name, src, DescribeOptions{})
		if err == nil || err.Error() != msg || !errors.Is(err, kerr.InvalidRequest) {
			t.Errorf("DescribeBroker(%q) error %v, want INVALID_REQUEST %q", name, err, msg)
		}
	}
}

// TestDescribeThroughKadm answers a real client's DescribeConfigs over a
// socket with DescribeTopic/DescribeBroker (kfake serves the connection
// and hands us the request) and checks what kadm reads back: the values,
// sources, sensitivity and synonyms survive encoding at the version the
// client negotiates.
func TestDescribeThroughKadm(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	src := testSources()
	src.NodeID = 0 // kfake's broker
	overrides := map[string]string{"retention.ms": "60000"}
	var sawVersion int16 = -1
	c.ControlKey(int16(kmsg.DescribeConfigs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.DescribeConfigsRequest)
		sawVersion = req.Version
		resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
		for _, r := range req.Resources {
			rr := kmsg.NewDescribeConfigsResponseResource()
			rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
			opts := DescribeOptions{Names: r.ConfigNames, IncludeSynonyms: req.Version >= 1 && req.IncludeSynonyms,
				IncludeDocumentation: req.Version >= 3 && req.IncludeDocumentation}
			switch r.ResourceType {
			case kmsg.ConfigResourceTypeTopic:
				rr.Configs = DescribeTopic(overrides, src, opts)
			case kmsg.ConfigResourceTypeBroker:
				var err error
				if rr.Configs, err = DescribeBroker(r.ResourceName, src, opts); err != nil {
					var ce *Error
					errors.As(err, &ce)
					rr.ErrorCode, rr.ErrorMessage = ce.Code.Code, &ce.Msg
				}
			}
			resp.Resources = append(resp.Resources, rr)
		}
		return resp, nil, true
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	rcs, err := adm.DescribeTopicConfigs(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("t", nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("%v %v", err, rc.Err)
	}
	got := map[string]kadm.Config{}
	for _, cfg := range rc.Configs {
		got[cfg.Key] = cfg
	}
	if len(got) != len(topicDefs) {
		t.Fatalf("kadm read %d topic configs, want %d", len(got), len(topicDefs))
	}
	r := got["retention.ms"]
	if r.Value == nil || *r.Value != "60000" || r.Source != srcTopic || len(r.Synonyms) != 4 ||
		r.Synonyms[1].Key != "log.retention.ms" || r.Synonyms[1].Source != srcDynDef || *r.Synonyms[1].Value != "1000" {
		t.Fatalf("retention.ms as kadm reads it: %+v", r)
	}
	if sawVersion < 1 {
		t.Fatalf("client used DescribeConfigs v%d; synonyms need v1+", sawVersion)
	}

	rcs, err = adm.DescribeBrokerConfigs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	rc, err = rcs.On("0", nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("%v %v", err, rc.Err)
	}
	got = map[string]kadm.Config{}
	for _, cfg := range rc.Configs {
		got[cfg.Key] = cfg
	}
	if p := got["ssl.keystore.password"]; !p.Sensitive || p.Value != nil || p.Source != srcStatic {
		t.Fatalf("password as kadm reads it: %+v", p)
	}
	if m := got["message.max.bytes"]; m.Value == nil || *m.Value != "3000000" || m.Source != srcBroker {
		t.Fatalf("message.max.bytes as kadm reads it: %+v", m)
	}

	// Another broker's id is the request's error for that resource (kgo
	// would route it to broker 7, so send it to this one directly).
	req := kmsg.NewPtrDescribeConfigsRequest()
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, "7"
	req.Resources = append(req.Resources, rr)
	kresp, err := cl.Broker(0).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kresp.(*kmsg.DescribeConfigsResponse)
	if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != kerr.InvalidRequest.Code ||
		resp.Resources[0].ErrorMessage == nil || *resp.Resources[0].ErrorMessage != "Unexpected broker id, expected 0 or empty string, but received 7" {
		t.Fatalf("describe broker 7: %+v", resp.Resources)
	}
}
