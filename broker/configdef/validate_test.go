package configdef

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func sp(s string) *string { return &s }

func TestValidateTopicConfigs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		configs map[string]*string
		key     string // the key the error names; "" for success
		code    *kerr.Error
		msg     string
	}{
		{"none", nil, "", nil, ""},
		{"valid", map[string]*string{"retention.ms": sp("1000"), "cleanup.policy": sp("compact,delete"), "min.insync.replicas": sp("2")}, "", nil, ""},
		{"unknown", map[string]*string{"retention.ms": sp("1"), "retention.mss": sp("1")}, "retention.mss", kerr.InvalidConfig, "Unknown topic config name: retention.mss"},
		{"removed in 4.0", map[string]*string{"message.format.version": sp("3.0")}, "message.format.version", kerr.InvalidConfig, "Unknown topic config name: message.format.version"},
		{"removed in 4.0 too", map[string]*string{"message.timestamp.difference.max.ms": sp("1")}, "message.timestamp.difference.max.ms", kerr.InvalidConfig, "Unknown topic config name: message.timestamp.difference.max.ms"},
		{"broker key on a topic", map[string]*string{"log.retention.ms": sp("1")}, "log.retention.ms", kerr.InvalidConfig, "Unknown topic config name: log.retention.ms"},
		{"deprecated no-op kept", map[string]*string{"message.downconversion.enable": sp("false")}, "", nil, ""},
		{"nulls", map[string]*string{"segment.ms": nil, "retention.ms": nil, "flush.ms": sp("1")}, "retention.ms", kerr.InvalidConfig, "Null value not supported for topic configs: retention.ms,segment.ms"},
		{"bad value", map[string]*string{"segment.ms": sp("0")}, "segment.ms", kerr.InvalidConfig, "Invalid value 0 for configuration segment.ms: Value must be at least 1"},
		{"first bad key in order", map[string]*string{"segment.ms": sp("0"), "max.message.bytes": sp("x")}, "max.message.bytes", kerr.InvalidConfig, "Invalid value x for configuration max.message.bytes: Not a number of type INT"},
		{"tiered storage", map[string]*string{"remote.storage.enable": sp("true")}, "remote.storage.enable", kerr.InvalidConfig, "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."},
		{"compaction lags", map[string]*string{"min.compaction.lag.ms": sp("10"), "max.compaction.lag.ms": sp("5")}, "min.compaction.lag.ms", kerr.InvalidConfig, "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"},
		{"lag against default max", map[string]*string{"min.compaction.lag.ms": sp("9223372036854775807")}, "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateTopicConfigs(tc.configs)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Error() != tc.msg || ce.Key != tc.key || !errors.Is(err, tc.code) {
				t.Fatalf("error %#v, want key %q code %v %q", err, tc.key, tc.code, tc.msg)
			}
		})
	}
}

// TestValidateTopicConfigsWithBrokerDefaults: a key the topic does not set
// takes the broker's value in cross-key checks, as Kafka validates against
// extractLogConfigMap.
func TestValidateTopicConfigsWithBrokerDefaults(t *testing.T) {
	broker := Sources{Static: map[string]string{"log.cleaner.max.compaction.lag.ms": "100"}}.TopicDefaults()
	err := ValidateTopicConfigsWith(broker, map[string]*string{"min.compaction.lag.ms": sp("200")})
	if err == nil || err.Error() != "conflict topic config setting min.compaction.lag.ms (200) > max.compaction.lag.ms (100)" {
		t.Fatalf("got %v", err)
	}
	if err := ValidateTopicConfigsWith(broker, map[string]*string{"min.compaction.lag.ms": sp("200"), "max.compaction.lag.ms": sp("300")}); err != nil {
		t.Fatal(err)
	}
}

func TestValidateBrokerConfigs(t *testing.T) {
	const perBroker, clusterDefault = true, false
	for _, tc := range []struct {
		perBroker bool
		configs   map[string]*string
		code      *kerr.Error
		msg       string
	}{
		{perBroker, map[string]*string{"log.retention.ms": sp("1000"), "message.max.bytes": sp("2000000"), "compression.type": nil}, nil, ""},
		{perBroker, map[string]*string{"num.partitions": sp("3"), "log.retention.hours": sp("1"), "log.retention.ms": sp("1")}, kerr.InvalidRequest, "Cannot update these configs dynamically: log.retention.hours,num.partitions"},
		{perBroker, map[string]*string{"log.retention.bytes": sp("lots")}, kerr.InvalidConfig, "Invalid value lots for configuration log.retention.bytes: Not a number of type LONG"},
		{perBroker, map[string]*string{"frobnicate": sp("1")}, kerr.InvalidRequest, "Cannot update these configs dynamically: frobnicate"},
		// The log cleaner's keys are dynamic, as in Kafka.
		{clusterDefault, map[string]*string{"log.cleaner.threads": sp("2"), "log.cleaner.backoff.ms": sp("100"), "log.cleaner.io.max.bytes.per.second": sp("1e6"),
			"log.cleaner.dedupe.buffer.size": sp("1000000"), "log.cleaner.io.buffer.load.factor": sp("0.5"), "log.cleaner.min.cleanable.ratio": sp("0.1"),
			"log.cleaner.min.compaction.lag.ms": sp("10"), "log.cleaner.max.compaction.lag.ms": sp("100000")}, nil, ""},
		{perBroker, map[string]*string{"log.cleaner.threads": sp("0")}, kerr.InvalidConfig, "Invalid value 0 for configuration log.cleaner.threads: Log cleaner threads should be at least 1"},
		{perBroker, map[string]*string{"log.cleaner.enable": sp("false")}, kerr.InvalidRequest, "Cannot update these configs dynamically: log.cleaner.enable"},
		// Keys Kafka changes at runtime and Strait does not implement are
		// accepted (stored, described, ignored), their values checked by
		// Kafka's type.
		{perBroker, map[string]*string{"sasl.kerberos.min.time.before.relogin": sp("60000"), "num.io.threads": sp("16"),
			"background.threads": sp("4"), "leader.replication.throttled.rate": sp("1000000"), "log.cleaner.io.buffer.size": sp("1024"),
			"listener.name.internal.ssl.keystore.location": sp("/etc/ks.jks"), "listener.name.internal.ssl.keystore.password": sp("secret")}, nil, ""},
		{clusterDefault, map[string]*string{"num.io.threads": sp("16"), "follower.replication.throttled.rate": sp("5")}, nil, ""},
		{perBroker, map[string]*string{"num.io.threads": sp("many")}, kerr.InvalidConfig, "Invalid value many for configuration num.io.threads: Not a number of type INT"},
		{perBroker, map[string]*string{"sasl.kerberos.ticket.renew.jitter": sp("x")}, kerr.InvalidConfig, "Invalid value x for configuration sasl.kerberos.ticket.renew.jitter: Not a number of type DOUBLE"},
		// Listener keys only per broker; keystores only per listener.
		{clusterDefault, map[string]*string{"sasl.kerberos.min.time.before.relogin": sp("60000")}, kerr.InvalidRequest,
			"Cannot update these configs at default cluster level, broker id must be specified: sasl.kerberos.min.time.before.relogin"},
		{clusterDefault, map[string]*string{"listener.name.internal.ssl.keystore.location": sp("/k")}, kerr.InvalidRequest,
			"Cannot update these configs at default cluster level, broker id must be specified: listener.name.internal.ssl.keystore.location"},
		{clusterDefault, map[string]*string{"listener.name.internal.max.connection.creation.rate": sp("10")}, nil, ""},
		{perBroker, map[string]*string{"ssl.keystore.location": sp("/k")}, kerr.InvalidRequest,
			"These security configs can be dynamically updated only per-listener using the listener prefix: ssl.keystore.location"},
		// Dynamic in Kafka, read from server.properties only by Strait:
		// accepted (stored, described, ignored) per broker only, as Kafka.
		{perBroker, map[string]*string{"listeners": sp("PLAINTEXT://:9092"), "advertised.listeners": sp("PLAINTEXT://h:9092"),
			"listener.security.protocol.map": sp("PLAINTEXT:PLAINTEXT"), "max.connections": sp("10")}, nil, ""},
		{clusterDefault, map[string]*string{"advertised.listeners": sp("PLAINTEXT://h:9092"), "listeners": sp("PLAINTEXT://:9092"),
			"listener.security.protocol.map": sp("PLAINTEXT:PLAINTEXT")}, kerr.InvalidRequest,
			"Cannot update these configs at default cluster level, broker id must be specified: advertised.listeners,listener.security.protocol.map,listeners"},
		// Applied at the next start, accepted now.
		{clusterDefault, map[string]*string{"num.network.threads": sp("2")}, nil, ""},
		{perBroker, map[string]*string{"num.network.threads": sp("0")}, kerr.InvalidConfig,
			"Invalid value 0 for configuration num.network.threads: Value must be at least 1"},
		// The connection quotas change at runtime, per broker or for all.
		{clusterDefault, map[string]*string{"max.connections": sp("10"), "max.connections.per.ip": sp("5"),
			"max.connections.per.ip.overrides": sp("127.0.0.1:7,localhost:3"), "listener.name.internal.max.connections": sp("10")}, nil, ""},
		{perBroker, map[string]*string{"listener.name.internal.max.connections": sp("10"), "max.connections": nil}, nil, ""},
		{perBroker, map[string]*string{"max.connections.per.ip": sp("-1")}, kerr.InvalidConfig,
			"Invalid value -1 for configuration max.connections.per.ip: Value must be at least 0"},
		{perBroker, map[string]*string{"listener.name.internal.max.connections": sp("x")}, kerr.InvalidConfig,
			"Invalid value x for configuration listener.name.internal.max.connections: Not a number of type INT"},
	} {
		err := ValidateBrokerConfigs(tc.perBroker, tc.configs)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%v: %v", tc.configs, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.msg || !errors.Is(err, tc.code) {
			t.Errorf("got %v, want %v %q", err, tc.code, tc.msg)
		}
	}
}

// Every key Kafka changes at runtime is accepted: none is refused as
// read-only.
func TestEveryKafkaDynamicBrokerKey(t *testing.T) {
	for k := range kafkaDynamicBrokerKeys {
		if _, ok := kafkaBrokerKeys[k]; !ok {
			if _, implemented := brokerByName[k]; !implemented {
				t.Errorf("%s: neither a Kafka key Strait ignores nor one it implements", k)
			}
		}
	}
	for k := range staticOnlyBrokerKeys {
		if d, ok := brokerByName[k]; !ok || d.Dynamic {
			t.Errorf("%s: read from server.properties only but not a static key of Strait's", k)
		}
		if _, ok := dynamicBrokerDef(k); !ok {
			t.Errorf("%s: dynamic in Kafka but refused", k)
		}
	}
}
