package broker

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/broker/configdef"
	"github.com/strait-io/strait/raftmeta"
)

// validateBrokerConfigsTogether checks an alteration of a broker resource
// (after: its dynamic configs as they would be) against the rest of this
// broker's configuration, as Kafka's DynamicBrokerConfig.validate builds
// the new KafkaConfig (validateValues) and lets each reconfigurable
// validate it: max.connections.per.ip may be 0 only with overrides, the
// listener keys set on this broker must make listeners Kafka would take
// (config.ValidateListenerChange), and a listener keystore or truststore
// set on this broker must load. An
// alteration of another broker's resource is checked by that broker only
// as it applies it.
func (n *Node) validateBrokerConfigsTogether(res raftmeta.ConfigResource, after map[string]*string) error {
	own := fmt.Sprint(n.cfg.NodeID)
	if res.Name != "" && res.Name != own {
		return nil
	}
	next := make(map[string]string, len(after))
	for k, v := range after {
		if v != nil {
			next[k] = *v
		}
	}
	now := n.sources(n.quorum.Image())
	proposed := now
	if res.Name == "" {
		proposed.DynamicDefault = next
	} else {
		proposed.DynamicBroker = next
	}
	perIP, _ := proposed.BrokerValue("max.connections.per.ip")
	overrides, _ := proposed.BrokerValue("max.connections.per.ip.overrides")
	if perIP == "0" && overrides == "" {
		return &configdef.Error{Code: kerr.InvalidConfig, Key: "max.connections.per.ip",
			Msg: "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set."}
	}
	if res.Name == "" {
		return nil
	}
	if key, err := n.cfg.ValidateListenerChange(now, proposed); err != nil {
		return &configdef.Error{Code: kerr.InvalidConfig, Key: key,
			Msg: fmt.Sprintf("Invalid value for configuration %s: %v", key, err)}
	}
	return n.validateListenerTLS(now, proposed)
}
