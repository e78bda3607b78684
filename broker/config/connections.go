package config

import (
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/strait-io/strait/broker/configdef"
)

// buildConnectionLimits reads the connection quota keys (Kafka's
// SocketServerConfigs and ListenerConnectionQuota) and checks them as
// KafkaConfig.validateValues does. A listener.name.<l>.max.connections
// for a listener the broker does not serve Kafka clients on (the
// controller's, or none) has no effect and is listed in Ignored.
func (c *Config) buildConnectionLimits(v values) error {
	c.MaxConnections = -1
	if v.set("max.connections") {
		c.MaxConnections = v.i32("max.connections")
	}
	c.MaxConnectionsPerIP = v.i32("max.connections.per.ip")
	overrides, err := configdef.ParsePerIPOverrides(v.str("max.connections.per.ip.overrides"))
	if err != nil {
		return err
	}
	c.MaxConnectionsPerIPOverrides = overrides
	if c.MaxConnectionsPerIP == 0 && len(overrides) == 0 {
		return errors.New("max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.")
	}
	served := map[string]bool{}
	for _, l := range c.Listeners {
		if !slices.Contains(c.ControllerListenerNames, l.Name) {
			served[l.Name] = true
		}
	}
	for k, raw := range v.src.Static {
		d, listener, ok := configdef.LookupListenerOverride(k)
		if !ok {
			continue
		}
		name := strings.ToUpper(listener)
		if !served[name] {
			c.Ignored = append(c.Ignored, k)
			continue
		}
		canon, err := d.Normalize(raw)
		if err != nil {
			return err
		}
		n, _ := strconv.ParseInt(canon, 10, 32)
		if c.ListenerMaxConnections == nil {
			c.ListenerMaxConnections = map[string]int32{}
		}
		c.ListenerMaxConnections[name] = int32(n)
	}
	sort.Strings(c.Ignored)
	return nil
}
