package configdef

import (
	"math"
	"testing"
	"time"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// TestTopicDefaultsTimeUnits checks Kafka's precedence among the keys that
// set one topic value in different units (KafkaConfig.logRetentionTimeMillis,
// logRollTimeMillis, logRollTimeJitterMillis, logFlushIntervalMs).
func TestTopicDefaultsTimeUnits(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		static, dynDef, dynBr map[string]string
		key, want             string
	}{
		{"retention default: 168 hours", nil, nil, nil, "retention.ms", "604800000"},
		{"hours", map[string]string{"log.retention.hours": "1"}, nil, nil, "retention.ms", "3600000"},
		{"minutes beat hours", map[string]string{"log.retention.hours": "1", "log.retention.minutes": "2"}, nil, nil, "retention.ms", "120000"},
		{"ms beat minutes and hours", map[string]string{"log.retention.hours": "1", "log.retention.minutes": "2", "log.retention.ms": "3"}, nil, nil, "retention.ms", "3"},
		{"ms -1 keeps forever", map[string]string{"log.retention.ms": "-1"}, nil, nil, "retention.ms", "-1"},
		{"negative hours are forever", map[string]string{"log.retention.hours": "-5"}, nil, nil, "retention.ms", "-1"},
		{"static ms beats dynamic hours", map[string]string{"log.retention.ms": "7"}, nil, map[string]string{"log.retention.hours": "9"}, "retention.ms", "7"},
		{"dynamic ms beats static ms", map[string]string{"log.retention.ms": "7"}, map[string]string{"log.retention.ms": "8"}, nil, "retention.ms", "8"},
		{"per-broker beats cluster default", nil, map[string]string{"log.retention.ms": "8"}, map[string]string{"log.retention.ms": "9"}, "retention.ms", "9"},
		{"roll hours", map[string]string{"log.roll.hours": "2"}, nil, nil, "segment.ms", "7200000"},
		{"roll ms beat hours", map[string]string{"log.roll.hours": "2", "log.roll.ms": "5000"}, nil, nil, "segment.ms", "5000"},
		{"jitter hours", map[string]string{"log.roll.jitter.hours": "1"}, nil, nil, "segment.jitter.ms", "3600000"},
		{"flush.ms from the scheduler interval", map[string]string{"log.flush.scheduler.interval.ms": "2000"}, nil, nil, "flush.ms", "2000"},
		{"flush interval beats scheduler", map[string]string{"log.flush.scheduler.interval.ms": "2000", "log.flush.interval.ms": "1000"}, nil, nil, "flush.ms", "1000"},
		{"flush.ms default", nil, nil, nil, "flush.ms", "9223372036854775807"},
		{"same-name synonym", map[string]string{"compression.type": "lz4"}, nil, nil, "compression.type", "lz4"},
		{"renamed synonym", map[string]string{"message.max.bytes": "2000000"}, nil, nil, "max.message.bytes", "2000000"},
		{"canonical value", map[string]string{"log.cleanup.policy": " compact , delete "}, nil, nil, "cleanup.policy", "compact,delete"},
		{"cleaner ratio", map[string]string{"log.cleaner.min.cleanable.ratio": "1"}, nil, nil, "min.cleanable.dirty.ratio", "1.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := Sources{Static: tc.static, DynamicDefault: tc.dynDef, DynamicBroker: tc.dynBr}
			if got := src.TopicDefaults()[tc.key]; got != tc.want {
				t.Fatalf("%s = %q, want %q", tc.key, got, tc.want)
			}
		})
	}
}

func TestTopicDefaultsKeys(t *testing.T) {
	got := Sources{}.TopicDefaults()
	for _, k := range []string{"remote.storage.enable", "leader.replication.throttled.replicas", "remote.log.copy.disable"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s has no broker synonym and must not be in TopicDefaults", k)
		}
	}
	if len(got) != len(topicDefs)-5 {
		t.Errorf("%d topic defaults, want %d", len(got), len(topicDefs)-5)
	}
}

func TestEffectiveLogConfig(t *testing.T) {
	src := Sources{
		Static: map[string]string{
			"log.retention.hours":       "24",
			"log.segment.bytes":         "536870912",
			"log.cleanup.policy":        "compact",
			"message.max.bytes":         "2000000",
			"producer.id.expiration.ms": "1000",
			"log.flush.interval.ms":     "250",
		},
		DynamicDefault: map[string]string{"log.message.timestamp.type": "LogAppendTime"},
	}
	got, err := EffectiveLogConfig(src, map[string]string{
		"retention.ms":   "60000",
		"cleanup.policy": "delete, compact",
		"segment.ms":     " 1000 ",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := storage.DefaultLogConfig()
	want.RetentionMs = 60000                                                // topic beats log.retention.hours
	want.SegmentBytes = 536870912                                           // broker static
	want.SegmentMs = 1000                                                   // topic, trimmed
	want.CleanupPolicy = storage.CleanupPolicy{Delete: true, Compact: true} // topic
	want.MaxMessageBytes = 2000000                                          // message.max.bytes
	want.ProducerIDExpirationMs = 1000                                      // broker key read by the log
	want.FlushMs = 250                                                      // log.flush.interval.ms
	want.TimestampType = record.LogAppendTime                               // dynamic cluster default
	if got != want {
		t.Fatalf("effective config\n got %+v\nwant %+v", got, want)
	}

	// Nothing set anywhere: storage's defaults, which are Kafka's.
	got, err = EffectiveLogConfig(Sources{}, nil)
	if err != nil || got != storage.DefaultLogConfig() {
		t.Fatalf("defaults: %+v, %v", got, err)
	}
	if got.RetentionMs != 7*24*time.Hour.Milliseconds() || got.FlushMessages != math.MaxInt64 {
		t.Fatalf("defaults are not Kafka's: %+v", got)
	}

	if _, err := EffectiveLogConfig(Sources{}, map[string]string{"retention.ms": "soon"}); err == nil ||
		err.Error() != "Invalid value soon for configuration retention.ms: Not a number of type LONG" {
		t.Fatalf("bad override: %v", err)
	}
	if _, err := EffectiveLogConfig(Sources{}, map[string]string{"bogus": "1"}); err == nil ||
		err.Error() != "Unknown topic config name: bogus" {
		t.Fatalf("unknown override: %v", err)
	}
}

func TestEffectiveTopicConfigs(t *testing.T) {
	src := Sources{Static: map[string]string{"min.insync.replicas": "2", "compression.type": "zstd"}}
	got, err := EffectiveTopicConfigs(src, map[string]string{"compression.type": "lz4", "preallocate": "TRUE", "mirror.name": "east.paused"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(topicDefs) {
		t.Fatalf("%d values, want every topic config", len(got))
	}
	for k, want := range map[string]string{
		"min.insync.replicas": "2", "compression.type": "lz4", "preallocate": "true",
		"remote.storage.enable": "false", "retention.ms": "604800000", "leader.replication.throttled.replicas": "",
	} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
}
