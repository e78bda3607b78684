package config

import (
	"fmt"

	"github.com/strait-io/strait/broker/configdef"
)

// listenerKeys are the keys of Kafka's DynamicListenerConfig that name the
// listeners; Strait stores them at runtime but serves the listeners of
// server.properties (configdef.StaticOnlyReason).
var listenerKeys = []string{"listeners", "advertised.listeners", "listener.security.protocol.map"}

// ValidateListenerChange checks an alteration of this broker's listener
// keys (now: the configuration as it stands; proposed: with the
// alteration) as Kafka does before it reconfigures its listeners: the
// new configuration must hold together as KafkaConfig's checks want it
// (every listener named in listener.security.protocol.map, distinct
// names and ports, advertised listeners among the listeners, the
// inter-broker listener advertised, the controller listeners kept), and
// DynamicListenerConfig.validateReconfiguration's own check must pass: an
// existing listener keeps its security protocol. It returns the first
// changed key of listenerKeys and the reason, or "" and nil when the
// listener keys did not change or the change is sound. Strait then
// ignores the values; the check keeps what DescribeConfigs shows a
// configuration Kafka would take.
func (c *Config) ValidateListenerChange(now, proposed configdef.Sources) (string, error) {
	key := ""
	for _, k := range listenerKeys {
		a, _ := now.BrokerValue(k)
		b, _ := proposed.BrokerValue(k)
		if a != b {
			key = k
			break
		}
	}
	if key == "" {
		return "", nil
	}
	old, err := c.listenersFrom(now)
	if err != nil {
		old = c // a stored value that no longer holds: compare with the static one
	}
	next, err := c.listenersFrom(proposed)
	if err != nil {
		return key, err
	}
	// KafkaConfig's checks (in buildListeners) already refused advertised
	// listeners that are not listeners and an inter-broker listener that
	// is not advertised, as they refuse them before
	// validateReconfiguration in Kafka; its one check left compares the
	// listeners kept with those the broker has.
	for _, l := range next.Listeners {
		if _, existing := findEndpoint(old.Listeners, l.Name); !existing {
			continue
		}
		if was := old.SecurityProtocols[l.Name]; was != l.SecurityProtocol {
			return key, fmt.Errorf("Security protocol cannot be updated for existing listener %s", l.Name)
		}
	}
	return "", nil
}

// listenersFrom builds the listener part of a configuration from src, with
// this node's id and roles, through the checks Load makes.
func (c *Config) listenersFrom(src configdef.Sources) (*Config, error) {
	l := &Config{NodeID: c.NodeID, Roles: c.Roles}
	return l, l.buildListeners(values{src: src})
}
