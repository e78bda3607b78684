package config

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/strait-io/strait/broker/configdef"
)

// SecurityProtocol is a listener's security protocol (Kafka's
// SecurityProtocol). Strait serves PLAINTEXT; the others parse so that a
// Kafka configuration loads, and the broker refuses to start a listener it
// cannot serve.
type SecurityProtocol string

// The security protocols Kafka defines.
const (
	Plaintext     SecurityProtocol = "PLAINTEXT"
	SSL           SecurityProtocol = "SSL"
	SASLPlaintext SecurityProtocol = "SASL_PLAINTEXT"
	SASLSSL       SecurityProtocol = "SASL_SSL"
)

func parseSecurityProtocol(s string) (SecurityProtocol, bool) {
	switch p := SecurityProtocol(strings.ToUpper(s)); p {
	case Plaintext, SSL, SASLPlaintext, SASLSSL:
		return p, true
	}
	return "", false
}

// Endpoint is one entry of listeners or advertised.listeners (Kafka's
// EndPoint).
type Endpoint struct {
	// Name is the listener name, upper-cased as Kafka normalises it.
	Name string
	// Host is empty for "bind every interface" (Kafka's null host).
	Host             string
	Port             int
	SecurityProtocol SecurityProtocol
}

// Addr is host:port for net.Listen and for clients.
func (e Endpoint) Addr() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// String is the listener as written in the config: NAME://host:port.
func (e Endpoint) String() string { return e.Name + "://" + e.Addr() }

// listenerRe is SocketServerConfigs.URI_PARSE_REGEXP.
var listenerRe = regexp.MustCompile(`^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$`)

// parseListeners parses a listeners-style value with the effective
// security protocol map (SocketServerConfigs.listenerListToEndPoints, and
// CoreUtils' checks: distinct names and, for listeners, distinct ports).
func parseListeners(key, value string, protocols map[string]SecurityProtocol, distinctPorts bool) ([]Endpoint, error) {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: Error creating broker listeners from '%s': %s", key, value, fmt.Sprintf(format, args...))
	}
	var out []Endpoint
	names := map[string]bool{}
	ports := map[int][]Endpoint{}
	for _, entry := range configdef.SplitList(value) {
		if entry == "" {
			continue // Csv.parseCsvList drops empty entries
		}
		m := listenerRe.FindStringSubmatch(entry)
		if m == nil {
			return nil, fail("Unable to parse %s to a broker endpoint", entry)
		}
		name := strings.ToUpper(m[1])
		if strings.TrimSpace(name) == "" {
			return nil, fail("The provided listener name is null or empty string")
		}
		port, err := strconv.Atoi(m[3])
		if err != nil || port < 0 || port > 65535 {
			return nil, fail("port %s of %s is not in 0..65535", m[3], entry)
		}
		proto, ok := protocols[name]
		if !ok {
			return nil, fail("No security protocol defined for listener %s", name)
		}
		if names[name] {
			return nil, fmt.Errorf("%s: Each listener must have a different name, listeners: %s", key, value)
		}
		names[name] = true
		ep := Endpoint{Name: name, Host: m[2], Port: port, SecurityProtocol: proto}
		out = append(out, ep)
		if port != 0 { // port 0 picks a free port: tests use it freely
			ports[port] = append(ports[port], ep)
		}
	}
	if distinctPorts {
		for port, eps := range ports {
			if len(eps) > 1 && !ipv4AndIPv6(eps) {
				return nil, fmt.Errorf("%s: Each listener must have a different port unless exactly one listener has an IPv4 address and the other IPv6 address, listeners: %s, port: %d", key, value, port)
			}
		}
	}
	return out, nil
}

// ipv4AndIPv6 is Kafka's exception to distinct ports: exactly two
// listeners, one on an IPv4 address and one on an IPv6 address.
func ipv4AndIPv6(eps []Endpoint) bool {
	if len(eps) != 2 {
		return false
	}
	a, b := net.ParseIP(eps[0].Host), net.ParseIP(eps[1].Host)
	if a == nil || b == nil {
		return false
	}
	return (a.To4() != nil) != (b.To4() != nil)
}

// parseProtocolMap parses listener.security.protocol.map (Csv.parseCsvMap:
// NAME:PROTOCOL entries, the last colon separating them).
func parseProtocolMap(value string) (map[string]SecurityProtocol, error) {
	out := map[string]SecurityProtocol{}
	for _, entry := range configdef.SplitList(value) {
		i := strings.LastIndexByte(entry, ':')
		if i < 0 {
			return nil, fmt.Errorf("Error parsing configuration property 'listener.security.protocol.map': entry %q is not NAME:PROTOCOL", entry)
		}
		name := strings.ToUpper(strings.TrimSpace(entry[:i]))
		if name == "" {
			return nil, fmt.Errorf("listener.security.protocol.map: The provided listener name is null or empty string")
		}
		proto, ok := parseSecurityProtocol(strings.TrimSpace(entry[i+1:]))
		if !ok {
			return nil, fmt.Errorf("Invalid security protocol `%s` defined in listener.security.protocol.map", strings.TrimSpace(entry[i+1:]))
		}
		out[name] = proto
	}
	return out, nil
}

// effectiveProtocolMap adds Kafka's KRaft default: when the map is not set
// explicitly and no listener or controller listener name is SSL or SASL,
// every controller listener is PLAINTEXT
// (KafkaConfig.effectiveListenerSecurityProtocolMap).
func effectiveProtocolMap(m map[string]SecurityProtocol, explicit bool, listeners string, controllerNames []string) map[string]SecurityProtocol {
	if explicit {
		return m
	}
	secure := func(name string) bool {
		switch SecurityProtocol(name) {
		case SSL, SASLPlaintext, SASLSSL:
			return true
		}
		return false
	}
	for _, n := range controllerNames {
		if secure(n) {
			return m
		}
	}
	for _, entry := range configdef.SplitList(listeners) {
		if name, _, ok := strings.Cut(entry, ":"); ok && secure(strings.ToUpper(name)) {
			return m
		}
	}
	for _, n := range controllerNames {
		if _, ok := m[n]; !ok {
			m[n] = Plaintext
		}
	}
	return m
}
