package broker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
)

// describedConfig returns one config of a topic or broker resource as
// "value (SOURCE)".
func describedConfig(t testing.TB, adm *kadm.Client, broker bool, resource, key string) string {
	t.Helper()
	ctx := testCtx(t, 10*time.Second)
	var rcs kadm.ResourceConfigs
	var err error
	if broker {
		rcs, err = adm.DescribeBrokerConfigs(ctx, 1)
	} else {
		rcs, err = adm.DescribeTopicConfigs(ctx, resource)
	}
	if err != nil {
		t.Fatalf("describe %s: %v", resource, err)
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			t.Fatalf("describe %s: %v", rc.Name, rc.Err)
		}
		for _, c := range rc.Configs {
			if c.Key == key {
				v := "<nil>"
				if c.Value != nil {
					v = *c.Value
				}
				return fmt.Sprintf("%s (%s)", v, c.Source)
			}
		}
	}
	t.Fatalf("%s has no config %s", resource, key)
	return ""
}

func alterErr(t testing.TB, rs kadm.AlterConfigsResponses, err error) error {
	t.Helper()
	if err != nil {
		return err
	}
	if len(rs) != 1 {
		t.Fatalf("%d alter responses, want 1", len(rs))
	}
	return rs[0].Err
}

func set(k, v string) kadm.AlterConfig {
	return kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v}
}

// TestAdminConfigs describes and alters topic and broker configs with
// AlterConfigs and IncrementalAlterConfigs, checking values, sources and
// error codes.
func TestAdminConfigs(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithConfig("log.retention.check.interval.ms=100"))
	adm := b.Admin(t)
	ctx := testCtx(t, 30*time.Second)
	createTopic(t, adm, "cfg", 1, "retention.ms", "3600000")

	for _, c := range []struct {
		broker         bool
		res, key, want string
	}{
		{false, "cfg", "retention.ms", "3600000 (DYNAMIC_TOPIC_CONFIG)"},
		{false, "cfg", "segment.bytes", "1073741824 (DEFAULT_CONFIG)"},
		{false, "cfg", "cleanup.policy", "delete (DEFAULT_CONFIG)"},
		{true, "1", "log.retention.check.interval.ms", "100 (STATIC_BROKER_CONFIG)"},
		{true, "1", "message.max.bytes", "1048588 (DEFAULT_CONFIG)"},
	} {
		if got := describedConfig(t, adm, c.broker, c.res, c.key); got != c.want {
			t.Fatalf("%s %s = %s, want %s", c.res, c.key, got, c.want)
		}
	}

	// IncrementalAlterConfigs: set one key, delete another.
	rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("segment.bytes", "4096"), {Op: kadm.DeleteConfig, Name: "retention.ms"}}, "cfg")
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("incremental alter cfg: %v", err)
	}
	if got := describedConfig(t, adm, false, "cfg", "segment.bytes"); got != "4096 (DYNAMIC_TOPIC_CONFIG)" {
		t.Fatalf("segment.bytes after the alter: %s", got)
	}
	if got := describedConfig(t, adm, false, "cfg", "retention.ms"); got != "604800000 (DEFAULT_CONFIG)" {
		t.Fatalf("retention.ms after deleting it: %s", got)
	}
	// Appending to a list config.
	rs, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.AppendConfig, Name: "cleanup.policy", Value: kadm.StringPtr("compact")}}, "cfg")
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("append cleanup.policy: %v", err)
	}
	if got := describedConfig(t, adm, false, "cfg", "cleanup.policy"); got != "delete,compact (DYNAMIC_TOPIC_CONFIG)" {
		t.Fatalf("cleanup.policy after APPEND compact: %s", got)
	}

	for _, tc := range []struct {
		name   string
		topic  string
		alters []kadm.AlterConfig
		want   error
	}{
		{"bad value", "cfg", []kadm.AlterConfig{set("segment.bytes", "big")}, kerr.InvalidConfig},
		{"below the minimum", "cfg", []kadm.AlterConfig{set("segment.bytes", "1")}, kerr.InvalidConfig},
		{"unknown key", "cfg", []kadm.AlterConfig{set("no.such.key", "1")}, kerr.InvalidConfig},
		{"unknown topic", "nope", []kadm.AlterConfig{set("retention.ms", "1")}, kerr.UnknownTopicOrPartition},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := adm.AlterTopicConfigs(ctx, tc.alters, tc.topic)
			if err := alterErr(t, rs, err); !errors.Is(err, tc.want) {
				t.Fatalf("alter: %v, want %v", err, tc.want)
			}
		})
	}
	// The failed alters changed nothing.
	if got := describedConfig(t, adm, false, "cfg", "segment.bytes"); got != "4096 (DYNAMIC_TOPIC_CONFIG)" {
		t.Fatalf("segment.bytes after the failed alters: %s", got)
	}

	// AlterConfigs (legacy) replaces every dynamic config of the topic.
	rs, err = adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{set("retention.bytes", "1000000")}, "cfg")
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("alter cfg: %v", err)
	}
	if got := describedConfig(t, adm, false, "cfg", "retention.bytes"); got != "1000000 (DYNAMIC_TOPIC_CONFIG)" {
		t.Fatalf("retention.bytes after AlterConfigs: %s", got)
	}
	if got := describedConfig(t, adm, false, "cfg", "segment.bytes"); got != "1073741824 (DEFAULT_CONFIG)" {
		t.Fatalf("segment.bytes after AlterConfigs replaced the topic's configs: %s", got)
	}

	// Broker configs: a dynamic per-broker value, a read-only key.
	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("message.max.bytes", "2000")}, 1)
	if err := alterErr(t, rs, err); err != nil {
		t.Fatalf("alter broker 1 message.max.bytes: %v", err)
	}
	if got := describedConfig(t, adm, true, "1", "message.max.bytes"); got != "2000 (DYNAMIC_BROKER_CONFIG)" {
		t.Fatalf("broker message.max.bytes: %s", got)
	}
	if got := describedConfig(t, adm, false, "cfg", "max.message.bytes"); got != "2000 (DYNAMIC_BROKER_CONFIG)" {
		t.Fatalf("topic max.message.bytes inherited from the broker: %s", got)
	}
	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("node.id", "5")}, 1)
	if err := alterErr(t, rs, err); !errors.Is(err, kerr.InvalidRequest) {
		t.Fatalf("alter broker node.id: %v, want INVALID_REQUEST", err)
	}
	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("message.max.bytes", "many")}, 1)
	if err := alterErr(t, rs, err); err == nil {
		t.Fatal("alter broker message.max.bytes=many succeeded")
	}
}

// TestTopicConfigsTakeEffect checks that config changes reach the log:
// max.message.bytes (topic and broker level) rejects large records, and
// segment.bytes with retention.bytes deletes the oldest segments, moving
// the log start offset and shrinking what DescribeLogDirs reports.
func TestTopicConfigsTakeEffect(t *testing.T) {
	b := brokertest.Start(t, brokertest.WithConfig("log.retention.check.interval.ms=50"))
	adm := b.Admin(t)
	ctx := testCtx(t, 30*time.Second)
	// Uncompressed: the limits apply to batches as sent (kgo's default
	// codec, snappy, would shrink these values to nothing).
	prod := b.Client(t, kgo.ProducerLinger(0), kgo.RecordRetries(0), kgo.ProducerBatchCompression(kgo.NoCompression()))
	produce := func(topic string, size int) error {
		return prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: bytes.Repeat([]byte("x"), size)}).FirstErr()
	}

	// max.message.bytes on the topic.
	createTopic(t, adm, "big", 1)
	if err := produce("big", 3000); err != nil {
		t.Fatalf("3000-byte record before any limit: %v", err)
	}
	rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("max.message.bytes", "1024")}, "big")
	if err := alterErr(t, rs, err); err != nil {
		t.Fatal(err)
	}
	if err := produce("big", 2000); !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("2000-byte record with max.message.bytes=1024: %v, want MESSAGE_TOO_LARGE", err)
	}
	if err := produce("big", 500); err != nil {
		t.Fatalf("500-byte record with max.message.bytes=1024: %v", err)
	}
	// The broker default applies to topics without an override, and the
	// topic override wins over it.
	createTopic(t, adm, "small", 1)
	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set("message.max.bytes", "1500")}, 1)
	if err := alterErr(t, rs, err); err != nil {
		t.Fatal(err)
	}
	if err := produce("small", 2000); !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("2000-byte record with message.max.bytes=1500: %v, want MESSAGE_TOO_LARGE", err)
	}
	rs, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("max.message.bytes", "5000")}, "small")
	if err := alterErr(t, rs, err); err != nil {
		t.Fatal(err)
	}
	if err := produce("small", 2000); err != nil {
		t.Fatalf("2000-byte record with the topic's max.message.bytes=5000: %v", err)
	}
	end, err := adm.ListEndOffsets(ctx, "big", "small")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := end.Lookup("big", 0); b.Offset != 2 {
		t.Fatalf("big holds %d records, want 2 (the rejected one not appended)", b.Offset)
	}
	if s, _ := end.Lookup("small", 0); s.Offset != 1 {
		t.Fatalf("small holds %d records, want 1", s.Offset)
	}

	// segment.bytes small enough that every batch gets its own segment.
	const n = 10
	createTopic(t, adm, "ret", 1, "segment.bytes", "200")
	for i := 0; i < n; i++ {
		if err := produce("ret", 100); err != nil {
			t.Fatal(err)
		}
	}
	size := logDirSize(ctx, t, adm, "ret")
	if size%n != 0 {
		t.Fatalf("ret holds %d bytes: not %d batches of one size", size, n)
	}
	batch := size / n
	// Kafka's size retention deletes the oldest segments while what
	// remains is at least retention.bytes, never the active one.
	const retention = 500
	wantDeleted := min((size-retention)/batch, n-1)
	rs, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{set("retention.bytes", fmt.Sprint(retention))}, "ret")
	if err := alterErr(t, rs, err); err != nil {
		t.Fatal(err)
	}
	start := waitStartOffset(ctx, t, adm, "ret", wantDeleted)
	if start != wantDeleted {
		t.Fatalf("log start offset %d after size retention, want %d", start, wantDeleted)
	}
	if got := logDirSize(ctx, t, adm, "ret"); got != size-wantDeleted*batch {
		t.Fatalf("ret holds %d bytes after retention, want %d", got, size-wantDeleted*batch)
	}
}

// logDirSize is the size DescribeLogDirs reports for topic's partition 0,
// checking the directory is the broker's.
func logDirSize(ctx context.Context, t testing.TB, adm *kadm.Client, topic string) int64 {
	t.Helper()
	dirs, err := adm.DescribeAllLogDirs(ctx, kadm.TopicsSet{topic: {0: struct{}{}}})
	if err != nil {
		t.Fatal(err)
	}
	var size int64 = -1
	dirs.Each(func(d kadm.DescribedLogDir) {
		if d.Err != nil {
			t.Fatalf("log dir %s: %v", d.Dir, d.Err)
		}
		if p, ok := d.Topics.Lookup(topic, 0); ok {
			size = p.Size
		}
	})
	if size < 0 {
		t.Fatalf("DescribeLogDirs does not list %s", tp(topic, 0))
	}
	return size
}

// waitStartOffset waits until topic's partition 0 starts at or after want
// and returns the start offset.
func waitStartOffset(ctx context.Context, t testing.TB, adm *kadm.Client, topic string, want int64) int64 {
	t.Helper()
	var last int64
	for ctx.Err() == nil {
		offs, err := adm.ListStartOffsets(ctx, topic)
		if err == nil {
			o, _ := offs.Lookup(topic, 0)
			last = o.Offset
			if o.Err == nil && o.Offset >= want {
				return o.Offset
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s starts at %d, never reached %d", tp(topic, 0), last, want)
	return 0
}
