package broker

import (
	"crypto/tls"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/broker/config"
	"github.com/strait-io/strait/broker/configdef"
)

// A listener's keystore and truststore change at runtime, as Kafka's
// dynamic SSL update (DynamicListenerConfig, SslFactory.reconfigure) lets
// an operator rotate certificates without a restart: the
// listener.name.<l>.ssl.* keys set on this broker's resource are checked
// by loading them before they are stored (Kafka validates the new
// SslFactory first), then every new connection to the listener
// handshakes with the new certificate while the open ones keep theirs.
// The certificate this broker presents when it dials another node keeps
// the static configuration's.

// tlsListeners are the SSL and SASL_SSL listeners the wire server serves.
func (n *Node) tlsListeners() []string {
	var out []string
	for _, l := range n.cfg.Listeners {
		if n.cfg.TLS[l.Name] != nil && !isControllerListener(n.cfg, l.Name) {
			out = append(out, l.Name)
		}
	}
	return out
}

// startListenerTLS is the TLS configuration listener name starts with:
// static's, or one built with the dynamic keys the metadata image holds
// (a restart after a rotation). A dynamic keystore that no longer loads
// (a file removed since) is logged and the static one served.
func (n *Node) startListenerTLS(name string, static *tls.Config) *tls.Config {
	src := n.sources(n.quorum.Image())
	if config.ListenerSSLKeys(src, name) == "" {
		return static
	}
	t, err := config.ListenerTLSFrom(src, name)
	if err != nil {
		n.logger.Error("listener keystore set at runtime does not load; serving the static one", "listener", name, "err", err)
		return static
	}
	return t.Server
}

// applyListenerTLSLocked gives each TLS listener whose dynamic ssl keys
// changed the configuration they make. One that does not load (checked
// when altered, so only a file changed or removed since) is logged and
// the listener keeps its certificate. n.dynamicConfigs.mu is held.
func (n *Node) applyListenerTLSLocked(src configdef.Sources) {
	d := &n.dynamicConfigs
	if d.server == nil {
		return
	}
	if d.listenerSSL == nil {
		d.listenerSSL = map[string]string{}
	}
	for _, name := range n.tlsListeners() {
		keys := config.ListenerSSLKeys(src, name)
		if prev, seen := d.listenerSSL[name]; seen && prev == keys {
			continue
		}
		d.listenerSSL[name] = keys
		t, err := config.ListenerTLSFrom(src, name)
		if err == nil {
			err = d.server.SetListenerTLS(name, t.Server)
		}
		if err != nil {
			n.logger.Error("listener TLS not updated", "listener", name, "err", err)
			continue
		}
		n.logger.Info("listener TLS updated: new connections use the new certificates", "listener", name)
	}
}

// validateListenerTLS checks, for an alteration of this broker's resource
// from now to proposed, that the keystore and truststore of each TLS
// listener whose ssl keys it changes load; the error is INVALID_CONFIG
// naming the key and the reason.
func (n *Node) validateListenerTLS(now, proposed configdef.Sources) error {
	for _, name := range n.tlsListeners() {
		if config.ListenerSSLKeys(now, name) == config.ListenerSSLKeys(proposed, name) {
			continue
		}
		if _, err := config.ListenerTLSFrom(proposed, name); err != nil {
			key := firstChangedSSLKey(now.DynamicBroker, proposed.DynamicBroker, name)
			return &configdef.Error{Code: kerr.InvalidConfig, Key: key,
				Msg: fmt.Sprintf("Invalid value for configuration %s: listener %s: %v", key, name, err)}
		}
	}
	return nil
}

// firstChangedSSLKey names the first listener.name.<l>.ssl.* key that
// differs between before and after.
func firstChangedSSLKey(before, after map[string]string, listener string) string {
	prefix := "listener.name." + strings.ToLower(listener) + ".ssl."
	keys := slices.Sorted(maps.Keys(after))
	keys = append(keys, slices.Sorted(maps.Keys(before))...)
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) && before[k] != after[k] {
			return k
		}
	}
	return prefix
}
