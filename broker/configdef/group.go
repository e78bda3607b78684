package configdef

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	replshare "github.com/strait-io/strait/replication/share"
)

// The GROUP config resource (type 32): a consumer, share or streams
// group's own settings, set with IncrementalAlterConfigs or AlterConfigs
// (kafka-configs.sh --entity-type groups) and stored in the metadata log.
// The keys are Kafka 4.2's GroupConfig, with its types and defaults; a key
// that a broker config also sets takes the broker's value when the group
// does not set it (BrokerSynonyms: GroupCoordinatorConfig's
// extractGroupConfigMap). Strait serves no streams groups, but accepts and
// validates the streams.* keys as Kafka does, so that a tool setting them
// gets Kafka's answer.
var groupDefs = []Def{
	{
		Name: "consumer.heartbeat.interval.ms", Type: Int, Default: str("5000"),
		Validate: atLeast(1), BrokerSynonyms: []string{"group.consumer.heartbeat.interval.ms"},
		Doc: `How often the members of this consumer group are told to heartbeat.`,
	},
	{
		Name: "consumer.session.timeout.ms", Type: Int, Default: str("45000"),
		Validate: atLeast(1), BrokerSynonyms: []string{"group.consumer.session.timeout.ms"},
		Doc: `How long a member of this consumer group may go without a heartbeat before it is fenced.`,
	},
	{
		Name: "share.auto.offset.reset", Type: String, Default: str("latest"),
		Validate: replshare.ValidateAutoOffsetReset,
		Doc: `Where this share group starts reading a partition it has no state for: latest (records produced from ` +
			`now on), earliest, or by_duration:<ISO-8601 duration> (the first record at most that old).`,
	},
	{
		Name: "share.heartbeat.interval.ms", Type: Int, Default: str("5000"),
		Validate: atLeast(1), BrokerSynonyms: []string{"group.share.heartbeat.interval.ms"},
		Doc: `How often the members of this share group are told to heartbeat.`,
	},
	{
		Name: "share.isolation.level", Type: String, Default: str("read_uncommitted"),
		Validate: in("read_committed", "read_uncommitted"),
		Doc: `read_committed delivers only the committed records of transactions to this share group; ` +
			`read_uncommitted delivers every record.`,
	},
	{
		Name: "share.record.lock.duration.ms", Type: Int, Default: str("30000"),
		Validate: atLeast(1000), BrokerSynonyms: []string{"group.share.record.lock.duration.ms"},
		Doc: `How long a member of this share group holds the records it acquired before they may go to another.`,
	},
	{
		Name: "share.session.timeout.ms", Type: Int, Default: str("45000"),
		Validate: atLeast(1), BrokerSynonyms: []string{"group.share.session.timeout.ms"},
		Doc: `How long a member of this share group may go without a heartbeat before it is fenced.`,
	},
	{
		Name: "streams.heartbeat.interval.ms", Type: Int, Default: str("5000"),
		Validate: atLeast(1), BrokerSynonyms: []string{"group.streams.heartbeat.interval.ms"},
		Doc: `How often the members of this streams group are told to heartbeat (Strait serves no streams groups).`,
	},
	{
		Name: "streams.initial.rebalance.delay.ms", Type: Int, Default: str("3000"),
		Validate: atLeast(0), BrokerSynonyms: []string{"group.streams.initial.rebalance.delay.ms"},
		Doc: `How long this streams group's first assignment waits for more members (Strait serves no streams groups).`,
	},
	{
		Name: "streams.num.standby.replicas", Type: Int, Default: str("0"),
		Validate: atLeast(0), BrokerSynonyms: []string{"group.streams.num.standby.replicas"},
		Doc: `How many standby replicas each task of this streams group has (Strait serves no streams groups).`,
	},
	{
		Name: "streams.session.timeout.ms", Type: Int, Default: str("45000"),
		Validate: atLeast(1), BrokerSynonyms: []string{"group.streams.session.timeout.ms"},
		Doc: `How long a member of this streams group may go without a heartbeat before it is fenced (Strait serves no streams groups).`,
	},
}

var groupByName = index(groupDefs)

// GroupDefs returns the definition of every group config, sorted by name.
func GroupDefs() []Def { return sortedCopy(groupDefs) }

// groupBrokerKeyDefaults are Kafka's defaults of the broker keys that feed
// or bound group configs and that are not broker configs of Strait's own:
// the group.streams.* settings of GroupCoordinatorConfig (Strait serves no
// streams groups, so nothing sets them). The group.consumer.* and
// group.share.* keys are Strait's, and come from Sources, defaults
// included.
var groupBrokerKeyDefaults = map[string]string{
	"group.streams.session.timeout.ms":         "45000",
	"group.streams.min.session.timeout.ms":     "45000",
	"group.streams.max.session.timeout.ms":     "60000",
	"group.streams.heartbeat.interval.ms":      "5000",
	"group.streams.min.heartbeat.interval.ms":  "5000",
	"group.streams.max.heartbeat.interval.ms":  "15000",
	"group.streams.num.standby.replicas":       "0",
	"group.streams.max.standby.replicas":       "2",
	"group.streams.initial.rebalance.delay.ms": "3000",
}

// groupBrokerValue is a broker key's current value as group configs read
// it: the broker's layers, else Kafka's default.
func (s Sources) groupBrokerValue(key string) string {
	if v, ok := s.BrokerValue(key); ok {
		return strings.TrimSpace(v)
	}
	return groupBrokerKeyDefaults[key]
}

func (s Sources) groupBrokerInt(key string) int64 {
	n, _ := strconv.ParseInt(s.groupBrokerValue(key), 10, 64)
	return n
}

// groupDefaults are the values a group takes for the keys it does not set
// (GroupConfig.fromProps over extractGroupConfigMap): the broker's value
// for the keys a broker config feeds, Kafka's default for the others.
func (s Sources) groupDefaults() map[string]string {
	out := make(map[string]string, len(groupDefs))
	for i := range groupDefs {
		d := &groupDefs[i]
		if len(d.BrokerSynonyms) > 0 {
			out[d.Name] = s.groupBrokerValue(d.BrokerSynonyms[0])
		} else {
			out[d.Name] = *d.Default
		}
	}
	return out
}

// groupBound is one of GroupConfig.validateValues' range checks: a group
// key's value must lie within the broker keys' values (minKey "" has no
// lower bound).
type groupBound struct{ key, minKey, maxKey string }

// groupBounds are the checks in Kafka's order, which decides the message
// of a value that breaks several.
var groupBounds = []groupBound{
	{"consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"},
	{"consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"},
	{"share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"},
	{"share.session.timeout.ms", "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"},
	{"share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"},
	{"streams.heartbeat.interval.ms", "group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"},
	{"streams.session.timeout.ms", "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"},
	{"streams.num.standby.replicas", "", "group.streams.max.standby.replicas"},
}

// groupSessionOverHeartbeat pairs each protocol's session timeout with its
// heartbeat interval, which must be shorter.
var groupSessionOverHeartbeat = [][2]string{
	{"consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"},
	{"share.session.timeout.ms", "share.heartbeat.interval.ms"},
	{"streams.session.timeout.ms", "streams.heartbeat.interval.ms"},
}

// ValidateGroupConfigs checks a group's configs as an alter would leave
// them, as Kafka's controller does (ControllerConfigurationValidator and
// GroupConfig.validate): every key is a group config, every value parses
// and passes its check, and with the broker's values for the keys the
// group does not set, each value lies within the broker's
// group.consumer.*, group.share.* and group.streams.* bounds and each
// session timeout is above its heartbeat interval. The error is a *Error
// with kerr.InvalidConfig and Kafka's message, which names the key.
func ValidateGroupConfigs(src Sources, configs map[string]*string) error {
	keys, err := knownKeys(configs, "group", groupByName)
	if err != nil {
		return err
	}
	values := src.groupDefaults()
	for _, k := range keys {
		canon, err := groupByName[k].Normalize(*configs[k])
		if err != nil {
			return err
		}
		values[k] = canon
	}
	intOf := func(k string) int64 { n, _ := strconv.ParseInt(values[k], 10, 64); return n }
	fail := func(key, format string, args ...any) error {
		return &Error{Code: kerr.InvalidConfig, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	for _, b := range groupBounds {
		v := intOf(b.key)
		if b.minKey != "" && v < src.groupBrokerInt(b.minKey) {
			return fail(b.key, "%s must be greater than or equal to %s", b.key, b.minKey)
		}
		if v > src.groupBrokerInt(b.maxKey) {
			return fail(b.key, "%s must be less than or equal to %s", b.key, b.maxKey)
		}
	}
	for _, p := range groupSessionOverHeartbeat {
		if intOf(p[0]) <= intOf(p[1]) {
			return fail(p[0], "%s must be greater than %s", p[0], p[1])
		}
	}
	return nil
}

// EffectiveGroupConfigs returns a group's settings as its members get
// them: the group's own value of each key it sets, canonical and held
// within the broker's current bounds (a value stored before the bounds
// changed is capped, as KIP-1240's GroupConfig.evaluate caps it; a value
// that no longer parses is left out), and the broker's value or Kafka's
// default for the others (GroupConfigManager.groupConfig). set reports
// which keys the group sets.
func EffectiveGroupConfigs(src Sources, overrides map[string]string) (values map[string]string, set map[string]bool) {
	values = src.groupDefaults()
	set = map[string]bool{}
	for k, raw := range overrides {
		d, ok := groupByName[k]
		if !ok {
			continue
		}
		canon, err := d.Normalize(raw)
		if err != nil {
			continue
		}
		values[k], set[k] = canon, true
	}
	for _, b := range groupBounds {
		if !set[b.key] {
			continue
		}
		v, _ := strconv.ParseInt(values[b.key], 10, 64)
		if b.minKey != "" {
			v = max(v, src.groupBrokerInt(b.minKey))
		}
		v = min(v, src.groupBrokerInt(b.maxKey))
		values[b.key] = strconv.FormatInt(v, 10)
	}
	return values, set
}

// DescribeGroup describes a group's configs as Kafka 4.2's ConfigHelper
// does (createGroupConfigEntry): every group config, sorted by name, with
// the group's value and source GROUP_CONFIG (8) where the group sets it,
// else the value the group takes (the broker's, or Kafka's default) with
// source DEFAULT_CONFIG. The one synonym is the key itself with that value
// and source. Group configs are never read-only or sensitive. The caller
// rejects the "" group (INVALID_REQUEST); any other group may be
// described, with or without members or configs.
func DescribeGroup(overrides map[string]string, src Sources, opts DescribeOptions) []kmsg.DescribeConfigsResponseResourceConfig {
	defaults := src.groupDefaults()
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, d := range GroupDefs() {
		if !opts.wants(d.Name) {
			continue
		}
		value, source := defaults[d.Name], kmsg.ConfigSourceDefaultConfig
		if v, ok := overrides[d.Name]; ok {
			value, source = canonicalOr(&d, v), kmsg.ConfigSourceGroupConfig
		}
		syns := []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{synonym(d.Name, str(value), source, false)}
		out = append(out, entry(d.Name, str(value), d.Type, false, false, syns, d.Doc, opts))
	}
	return out
}
