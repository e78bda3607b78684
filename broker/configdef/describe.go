package configdef

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeOptions are a DescribeConfigs resource's request fields. The
// caller gates them by version: IncludeSynonyms exists from v1,
// IncludeDocumentation from v3 (earlier versions: false).
type DescribeOptions struct {
	// Names are the resource's ConfigNames; nil or empty describes every
	// config. Names that are not configs of the resource are left out, as
	// Kafka does.
	Names                []string
	IncludeSynonyms      bool
	IncludeDocumentation bool
}

func (o DescribeOptions) wants(name string) bool {
	if len(o.Names) == 0 {
		return true
	}
	for _, n := range o.Names {
		if n == name {
			return true
		}
	}
	return false
}

// unsupportedDoc documents keys Kafka defines and Strait accepts but
// ignores.
const unsupportedDoc = "Accepted for compatibility with Apache Kafka; Strait does not implement it."

// DescribeTopic describes a topic's configs as Kafka's ConfigHelper does
// (createTopicConfigEntry): every topic config, sorted by name, with its
// effective value — the topic's override, else the broker's value for it
// (Sources.TopicDefaults), else the topic default. Its synonyms are the
// override (DYNAMIC_TOPIC_CONFIG) followed by the first broker synonym's
// chain: each of its broker keys as set per broker, then as set for every
// broker, then in the static config, then as defaults, with Kafka's rule
// that the chain starts at the first synonym (so a retention.ms inherited
// from log.retention.hours lists no synonyms and reports DEFAULT_CONFIG,
// exactly as Kafka does). The source is the first synonym's. Topic configs
// are never read-only. The caller checks that the topic exists
// (UNKNOWN_TOPIC_OR_PARTITION) and passes its overrides as stored.
func DescribeTopic(topicOverrides map[string]string, src Sources, opts DescribeOptions) []kmsg.DescribeConfigsResponseResourceConfig {
	defaults := src.TopicDefaults()
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, d := range TopicDefs() {
		if !opts.wants(d.Name) {
			continue
		}
		var value *string
		override, overridden := topicOverrides[d.Name]
		switch {
		case overridden:
			value = str(canonicalOr(&d, override))
		case hasKey(defaults, d.Name):
			value = str(defaults[d.Name])
		case d.Default != nil:
			value = str(*d.Default)
		}
		var syns []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
		if overridden {
			syns = append(syns, synonym(d.Name, value, kmsg.ConfigSourceDynamicTopicConfig, d.Sensitive))
		}
		if len(d.BrokerSynonyms) > 0 {
			syns = append(syns, src.synonyms(d.BrokerSynonyms[0], d.BrokerSynonyms, d.Sensitive, false)...)
		}
		out = append(out, entry(d.Name, value, d.Type, d.Sensitive, false, syns, d.Doc, opts))
	}
	return out
}

// DescribeBroker describes a broker resource as Kafka's ConfigHelper does
// (createBrokerConfigEntry). resourceName is the request's: this broker's
// node id describes every broker config Strait implements plus every other
// key some layer sets (Kafka keys Strait ignores), with the current value
// and its synonyms through all layers; "" describes only the cluster-wide
// dynamic configs, with synonyms from that layer alone. Any other name is a
// *Error with kerr.InvalidRequest and Kafka's message. Password values are
// never returned, nor the values of keys whose type is unknown.
func DescribeBroker(resourceName string, src Sources, opts DescribeOptions) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	if resourceName == "" {
		return src.describeBroker(sortedKeys(src.DynamicDefault), false, opts), nil
	}
	id, err := strconv.ParseInt(resourceName, 10, 32)
	if err != nil {
		return nil, &Error{Code: kerr.InvalidRequest,
			Msg: "Broker id must be an integer, but it is: " + resourceName}
	}
	if int32(id) != src.NodeID {
		return nil, &Error{Code: kerr.InvalidRequest,
			Msg: fmt.Sprintf("Unexpected broker id, expected %d or empty string, but received %s", src.NodeID, resourceName)}
	}
	names := map[string]string{}
	for _, d := range brokerDefs {
		names[d.Name] = ""
	}
	for _, l := range []map[string]string{src.Static, src.DynamicDefault, src.DynamicBroker} {
		for k := range l {
			names[k] = ""
		}
	}
	return src.describeBroker(sortedKeys(names), true, opts), nil
}

// describeBroker builds the entries of keys (sorted).
func (s Sources) describeBroker(keys []string, perBroker bool, opts DescribeOptions) []kmsg.DescribeConfigsResponseResourceConfig {
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, name := range keys {
		if !opts.wants(name) {
			continue
		}
		var (
			typ      Type
			dynamic  bool
			doc      = unsupportedDoc
			value    *string
			def, ok  = brokerByName[name]
			nameSyns = brokerSynonymsOf(name)
		)
		if ok {
			typ, doc = def.Type, def.Doc
			_, dynamic = dynamicBrokerDef(name)
		} else if d, _, ok := LookupListenerOverride(name); ok {
			typ, dynamic, doc = d.Type, d.Dynamic, d.Doc
		} else {
			typ, _ = unsupportedBrokerKeyType(name)
			// Kafka's ConfigHelper: read-only unless in AllDynamicConfigs.
			dynamic = kafkaDynamicBrokerKeys[name]
		}
		// Kafka's KafkaConfig.maybeSensitive: a type it cannot determine
		// may hide a secret.
		sensitive := typ == Password || typ == Unknown
		if perBroker {
			if v, set := s.BrokerValue(name); set {
				value = str(v)
			}
		} else if v, set := s.DynamicDefault[name]; set {
			value = str(v)
		}
		syns := s.synonyms(name, nameSyns, sensitive, !perBroker)
		out = append(out, entry(name, value, typ, sensitive, !dynamic, syns, doc, opts))
	}
	return out
}

// brokerSynonymsOf is Kafka's DynamicBrokerConfig.brokerConfigSynonyms:
// the keys that set the same value as name, in precedence order.
func brokerSynonymsOf(name string) []string {
	switch name {
	case "log.roll.ms", "log.roll.hours":
		return []string{"log.roll.ms", "log.roll.hours"}
	case "log.roll.jitter.ms", "log.roll.jitter.hours":
		return []string{"log.roll.jitter.ms", "log.roll.jitter.hours"}
	case "log.flush.interval.ms":
		return []string{"log.flush.interval.ms", "log.flush.scheduler.interval.ms"}
	case "log.retention.ms", "log.retention.minutes", "log.retention.hours":
		return []string{"log.retention.ms", "log.retention.minutes", "log.retention.hours"}
	}
	if base, ok := listenerOverrideBase(name); ok {
		return []string{name, base}
	}
	return []string{name}
}

// synonyms is Kafka's ConfigHelper.configSynonyms: for each layer, highest
// first, each of keys the layer sets; then the entries before the first one
// named name are dropped (a describe of log.retention.hours does not list
// log.retention.ms). dynamicDefaultOnly keeps only the cluster-wide dynamic
// layer, for the "" broker resource.
func (s Sources) synonyms(name string, keys []string, sensitive, dynamicDefaultOnly bool) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	var all []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	for _, l := range s.layers() {
		for _, k := range keys {
			if v, ok := l.values[k]; ok {
				all = append(all, synonym(k, str(v), l.source, sensitive))
			}
		}
	}
	for len(all) > 0 && all[0].Name != name {
		all = all[1:]
	}
	if dynamicDefaultOnly {
		kept := all[:0]
		for _, syn := range all {
			if syn.Source == kmsg.ConfigSourceDynamicDefaultBrokerConfig {
				kept = append(kept, syn)
			}
		}
		all = kept
	}
	return all
}

func synonym(name string, value *string, source kmsg.ConfigSource, sensitive bool) kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
	s.Name = name
	if !sensitive {
		s.Value = value
	}
	s.Source = source
	return s
}

func entry(name string, value *string, typ Type, sensitive, readOnly bool,
	syns []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym, doc string, opts DescribeOptions,
) kmsg.DescribeConfigsResponseResourceConfig {
	e := kmsg.NewDescribeConfigsResponseResourceConfig()
	e.Name = name
	if !sensitive {
		e.Value = value
	}
	e.Source = kmsg.ConfigSourceDefaultConfig
	if len(syns) > 0 {
		e.Source = syns[0].Source
	}
	e.IsDefault = e.Source == kmsg.ConfigSourceDefaultConfig // v0's field
	e.ReadOnly = readOnly
	e.IsSensitive = sensitive
	if opts.IncludeSynonyms {
		e.ConfigSynonyms = syns
	}
	e.ConfigType = typ.ConfigType()
	if opts.IncludeDocumentation {
		e.Documentation = str(doc)
	}
	return e
}

func canonicalOr(d *Def, v string) string {
	if c, err := d.Normalize(v); err == nil {
		return c
	}
	return v
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
