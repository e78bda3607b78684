package configdef

import (
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Type is a config value's type, Kafka's ConfigDef.Type.
type Type int8

// The types, numbered as DescribeConfigs v3+ reports them (KIP-569).
const (
	Unknown  Type = 0
	Boolean  Type = 1
	String   Type = 2
	Int      Type = 3
	Short    Type = 4
	Long     Type = 5
	Double   Type = 6
	List     Type = 7
	Class    Type = 8
	Password Type = 9
)

var typeNames = [...]string{"unknown", "boolean", "string", "int", "short", "long", "double", "list", "class", "password"}

// String is the type's name as Kafka's documentation prints it.
func (t Type) String() string {
	if t < 0 || int(t) >= len(typeNames) {
		return "unknown"
	}
	return typeNames[t]
}

// ConfigType is the type as the DescribeConfigs response carries it.
func (t Type) ConfigType() kmsg.ConfigType { return kmsg.ConfigType(t) }

// Def defines one config key (Kafka's ConfigDef.ConfigKey).
type Def struct {
	Name string
	Type Type
	// Default is the value used when nothing sets the key; nil means the
	// key has no default (Kafka's null default: the key is unset).
	Default *string
	// Validate checks a value already parsed for Type and given in its
	// canonical form (see Normalize); the error says why, Normalize adds
	// the key and value. Nil accepts every value of the type.
	Validate func(canonical string) error
	// Doc is the documentation DescribeConfigs v3+ returns.
	Doc string
	// Sensitive values are never returned by DescribeConfigs (Kafka hides
	// every PASSWORD value).
	Sensitive bool
	// Dynamic keys may be changed at runtime with AlterConfigs /
	// IncrementalAlterConfigs; for broker keys the others are read-only
	// (Kafka's DynamicBrokerConfig.AllDynamicConfigs). Every topic key is
	// dynamic.
	Dynamic bool
	// BrokerSynonyms are, for a topic key, the broker keys that supply its
	// value when the topic does not override it, in precedence order
	// (ServerTopicConfigSynonyms): retention.ms ← log.retention.ms,
	// log.retention.minutes, log.retention.hours. Broker keys ending in
	// .minutes or .hours are converted to milliseconds.
	BrokerSynonyms []string
}

// DefaultString returns the default, or "" and false when there is none.
func (d *Def) DefaultString() (string, bool) {
	if d.Default == nil {
		return "", false
	}
	return *d.Default, true
}

// Normalize parses raw as Kafka's ConfigDef.parseType does (surrounding
// whitespace trimmed; booleans case-insensitive; lists split on commas with
// optional whitespace around them), runs the validator, and returns the
// value in canonical form (Kafka's ConfigDef.convertToString of the parsed
// value: "TRUE" → "true", " 5" → "5", "compact , delete" →
// "compact,delete"). The error is a *Error naming the key.
func (d *Def) Normalize(raw string) (string, error) {
	canon, reason := parseType(d.Type, raw)
	if reason != "" {
		return "", invalidValue(d.Name, raw, reason)
	}
	if d.Validate != nil {
		if err := d.Validate(canon); err != nil {
			return "", invalidValue(d.Name, canon, err.Error())
		}
	}
	return canon, nil
}

// Error is a config error carrying the Kafka error code a response should
// use (kerr.InvalidConfig, kerr.InvalidRequest; nil for errors in the
// static configuration that no request caused); errors.Is(err,
// kerr.InvalidConfig) works through Unwrap. The message is Kafka's where
// Kafka has one, and always names the key.
type Error struct {
	Code *kerr.Error
	Key  string // the offending key; "" when the error is about several
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the Kafka error code.
func (e *Error) Unwrap() error {
	if e.Code == nil {
		return nil
	}
	return e.Code
}

// invalidValue is Kafka's ConfigException(name, value, message) text.
func invalidValue(key, value, reason string) *Error {
	return &Error{
		Code: kerr.InvalidConfig,
		Key:  key,
		Msg:  fmt.Sprintf("Invalid value %s for configuration %s: %s", value, key, reason),
	}
}

var (
	topicByName  = index(topicDefs)
	brokerByName = index(brokerDefs)
)

func index(defs []Def) map[string]*Def {
	m := make(map[string]*Def, len(defs))
	for i := range defs {
		d := &defs[i]
		if d.Type == Password {
			d.Sensitive = true
		}
		m[d.Name] = d
	}
	return m
}

// TopicDefs returns every topic config definition, sorted by name (copies,
// as Lookup's).
func TopicDefs() []Def { return sortedCopy(topicDefs) }

// BrokerDefs returns the definition of every broker config Strait
// implements, sorted by name. Keys Kafka defines that Strait does not
// implement are not here: see IsKnownUnsupportedBrokerKey.
func BrokerDefs() []Def { return sortedCopy(brokerDefs) }

func sortedCopy(defs []Def) []Def {
	out := append([]Def(nil), defs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the definition of a topic (kmsg.ConfigResourceTypeTopic),
// broker (kmsg.ConfigResourceTypeBroker) or group
// (kmsg.ConfigResourceTypeGroupConfig) key. The returned Def is a copy;
// its BrokerSynonyms slice is shared and must not be modified.
func Lookup(rt kmsg.ConfigResourceType, name string) (Def, bool) {
	var d *Def
	switch rt {
	case kmsg.ConfigResourceTypeTopic:
		d = topicByName[name]
	case kmsg.ConfigResourceTypeBroker:
		d = brokerByName[name]
	case kmsg.ConfigResourceTypeGroupConfig:
		d = groupByName[name]
	}
	if d == nil {
		return Def{}, false
	}
	return *d, true
}

// IsKnownUnsupportedBrokerKey reports whether Kafka defines the broker key
// but Strait does not implement it (num.io.threads, log.cleaner.threads,
// ssl.*, listener.name.<listener>.<key>, ...). Such keys are accepted in
// server.properties so that an existing file works unchanged; the broker
// logs that it ignores them.
func IsKnownUnsupportedBrokerKey(name string) bool {
	_, ok := unsupportedBrokerKeyType(name)
	return ok
}

// unsupportedBrokerKeyType returns the Kafka type of a key Strait accepts
// but ignores. A listener override (listener.name.<l>.<key>, Kafka's
// DynamicBrokerConfig.ListenerConfigRegex) takes its base key's type, and
// the type is Unknown when the base key is not one Kafka defines — Kafka
// then treats the value as sensitive.
func unsupportedBrokerKeyType(name string) (Type, bool) {
	if t, ok := kafkaBrokerKeys[name]; ok {
		return t, true
	}
	if base, ok := listenerOverrideBase(name); ok {
		if d, ok := brokerByName[base]; ok {
			return d.Type, true
		}
		if t, ok := kafkaBrokerKeys[base]; ok {
			return t, true
		}
		return Unknown, true
	}
	return Unknown, false
}

// listenerOverrideBase splits listener.name.<listener>.<key>; Kafka also
// accepts listener.name.<l>.<mechanism>.<key> for SASL keys, whose base is
// the trailing key.
func listenerOverrideBase(name string) (string, bool) {
	const prefix = "listener.name."
	if !strings.HasPrefix(name, prefix) {
		return "", false
	}
	rest := name[len(prefix):]
	i := strings.IndexByte(rest, '.')
	if i <= 0 || i == len(rest)-1 {
		return "", false
	}
	base := rest[i+1:]
	for _, m := range listenerMechanismKeys {
		if strings.HasSuffix(base, m) {
			return m, true
		}
	}
	return base, true
}

// listenerMechanismKeys are the SASL keys Kafka accepts per listener and
// mechanism (DynamicBrokerConfig.ListenerMechanismConfigs).
var listenerMechanismKeys = []string{
	"sasl.jaas.config",
	"sasl.login.callback.handler.class",
	"sasl.login.class",
	"sasl.server.callback.handler.class",
	"connections.max.reauth.ms",
}

func str(s string) *string { return &s }
