package configdef

import (
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Sources are the layers a broker config value comes from, highest
// precedence first (Kafka's DynamicBrokerConfig):
//
//  1. DynamicBroker: set at runtime for this broker (AlterConfigs on the
//     broker resource named by its node id), DYNAMIC_BROKER_CONFIG;
//  2. DynamicDefault: set at runtime for every broker (the broker resource
//     named ""), DYNAMIC_DEFAULT_BROKER_CONFIG;
//  3. Static: server.properties and --set, as written, STATIC_BROKER_CONFIG;
//  4. the definitions' defaults, DEFAULT_CONFIG.
//
// The maps are read, never written; nil maps are empty layers.
type Sources struct {
	NodeID         int32
	Static         map[string]string
	DynamicDefault map[string]string
	DynamicBroker  map[string]string
}

// layer is one source of broker values.
type layer struct {
	values map[string]string
	source kmsg.ConfigSource
}

// layers returns the sources in precedence order, the defaults last.
func (s Sources) layers() []layer {
	return []layer{
		{s.DynamicBroker, kmsg.ConfigSourceDynamicBrokerConfig},
		{s.DynamicDefault, kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		{s.Static, kmsg.ConfigSourceStaticBrokerConfig},
		{brokerDefaults, kmsg.ConfigSourceDefaultConfig},
	}
}

// brokerDefaults are the defaults of the broker keys that have one (Kafka's
// staticDefaultConfigs: keys with a null default are absent).
var brokerDefaults = func() map[string]string {
	m := map[string]string{}
	for _, d := range brokerDefs {
		if d.Default != nil {
			m[d.Name] = *d.Default
		}
	}
	return m
}()

// lookup returns a broker key's value from the highest layer that sets it.
func (s Sources) lookup(name string) (string, bool) {
	for _, l := range s.layers() {
		if v, ok := l.values[name]; ok {
			return v, true
		}
	}
	return "", false
}

// BrokerValue returns a broker key's current value in canonical form and
// whether it has one (a key with no default that nothing sets has none).
// Values in Static were validated when the config was loaded and dynamic
// ones when they were altered; a value that no longer parses is returned
// as given.
func (s Sources) BrokerValue(name string) (string, bool) {
	v, ok := s.lookup(name)
	if !ok {
		return "", false
	}
	if d, isDef := brokerByName[name]; isDef {
		if c, err := d.Normalize(v); err == nil {
			return c, true
		}
	}
	return v, true
}

// TopicDefaults returns, for every topic config with broker synonyms, the
// value a topic gets when it does not override it (Kafka's
// KafkaConfig.extractLogConfigMap): the first synonym any layer sets,
// converted to milliseconds for the .hours and .minutes keys, else the
// topic default. A negative retention becomes -1 as in
// KafkaConfig.logRetentionTimeMillis. Topic keys without synonyms (the
// throttled-replica lists, remote.*) are absent: they come from the topic
// definition's default.
func (s Sources) TopicDefaults() map[string]string {
	out := make(map[string]string, len(topicDefs))
	for i := range topicDefs {
		d := &topicDefs[i]
		if len(d.BrokerSynonyms) == 0 {
			continue
		}
		if v, ok := s.synonymValue(d); ok {
			out[d.Name] = v
		} else if d.Default != nil {
			out[d.Name] = *d.Default
		}
	}
	return out
}

// synonymValue resolves a topic key's broker synonyms. Precedence is by
// synonym first and layer second, as Kafka merges every layer into one
// property map before reading log.retention.ms, then .minutes, then .hours:
// a static log.retention.ms beats a dynamic log.retention.hours.
func (s Sources) synonymValue(d *Def) (string, bool) {
	for _, syn := range d.BrokerSynonyms {
		if _, set := s.lookupSet(syn); set {
			v, _ := s.BrokerValue(syn)
			return toTopicUnit(d.Name, syn, v), true
		}
	}
	// No layer sets any synonym: the first synonym's default, if any, else
	// the next synonym's (log.retention.ms has none, log.retention.hours
	// has 168).
	for _, syn := range d.BrokerSynonyms {
		if v, ok := brokerDefaults[syn]; ok {
			return toTopicUnit(d.Name, syn, canonicalBroker(syn, v)), true
		}
	}
	return "", false
}

// lookupSet is lookup without the defaults layer.
func (s Sources) lookupSet(name string) (string, bool) {
	for _, l := range s.layers()[:3] {
		if v, ok := l.values[name]; ok {
			return v, true
		}
	}
	return "", false
}

func canonicalBroker(name, v string) string {
	if d, ok := brokerByName[name]; ok {
		if c, err := d.Normalize(v); err == nil {
			return c
		}
	}
	return v
}

// toTopicUnit converts a broker synonym's value to the topic key's unit.
func toTopicUnit(topicKey, synonym, v string) string {
	var mult int64
	switch {
	case strings.HasSuffix(synonym, ".hours"):
		mult = 3600 * 1000
	case strings.HasSuffix(synonym, ".minutes"):
		mult = 60 * 1000
	}
	if mult != 0 {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			v = strconv.FormatInt(n*mult, 10)
		}
	}
	if topicKey == "retention.ms" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n < 0 {
			v = "-1"
		}
	}
	return v
}
