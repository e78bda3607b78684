package config

import (
	"slices"
	"strings"

	"github.com/strait-io/strait/broker/configdef"
)

// ListenerTLSFrom reads the TLS settings of the SSL listener name from
// src, the static configuration with the dynamic broker configs over it,
// as Kafka's DynamicListenerConfig rebuilds a listener's SslFactory when
// its listener.name.<l>.ssl.* keys change at runtime: a listener override
// in any layer wins over the plain key (which only the static layer may
// set: Kafka takes keystore and truststore keys at runtime only with the
// listener prefix). The error names the key that did not load and why.
func ListenerTLSFrom(src configdef.Sources, name string) (*TLS, error) {
	prefix := "listener.name." + strings.ToLower(name) + "."
	return buildListenerTLS(func(key string) (string, string, bool) {
		if v, ok := src.BrokerValue(prefix + key); ok {
			return v, prefix + key, true
		}
		if v, ok := src.BrokerValue(key); ok {
			return v, key, true
		}
		return sslDefaults[key], key, false
	})
}

// ListenerSSLKeys are the keys of src's dynamic layers that configure the
// TLS of listener name (listener.name.<l>.ssl.*), as key=value lines,
// sorted: what a runtime change of its certificates changes.
func ListenerSSLKeys(src configdef.Sources, name string) string {
	prefix := "listener.name." + strings.ToLower(name) + ".ssl."
	var lines []string
	for i, layer := range []map[string]string{src.DynamicDefault, src.DynamicBroker} {
		for k, v := range layer {
			if strings.HasPrefix(k, prefix) {
				lines = append(lines, string(rune('0'+i))+k+"="+v)
			}
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// listenerTLSKeys are the ssl keys buildListenerTLS reads.
var listenerTLSKeys = []string{
	"ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
	"ssl.keystore.key", "ssl.keystore.certificate.chain",
	"ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.certificates",
	"ssl.enabled.protocols", "ssl.protocol", "ssl.cipher.suites", "ssl.client.auth", "ssl.endpoint.identification.algorithm",
}

// IsListenerTLSKey reports whether key is listener.name.<l>.<an ssl key
// Strait reads> for one of listeners: one a runtime change applies
// (ListenerTLSFrom), not ignored.
func IsListenerTLSKey(key string, listeners []string) bool {
	for _, l := range listeners {
		if rest, ok := strings.CutPrefix(key, "listener.name."+strings.ToLower(l)+"."); ok && slices.Contains(listenerTLSKeys, rest) {
			return true
		}
	}
	return false
}
