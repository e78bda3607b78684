package configdef

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The connection quota keys (SocketServerConfigs): max.connections,
// max.connections.per.ip, max.connections.per.ip.overrides, and
// listener.name.<listener>.max.connections. They change at runtime, as
// Kafka's DynamicConnectionQuota changes them (broker/dynamic_connection_limits.go).

// validHostPattern is Kafka's Utils.VALID_HOST_CHARACTERS, which
// validHostPattern matches a whole override host against.
var validHostPattern = regexp.MustCompile(`^[0-9a-zA-Z\-%._:]*$`)

// ParsePerIPOverrides parses max.connections.per.ip.overrides as Kafka's
// KafkaConfig does (Csv.parseCsvMap, then each count an Int, each host
// checked by Utils.validHostPattern): "host:count" entries separated by
// commas, split at each entry's last colon so IPv6 addresses work
// ("::1:100"). Host names are resolved by the broker when it starts and
// when the value changes, as Kafka's ConnectionQuotas does. Kafka would take an empty host for the
// loopback address (InetAddress.getByName("")); Strait refuses it.
func ParsePerIPOverrides(v string) (map[string]int32, error) {
	out := map[string]int32{}
	var invalid []string
	for _, e := range SplitList(v) {
		i := strings.LastIndexByte(e, ':')
		if i < 0 {
			return nil, fmt.Errorf("Error parsing configuration property 'max.connections.per.ip.overrides': %q is not host:count", e)
		}
		host, count := strings.TrimSpace(e[:i]), strings.TrimSpace(e[i+1:])
		n, err := strconv.ParseInt(count, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("the count of %q must be an integer, not %q", host, count)
		}
		if n < 0 {
			return nil, fmt.Errorf("the count of %q must be at least 0, not %d", host, n)
		}
		if host == "" || !validHostPattern.MatchString(host) {
			invalid = append(invalid, host)
			continue
		}
		out[host] = int32(n)
	}
	if len(invalid) > 0 {
		return nil, fmt.Errorf("max.connections.per.ip.overrides contains invalid addresses : %s", strings.Join(invalid, ","))
	}
	return out, nil
}

func perIPOverridesValue(v string) error {
	_, err := ParsePerIPOverrides(v)
	return err
}

// listenerOverrideKeys are the broker keys Strait implements per
// listener, as listener.name.<listener>.<key> (Kafka's
// ListenerName.configPrefix).
var listenerOverrideKeys = map[string]bool{"max.connections": true}

// LookupListenerOverride returns the definition of a listener override
// Strait implements, listener.name.<listener>.<key>, and the listener
// name as written (Kafka writes it in lower case).
func LookupListenerOverride(name string) (Def, string, bool) {
	base, ok := listenerOverrideBase(name)
	if !ok || !listenerOverrideKeys[base] {
		return Def{}, "", false
	}
	d := *brokerByName[base]
	d.Name = name
	listener := strings.TrimSuffix(strings.TrimPrefix(name, "listener.name."), "."+base)
	return d, listener, true
}
