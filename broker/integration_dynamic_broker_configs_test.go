package broker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestDynamicCleanerConfigs: the log cleaner's keys change at runtime, as
// in Kafka (LogCleaner.reconfigure). The broker starts with a cleaner
// backoff of an hour, so a compacted topic's closed segment waits; setting
// log.cleaner.backoff.ms for every broker (the "" resource) wakes the
// resting cleaner and the topic reads cleaned within seconds. The dynamic
// value applies again after a restart.
func TestDynamicCleanerConfigs(t *testing.T) {
	const topic = "dynamic-cleaner"
	b := brokertest.Start(t, brokertest.WithConfig("log.cleaner.backoff.ms=3600000"), brokertest.WithMetrics())
	adm := b.Admin(t)
	ctx := testCtx(t, 90*time.Second)
	// dirty writes 20 values of one key to a new compacted topic and
	// closes their segment.
	dirty := func(topic string) {
		t.Helper()
		createTopic(t, adm, topic, 1, "cleanup.policy", "compact", "segment.ms", "500")
		prod := b.Client(t, kgo.ProducerLinger(0))
		defer prod.Close()
		for i := range 20 {
			if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte("k"), Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second) // past segment.ms: the next append rolls
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte("closing")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// waitCleaned waits for the topic to read k's last value and the
	// closing write only.
	waitCleaned := func(topic, after string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			recs := consumeAll(ctx, t, b, topic)
			if len(recs) == 2 && string(recs[0].Value) == "19" {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d records 20 s after %s: the cleaner did not run", topic, len(recs), after)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	dirty(topic)
	if n := len(consumeAll(ctx, t, b, topic)); n != 21 {
		t.Fatalf("%d records before the cleaner woke, want all 21", n)
	}

	rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("log.cleaner.backoff.ms", "100"), set("log.cleaner.threads", "2")})
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("alter the cluster's log.cleaner.backoff.ms: %v", err)
	}
	if got := describedConfig(t, adm, true, "1", "log.cleaner.backoff.ms"); got != "100 (DYNAMIC_DEFAULT_BROKER_CONFIG)" {
		t.Fatalf("log.cleaner.backoff.ms described as %s", got)
	}
	waitCleaned(topic, "log.cleaner.backoff.ms=100")
	// The cleaner's metrics: two threads now, one cleaning that shrank
	// the log, a look just now.
	waitMetric(t, b, "strait_log_cleaner_threads", 2)
	waitMetric(t, b, "strait_log_cleaner_cleanings_total", 1)
	body := scrape(t, b)
	read, _ := metricValue(t, body, "strait_log_cleaner_read_bytes_total")
	written, _ := metricValue(t, body, "strait_log_cleaner_written_bytes_total")
	if since, ok := metricValue(t, body, "strait_log_cleaner_seconds_since_last_run"); !ok || since > 10 || read <= written {
		t.Fatalf("cleaner metrics: %.1f s since the last run, %v bytes read, %v written", since, read, written)
	}
	// A runtime change may not stop every cleaner thread (Kafka's
	// validateReconfiguration), nor turn the cleaner off.
	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("log.cleaner.threads", "0")}, 1)
	if err := alterErr(t, rs, err); !errors.Is(err, kerr.InvalidConfig) {
		t.Fatalf("log.cleaner.threads=0 at runtime: %v, want INVALID_CONFIG", err)
	}
	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("log.cleaner.enable", "false")}, 1)
	if err := alterErr(t, rs, err); !errors.Is(err, kerr.InvalidRequest) {
		t.Fatalf("log.cleaner.enable at runtime: %v, want INVALID_REQUEST", err)
	}

	// After a restart the static backoff of an hour would hold the next
	// dirt back; the dynamic 100 ms, from the metadata log, applies.
	b.Restart(t)
	adm = b.Admin(t)
	dirty("after-restart")
	waitCleaned("after-restart", "a restart with log.cleaner.backoff.ms=100 set dynamically")
}

// TestDynamicBrokerKeysKafkaAccepts: every broker key Kafka changes at
// runtime is accepted by AlterConfigs and IncrementalAlterConfigs, even
// those Strait does not implement: they are stored, described with their
// DYNAMIC_* source and logged as ignored. The case: a librdkafka
// admin setting sasl.kerberos.min.time.before.relogin on a broker got
// INVALID_REQUEST. Keys Kafka does not change at runtime stay refused with
// Kafka's message, and values are checked by Kafka's type.
func TestDynamicBrokerKeysKafkaAccepts(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	ctx := testCtx(t, 30*time.Second)

	// kafka-go's (legacy) AlterConfigs and DescribeConfigs.
	if e := kafkaGoSetOnBroker1(ctx, t, b, "sasl.kerberos.min.time.before.relogin", "60000"); e.ConfigValue != "60000" || e.ConfigSource != 2 || e.ReadOnly {
		t.Fatalf("kafka-go describes %+v, want 60000 from DYNAMIC_BROKER_CONFIG (2), not read-only", e)
	}

	// kadm's IncrementalAlterConfigs: per broker and for every broker.
	rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("num.io.threads", "16"), set("background.threads", "20"),
		set("listener.name.plaintext.ssl.keystore.location", "/etc/strait/ks.jks")}, 1)
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("alter broker 1: %v", err)
	}
	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("num.replica.fetchers", "4")})
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("alter the cluster default: %v", err)
	}
	for key, want := range map[string]string{
		"num.io.threads":                        "16 (DYNAMIC_BROKER_CONFIG)",
		"background.threads":                    "20 (DYNAMIC_BROKER_CONFIG)",
		"num.replica.fetchers":                  "4 (DYNAMIC_DEFAULT_BROKER_CONFIG)",
		"sasl.kerberos.min.time.before.relogin": "60000 (DYNAMIC_BROKER_CONFIG)",
	} {
		if got := describedConfig(t, adm, true, "1", key); got != want {
			t.Errorf("%s described as %s, want %s", key, got, want)
		}
	}
	waitLog(t, b, `ignoring configs Strait does not implement" keys=background.threads,listener.name.plaintext.ssl.keystore.location,num.io.threads resource="broker 1"`,
		`keys=num.replica.fetchers resource="cluster default"`)

	expectRefusals(ctx, t, adm, []refusal{
		{"not dynamic in Kafka", []kadm.AlterConfig{set("num.partitions", "3")}, []int32{1}, kerr.InvalidRequest, "Cannot update these configs dynamically: num.partitions"},
		{"a bad number", []kadm.AlterConfig{set("num.io.threads", "many")}, []int32{1}, kerr.InvalidConfig, "Invalid value many for configuration num.io.threads: Not a number of type INT"},
		{"a listener key for every broker", []kadm.AlterConfig{set("sasl.kerberos.min.time.before.relogin", "1")}, nil, kerr.InvalidRequest,
			"Cannot update these configs at default cluster level, broker id must be specified: sasl.kerberos.min.time.before.relogin"},
		{"a keystore without its listener", []kadm.AlterConfig{set("ssl.keystore.location", "/k")}, []int32{1}, kerr.InvalidRequest,
			"These security configs can be dynamically updated only per-listener using the listener prefix: ssl.keystore.location"},
	})
}

// kafkaGoSetOnBroker1 sets key on broker 1 with kafka-go's (legacy)
// AlterConfigs, which replaces the resource's dynamic configs, and
// returns the entry kafka-go's DescribeConfigs then reads.
func kafkaGoSetOnBroker1(ctx context.Context, t *testing.T, b *brokertest.Broker, key, value string) kafka.DescribeConfigResponseConfigEntry {
	t.Helper()
	kc := &kafka.Client{Addr: kafka.TCP(b.Addr())}
	resp, err := kc.AlterConfigs(ctx, &kafka.AlterConfigsRequest{Resources: []kafka.AlterConfigRequestResource{{
		ResourceType: kafka.ResourceTypeBroker, ResourceName: "1",
		Configs: []kafka.AlterConfigRequestConfig{{Name: key, Value: value}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	for res, err := range resp.Errors {
		if err != nil {
			t.Fatalf("kafka-go AlterConfigs %v %s: %v", res, key, err)
		}
	}
	desc, err := kc.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeBroker, ResourceName: "1", ConfigNames: []string{key},
	}}})
	if err != nil || len(desc.Resources) != 1 || desc.Resources[0].Error != nil || len(desc.Resources[0].ConfigEntries) != 1 {
		t.Fatalf("kafka-go DescribeConfigs %s: %+v %v", key, desc, err)
	}
	return desc.Resources[0].ConfigEntries[0]
}

// refusal is an alteration of broker configs (of the cluster default when
// brokers is nil) the broker refuses with code and msg.
type refusal struct {
	name    string
	configs []kadm.AlterConfig
	brokers []int32
	code    error
	msg     string
}

func expectRefusals(ctx context.Context, t *testing.T, adm *kadm.Client, refusals []refusal) {
	t.Helper()
	for _, tc := range refusals {
		rs, err := adm.AlterBrokerConfigs(ctx, tc.configs, tc.brokers...)
		err = alterErr(t, rs, err)
		if !errors.Is(err, tc.code) || len(rs) != 1 || rs[0].ErrMessage != tc.msg {
			t.Errorf("%s: %v %v, want %v %q", tc.name, err, rs, tc.code, tc.msg)
		}
	}
}
