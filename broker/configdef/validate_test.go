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
	for _, tc := range []struct {
		configs map[string]*string
		code    *kerr.Error
		msg     string
	}{
		{map[string]*string{"log.retention.ms": sp("1000"), "message.max.bytes": sp("2000000"), "compression.type": nil}, nil, ""},
		{map[string]*string{"num.partitions": sp("3"), "log.retention.hours": sp("1"), "log.retention.ms": sp("1")}, kerr.InvalidRequest, "Cannot update these configs dynamically: log.retention.hours,num.partitions"},
		{map[string]*string{"num.io.threads": sp("3")}, kerr.InvalidRequest, "Cannot update these configs dynamically: num.io.threads"},
		{map[string]*string{"log.retention.bytes": sp("lots")}, kerr.InvalidConfig, "Invalid value lots for configuration log.retention.bytes: Not a number of type LONG"},
	} {
		err := ValidateBrokerConfigs(tc.configs)
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
