package configdef

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestValidateGroupConfigs: Kafka 4.2's GroupConfig keys, types and ranges,
// and the broker's bounds (GroupConfig.validateValues), with Kafka's
// messages naming the key.
func TestValidateGroupConfigs(t *testing.T) {
	// A broker that lets consumer groups heartbeat faster and hold records
	// for less, through server.properties.
	lowered := Sources{Static: map[string]string{
		"group.consumer.min.session.timeout.ms":    "1000",
		"group.consumer.min.heartbeat.interval.ms": "100",
		"group.share.min.record.lock.duration.ms":  "1000",
	}}
	for _, tc := range []struct {
		name    string
		src     Sources
		configs map[string]*string
		key     string // the key the error names; "" for success
		msg     string
	}{
		{"none", Sources{}, nil, "", ""},
		{"every key at its default", Sources{}, map[string]*string{
			"consumer.heartbeat.interval.ms": sp("5000"), "consumer.session.timeout.ms": sp("45000"),
			"share.auto.offset.reset": sp("latest"), "share.heartbeat.interval.ms": sp("5000"),
			"share.isolation.level": sp("read_uncommitted"), "share.record.lock.duration.ms": sp("30000"),
			"share.session.timeout.ms": sp("45000"), "streams.heartbeat.interval.ms": sp("5000"),
			"streams.initial.rebalance.delay.ms": sp("3000"), "streams.num.standby.replicas": sp("0"),
			"streams.session.timeout.ms": sp("45000"),
		}, "", ""},
		{"earliest, committed, in bounds", Sources{}, map[string]*string{
			"share.auto.offset.reset": sp("earliest"), "share.isolation.level": sp("read_committed"),
			"consumer.session.timeout.ms": sp(" 60000 "), "share.record.lock.duration.ms": sp("15000"),
			"streams.num.standby.replicas": sp("2"),
		}, "", ""},
		{"by_duration", Sources{}, map[string]*string{"share.auto.offset.reset": sp("by_duration:PT1H30M")}, "", ""},
		{"unknown key", Sources{}, map[string]*string{"share.auto.offset.reset": sp("latest"), "consumer.session.timeout": sp("1")},
			"consumer.session.timeout", "Unknown group config name: consumer.session.timeout"},
		{"a broker key is not a group key", Sources{}, map[string]*string{"group.consumer.session.timeout.ms": sp("50000")},
			"group.consumer.session.timeout.ms", "Unknown group config name: group.consumer.session.timeout.ms"},
		{"KIP-1240's keys are Kafka 4.3's", Sources{}, map[string]*string{"share.delivery.count.limit": sp("3")},
			"share.delivery.count.limit", "Unknown group config name: share.delivery.count.limit"},
		{"not a number", Sources{}, map[string]*string{"consumer.session.timeout.ms": sp("soon")},
			"consumer.session.timeout.ms", "Invalid value soon for configuration consumer.session.timeout.ms: Not a number of type INT"},
		{"below the key's own floor", Sources{}, map[string]*string{"share.record.lock.duration.ms": sp("999")},
			"share.record.lock.duration.ms", "Invalid value 999 for configuration share.record.lock.duration.ms: Value must be at least 1000"},
		{"upper-case reset", Sources{}, map[string]*string{"share.auto.offset.reset": sp("EARLIEST")},
			"share.auto.offset.reset", "Invalid value EARLIEST for configuration share.auto.offset.reset: Invalid value `EARLIEST` for configuration share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."},
		{"reset none", Sources{}, map[string]*string{"share.auto.offset.reset": sp("none")}, "share.auto.offset.reset", "for configuration share.auto.offset.reset. The value must be either"},
		{"negative duration", Sources{}, map[string]*string{"share.auto.offset.reset": sp("by_duration:-PT1H")}, "share.auto.offset.reset", "The value must be either"},
		{"empty duration", Sources{}, map[string]*string{"share.auto.offset.reset": sp("by_duration:")}, "share.auto.offset.reset", "The value must be either"},
		{"isolation level", Sources{}, map[string]*string{"share.isolation.level": sp("READ_COMMITTED")},
			"share.isolation.level", "Invalid value READ_COMMITTED for configuration share.isolation.level: String must be one of: read_committed, read_uncommitted"},
		{"session below the broker's min", Sources{}, map[string]*string{"consumer.session.timeout.ms": sp("44999")},
			"consumer.session.timeout.ms", "consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"},
		{"session above the broker's max", Sources{}, map[string]*string{"consumer.session.timeout.ms": sp("60001")},
			"consumer.session.timeout.ms", "consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms"},
		{"heartbeat checked first", Sources{}, map[string]*string{"consumer.session.timeout.ms": sp("1"), "consumer.heartbeat.interval.ms": sp("1")},
			"consumer.heartbeat.interval.ms", "consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms"},
		{"share heartbeat above max", Sources{}, map[string]*string{"share.heartbeat.interval.ms": sp("15001")},
			"share.heartbeat.interval.ms", "share.heartbeat.interval.ms must be less than or equal to group.share.max.heartbeat.interval.ms"},
		{"share session below min", Sources{}, map[string]*string{"share.session.timeout.ms": sp("30000")},
			"share.session.timeout.ms", "share.session.timeout.ms must be greater than or equal to group.share.min.session.timeout.ms"},
		{"record lock below min", Sources{}, map[string]*string{"share.record.lock.duration.ms": sp("14999")},
			"share.record.lock.duration.ms", "share.record.lock.duration.ms must be greater than or equal to group.share.min.record.lock.duration.ms"},
		{"record lock above max", Sources{}, map[string]*string{"share.record.lock.duration.ms": sp("60001")},
			"share.record.lock.duration.ms", "share.record.lock.duration.ms must be less than or equal to group.share.max.record.lock.duration.ms"},
		{"standby replicas above max", Sources{}, map[string]*string{"streams.num.standby.replicas": sp("3")},
			"streams.num.standby.replicas", "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"},
		{"streams session below min", Sources{}, map[string]*string{"streams.session.timeout.ms": sp("1000")},
			"streams.session.timeout.ms", "streams.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms"},
		// The broker's lowered bounds let a group go lower, and the
		// session must then stay above the heartbeat interval, which the
		// group does not set: the broker's 5000 counts.
		{"lowered bounds", lowered, map[string]*string{"consumer.session.timeout.ms": sp("6000"), "share.record.lock.duration.ms": sp("1000")}, "", ""},
		{"session not above the broker's heartbeat", lowered, map[string]*string{"consumer.session.timeout.ms": sp("5000")},
			"consumer.session.timeout.ms", "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms"},
		{"session not above the group's heartbeat", lowered, map[string]*string{"consumer.session.timeout.ms": sp("2000"), "consumer.heartbeat.interval.ms": sp("2000")},
			"consumer.session.timeout.ms", "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms"},
		{"nulls", Sources{}, map[string]*string{"share.isolation.level": nil, "consumer.session.timeout.ms": nil},
			"consumer.session.timeout.ms", "Null value not supported for group configs: consumer.session.timeout.ms,share.isolation.level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateGroupConfigs(tc.src, tc.configs)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) || !strings.Contains(ce.Error(), tc.msg) || ce.Key != tc.key || !errors.Is(err, kerr.InvalidConfig) {
				t.Fatalf("error %#v, want key %q INVALID_CONFIG %q", err, tc.key, tc.msg)
			}
		})
	}
}

// TestDescribeGroup: every group config with the group's value (source
// GROUP_CONFIG) or the value it takes (DEFAULT_CONFIG): the broker's for
// keys a broker config feeds, as Kafka 4.2's ConfigHelper answers.
func TestDescribeGroup(t *testing.T) {
	src := Sources{Static: map[string]string{"group.consumer.heartbeat.interval.ms": "6000", "group.share.record.lock.duration.ms": "20000"}}
	overrides := map[string]string{"share.auto.offset.reset": "earliest", "consumer.session.timeout.ms": " 50000"}
	entries := DescribeGroup(overrides, src, DescribeOptions{IncludeSynonyms: true, IncludeDocumentation: true})
	var got []string
	for _, e := range entries {
		if e.Documentation == nil || *e.Documentation == "" {
			t.Errorf("%s has no documentation", e.Name)
		}
		got = append(got, describeOne(e))
	}
	want := []string{
		"consumer.heartbeat.interval.ms=6000 source=DEFAULT_CONFIG ro=false sensitive=false type=INT syn=[consumer.heartbeat.interval.ms=6000(DEFAULT_CONFIG)]",
		"consumer.session.timeout.ms=50000 source=GROUP_CONFIG ro=false sensitive=false type=INT syn=[consumer.session.timeout.ms=50000(GROUP_CONFIG)]",
		"share.auto.offset.reset=earliest source=GROUP_CONFIG ro=false sensitive=false type=STRING syn=[share.auto.offset.reset=earliest(GROUP_CONFIG)]",
		"share.heartbeat.interval.ms=5000 source=DEFAULT_CONFIG ro=false sensitive=false type=INT syn=[share.heartbeat.interval.ms=5000(DEFAULT_CONFIG)]",
		"share.isolation.level=read_uncommitted source=DEFAULT_CONFIG ro=false sensitive=false type=STRING syn=[share.isolation.level=read_uncommitted(DEFAULT_CONFIG)]",
		"share.record.lock.duration.ms=20000 source=DEFAULT_CONFIG ro=false sensitive=false type=INT syn=[share.record.lock.duration.ms=20000(DEFAULT_CONFIG)]",
		"share.session.timeout.ms=45000 source=DEFAULT_CONFIG ro=false sensitive=false type=INT syn=[share.session.timeout.ms=45000(DEFAULT_CONFIG)]",
		"streams.heartbeat.interval.ms=5000 source=DEFAULT_CONFIG ro=false sensitive=false type=INT syn=[streams.heartbeat.interval.ms=5000(DEFAULT_CONFIG)]",
		"streams.initial.rebalance.delay.ms=3000 source=DEFAULT_CONFIG ro=false sensitive=false type=INT syn=[streams.initial.rebalance.delay.ms=3000(DEFAULT_CONFIG)]",
		"streams.num.standby.replicas=0 source=DEFAULT_CONFIG ro=false sensitive=false type=INT syn=[streams.num.standby.replicas=0(DEFAULT_CONFIG)]",
		"streams.session.timeout.ms=45000 source=DEFAULT_CONFIG ro=false sensitive=false type=INT syn=[streams.session.timeout.ms=45000(DEFAULT_CONFIG)]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// ConfigNames picks keys; unknown names are left out; without
	// IncludeSynonyms there are none.
	entries = DescribeGroup(nil, Sources{}, DescribeOptions{Names: []string{"share.auto.offset.reset", "nope"}})
	if len(entries) != 1 || describeOne(entries[0]) != "share.auto.offset.reset=latest source=DEFAULT_CONFIG ro=false sensitive=false type=STRING syn=[]" {
		t.Fatalf("named: %v", entries)
	}
}

// TestEffectiveGroupConfigs: a group's own values over the broker's, a
// stored value outside the broker's current bounds capped to them
// (KIP-1240), an unparsable stored value ignored.
func TestEffectiveGroupConfigs(t *testing.T) {
	src := Sources{Static: map[string]string{"group.share.record.lock.duration.ms": "20000"}}
	values, set := EffectiveGroupConfigs(src, map[string]string{
		"consumer.session.timeout.ms":    "1000",  // below the broker's min, 45000
		"consumer.heartbeat.interval.ms": "99999", // above the broker's max, 15000
		"share.auto.offset.reset":        " earliest ",
		"share.session.timeout.ms":       "junk",
		"not.a.group.config":             "1",
	})
	for k, want := range map[string]string{
		"consumer.session.timeout.ms":    "45000",
		"consumer.heartbeat.interval.ms": "15000",
		"share.auto.offset.reset":        "earliest",
		"share.session.timeout.ms":       "45000",
		"share.record.lock.duration.ms":  "20000",
		"share.isolation.level":          "read_uncommitted",
	} {
		if values[k] != want {
			t.Errorf("%s = %q, want %q", k, values[k], want)
		}
	}
	if !set["consumer.session.timeout.ms"] || !set["share.auto.offset.reset"] || set["share.session.timeout.ms"] || set["share.record.lock.duration.ms"] || len(set) != 3 {
		t.Errorf("set = %v", set)
	}
}
