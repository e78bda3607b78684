package configdef

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTopicDefNames pins the topic configs: Kafka 4.x's TopicConfig list
// (message.format.version and message.timestamp.difference.max.ms removed
// in 4.0) plus the throttled-replica lists of QuotaConfig.
func TestTopicDefNames(t *testing.T) {
	var got []string
	for _, d := range TopicDefs() {
		got = append(got, d.Name)
	}
	want := []string{
		"cleanup.policy", "compression.gzip.level", "compression.lz4.level", "compression.type",
		"compression.zstd.level", "delete.retention.ms", "file.delete.delay.ms", "flush.messages",
		"flush.ms", "follower.replication.throttled.replicas", "index.interval.bytes",
		"leader.replication.throttled.replicas", "local.retention.bytes", "local.retention.ms",
		"max.compaction.lag.ms", "max.message.bytes", "message.downconversion.enable",
		"message.timestamp.after.max.ms", "message.timestamp.before.max.ms", "message.timestamp.type",
		"min.cleanable.dirty.ratio", "min.compaction.lag.ms", "min.insync.replicas", "preallocate",
		"remote.log.copy.disable", "remote.log.delete.on.disable", "remote.storage.enable",
		"retention.bytes", "retention.ms", "segment.bytes", "segment.index.bytes", "segment.jitter.ms",
		"segment.ms", "unclean.leader.election.enable",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("topic configs\n got %q\nwant %q", got, want)
	}
}

// TestDefaultsAreCanonicalAndValid: every default passes its own type and
// validator and is already in canonical form, so describing a default
// prints exactly the default.
func TestDefaultsAreCanonicalAndValid(t *testing.T) {
	for _, defs := range [][]Def{TopicDefs(), BrokerDefs()} {
		for _, d := range defs {
			if d.Doc == "" {
				t.Errorf("%s has no documentation", d.Name)
			}
			def, ok := d.DefaultString()
			if !ok {
				continue
			}
			got, err := d.Normalize(def)
			if err != nil || got != def {
				t.Errorf("%s default %q normalizes to %q, %v", d.Name, def, got, err)
			}
		}
	}
}

// TestTopicDefaults pins the defaults Kafka 4.x documents for topics.
func TestTopicDefaults(t *testing.T) {
	want := map[string]string{
		"cleanup.policy": "delete", "compression.type": "producer", "compression.gzip.level": "-1",
		"compression.lz4.level": "9", "compression.zstd.level": "3", "delete.retention.ms": "86400000",
		"file.delete.delay.ms": "60000", "flush.messages": "9223372036854775807",
		"flush.ms": "9223372036854775807", "index.interval.bytes": "4096",
		"local.retention.bytes": "-2", "local.retention.ms": "-2",
		"max.compaction.lag.ms": "9223372036854775807", "max.message.bytes": "1048588",
		"message.timestamp.after.max.ms": "3600000", "message.timestamp.before.max.ms": "9223372036854775807",
		"message.timestamp.type": "CreateTime", "min.cleanable.dirty.ratio": "0.5",
		"min.compaction.lag.ms": "0", "min.insync.replicas": "1", "preallocate": "false",
		"remote.storage.enable": "false", "retention.bytes": "-1", "retention.ms": "604800000",
		"segment.bytes": "1073741824", "segment.index.bytes": "10485760", "segment.jitter.ms": "0",
		"segment.ms": "604800000", "unclean.leader.election.enable": "false",
		"leader.replication.throttled.replicas": "", "follower.replication.throttled.replicas": "",
	}
	for name, v := range want {
		d, ok := Lookup(kmsg.ConfigResourceTypeTopic, name)
		if !ok {
			t.Errorf("%s not defined", name)
			continue
		}
		if got, _ := d.DefaultString(); got != v {
			t.Errorf("%s default %q, want %q", name, got, v)
		}
	}
}

func TestNormalize(t *testing.T) {
	topic := kmsg.ConfigResourceTypeTopic
	broker := kmsg.ConfigResourceTypeBroker
	for _, tc := range []struct {
		rt        kmsg.ConfigResourceType
		key, raw  string
		want, err string
	}{
		{topic, "preallocate", " TRUE ", "true", ""},
		{topic, "preallocate", "False", "false", ""},
		{topic, "preallocate", "yes", "", "Invalid value yes for configuration preallocate: Expected value to be either true or false"},
		{topic, "segment.bytes", " 1048576 ", "1048576", ""},
		{topic, "segment.bytes", "+2048", "2048", ""},
		{topic, "segment.bytes", "13", "", "Invalid value 13 for configuration segment.bytes: Value must be at least 14"},
		{topic, "segment.bytes", "2147483648", "", "Invalid value 2147483648 for configuration segment.bytes: Not a number of type INT"},
		{topic, "segment.bytes", "1_000", "", "Invalid value 1_000 for configuration segment.bytes: Not a number of type INT"},
		{topic, "retention.ms", "-1", "-1", ""},
		{topic, "retention.ms", "-2", "", "Invalid value -2 for configuration retention.ms: Value must be at least -1"},
		{topic, "retention.ms", "1.5", "", "Invalid value 1.5 for configuration retention.ms: Not a number of type LONG"},
		{topic, "retention.bytes", "-5", "-5", ""},
		{broker, "offsets.topic.replication.factor", "32768", "", "Invalid value 32768 for configuration offsets.topic.replication.factor: Not a number of type SHORT"},
		{broker, "offsets.topic.replication.factor", "0", "", "Invalid value 0 for configuration offsets.topic.replication.factor: Value must be at least 1"},
		{topic, "min.cleanable.dirty.ratio", "1", "1.0", ""},
		{topic, "min.cleanable.dirty.ratio", ".25", "0.25", ""},
		{topic, "min.cleanable.dirty.ratio", "5e-4", "5.0E-4", ""},
		{topic, "min.cleanable.dirty.ratio", "0.5d", "0.5", ""},
		{topic, "min.cleanable.dirty.ratio", "1.5", "", "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"},
		{topic, "min.cleanable.dirty.ratio", "half", "", "Invalid value half for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE"},
		{topic, "cleanup.policy", "compact , delete", "compact,delete", ""},
		{topic, "cleanup.policy", "Compact", "", "Invalid value Compact for configuration cleanup.policy: String must be one of: compact, delete"},
		{topic, "cleanup.policy", "compact,", "", "Invalid value compact, for configuration cleanup.policy: String must be one of: compact, delete"},
		{topic, "cleanup.policy", " ", "", "Invalid value  for configuration cleanup.policy: Value must not be empty"},
		{topic, "compression.type", "zstd", "zstd", ""},
		{topic, "compression.type", "ZSTD", "", "Invalid value ZSTD for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"},
		{topic, "compression.gzip.level", "-1", "-1", ""},
		{topic, "compression.gzip.level", "0", "", "Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1"},
		{topic, "compression.lz4.level", "18", "", "Invalid value 18 for configuration compression.lz4.level: Value must be no more than 17"},
		{topic, "compression.zstd.level", "-131072", "-131072", ""},
		{topic, "message.timestamp.type", "LogAppendTime", "LogAppendTime", ""},
		{topic, "message.timestamp.type", "logappendtime", "", "Invalid value logappendtime for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime"},
		{topic, "leader.replication.throttled.replicas", "*", "*", ""},
		{topic, "leader.replication.throttled.replicas", "0:1, 1:2", "0:1,1:2", ""},
		{topic, "leader.replication.throttled.replicas", "0-1", "", "Invalid value 0-1 for configuration leader.replication.throttled.replicas: leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."},
		{broker, "process.roles", "broker , controller", "broker,controller", ""},
		{broker, "process.roles", "worker", "", "Invalid value worker for configuration process.roles: String must be one of: broker, controller"},
		{broker, "controller.quorum.voters", "1@[::1]:9093,2@b:9094", "1@[::1]:9093,2@b:9094", ""},
		{broker, "controller.quorum.voters", "1@a", "", "Invalid value 1@a for configuration controller.quorum.voters: Failed to parse host name and port from entry 1@a for the configuration controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`."},
		{broker, "controller.quorum.voters", "x@a:1", "", "Invalid value x@a:1 for configuration controller.quorum.voters: Failed to parse node id x in entry x@a:1 for the configuration controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`."},
		{broker, "controller.quorum.voters", "a:1", "", "Invalid value a:1 for configuration controller.quorum.voters: Invalid configuration value for controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`."},
		{broker, "controller.quorum.voters", "1@a:1,1@b:2", "", "Invalid value 1@a:1,1@b:2 for configuration controller.quorum.voters: Duplicate voter id 1 in controller.quorum.voters."},
		{broker, "metrics.listener", "", "", ""},
		{broker, "metrics.listener", ":9644", ":9644", ""},
		{broker, "metrics.listener", "localhost", "", "Invalid value localhost for configuration metrics.listener: Expected host:port, or empty to disable"},
		{broker, "fetch.max.bytes", "1023", "", "Invalid value 1023 for configuration fetch.max.bytes: Value must be at least 1024"},
		{broker, "listeners", "  PLAINTEXT://:9092 ", "PLAINTEXT://:9092", ""},
	} {
		d, ok := Lookup(tc.rt, tc.key)
		if !ok {
			t.Fatalf("%s not defined", tc.key)
		}
		got, err := d.Normalize(tc.raw)
		if tc.err != "" {
			var ce *Error
			if err == nil || err.Error() != tc.err || !errors.As(err, &ce) || ce.Key != tc.key || !errors.Is(err, kerr.InvalidConfig) {
				t.Errorf("Normalize(%s=%q) error %v, want %q", tc.key, tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Normalize(%s=%q) = %q, %v; want %q", tc.key, tc.raw, got, err, tc.want)
		}
	}
}

func TestLookupAndKnownKeys(t *testing.T) {
	if len(topicByName) != len(topicDefs) || len(brokerByName) != len(brokerDefs) {
		t.Fatal("a key is defined twice")
	}
	if _, ok := Lookup(kmsg.ConfigResourceTypeTopic, "log.retention.ms"); ok {
		t.Error("log.retention.ms is a broker key, not a topic key")
	}
	if d, ok := Lookup(kmsg.ConfigResourceTypeBroker, "log.retention.ms"); !ok || d.Default != nil || !d.Dynamic {
		t.Errorf("log.retention.ms: %+v %v", d, ok)
	}
	if d, ok := Lookup(kmsg.ConfigResourceTypeBroker, "log.retention.hours"); !ok || d.Dynamic {
		t.Errorf("log.retention.hours must be read-only as in Kafka: %+v", d)
	}
	if _, ok := Lookup(kmsg.ConfigResourceType(32), "retention.ms"); ok {
		t.Error("group resources have no definitions")
	}
	for _, k := range []string{
		"num.io.threads", "socket.send.buffer.bytes", "log.cleaner.io.buffer.size",
		"background.threads", "zookeeper.connect", "ssl.keystore.password", "config.providers",
		"listener.name.internal.ssl.keystore.location", "listener.name.external.plain.sasl.jaas.config",
		"log.message.format.version",
	} {
		if !IsKnownUnsupportedBrokerKey(k) {
			t.Errorf("%s should be a known key Strait ignores", k)
		}
	}
	for _, k := range []string{"num.partitions", "num.network.threads", "frobnicate", "retention.ms", "listener.name.", "listener.name.x", "producer_byte_rate"} {
		if IsKnownUnsupportedBrokerKey(k) {
			t.Errorf("%s should not be a known ignored key", k)
		}
	}
	if typ, _ := unsupportedBrokerKeyType("listener.name.internal.ssl.key.password"); typ != Password {
		t.Errorf("listener override of a password: type %v", typ)
	}
	if typ, _ := unsupportedBrokerKeyType("listener.name.a.scram-sha-256.sasl.jaas.config"); typ != Password {
		t.Errorf("listener mechanism override of sasl.jaas.config: type %v", typ)
	}
	for name := range kafkaBrokerKeys {
		if _, ok := brokerByName[name]; ok {
			t.Errorf("%s is both implemented and listed as unsupported", name)
		}
		if strings.TrimSpace(name) != name || name == "" {
			t.Errorf("bad key %q", name)
		}
	}
}

func TestFormatJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0.0", 0.5: "0.5", 1: "1.0", 1e-3: "0.001", 9.99e-4: "9.99E-4", 1e7: "1.0E7",
		1234567.5: "1234567.5", -2.5e-10: "-2.5E-10",
	} {
		if got := formatJavaDouble(f); got != want {
			t.Errorf("formatJavaDouble(%v) = %q, want %q", f, got, want)
		}
	}
}
