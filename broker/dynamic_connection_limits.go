package broker

import (
	"context"
	"net/netip"
	"time"

	"github.com/strait-io/strait/broker/configdef"
	"github.com/strait-io/strait/wire"
)

// The connection quotas change at runtime as Kafka's
// DynamicConnectionQuota changes them: max.connections,
// max.connections.per.ip, max.connections.per.ip.overrides and
// listener.name.<l>.max.connections, set per broker or cluster-wide, reach
// the wire server's quotas whenever the metadata image changes them.

// overridesResolveTimeout bounds the name resolution of
// max.connections.per.ip.overrides made for a runtime change.
const overridesResolveTimeout = 30 * time.Second

// attachServer hands the started server the connection quotas and
// listener certificates of the image as it is now; later images reach it
// through applyDynamicBrokerConfigs. (The server was built with those of
// an earlier image: the metadata subscriber may have applied newer ones
// while it started.)
func (n *Node) attachServer(s *wire.Server) {
	d := &n.dynamicConfigs
	d.mu.Lock()
	defer d.mu.Unlock()
	d.server = s
	src := n.sources(n.quorum.Image())
	n.applyConnectionLimitsLocked(src)
	n.applyListenerTLSLocked(src)
}

// applyConnectionLimitsLocked gives the server the quotas of src. It runs
// on the metadata subscriber and does not block: overrides naming hosts
// are resolved on a goroutine of their own (Kafka resolves them in
// updateMaxConnectionsPerIpOverride), and the newest application wins.
// A configuration the quotas refuse (validated when altered, so only a
// combination of layers, e.g. max.connections.per.ip=0 without
// overrides) keeps the quotas as they were and is logged, as Kafka's
// DynamicBrokerConfig logs a reconfiguration it could not apply.
// n.dynamicConfigs.mu is held.
func (n *Node) applyConnectionLimitsLocked(src configdef.Sources) {
	d := &n.dynamicConfigs
	if d.server == nil {
		return
	}
	d.connGen++
	gen, server := d.connGen, d.server
	update := func(lim *wire.ConnectionLimits, err error) {
		if err == nil {
			err = server.SetConnectionLimits(*lim)
		}
		if err != nil {
			n.logger.Error("connection quotas not updated", "err", err)
		}
	}
	if !overridesNameHosts(src) {
		update(n.connectionLimitsFrom(context.Background(), src))
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), overridesResolveTimeout)
		defer cancel()
		lim, err := n.connectionLimitsFrom(ctx, src)
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.connGen == gen { // else a newer image applied its own quotas meanwhile
			update(lim, err)
		}
	}()
}

// overridesNameHosts reports whether max.connections.per.ip.overrides in
// src names a host that must be resolved.
func overridesNameHosts(src configdef.Sources) bool {
	raw, _ := src.BrokerValue("max.connections.per.ip.overrides")
	overrides, _ := configdef.ParsePerIPOverrides(raw)
	for host := range overrides {
		if _, err := netip.ParseAddr(host); err != nil {
			return true
		}
	}
	return false
}
