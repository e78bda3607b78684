package wire

import "maps"

// SetConnectionLimits replaces the connection quotas at runtime, as
// Kafka's DynamicConnectionQuota.reconfigure hands new values of
// max.connections, max.connections.per.ip(.overrides) and
// listener.name.<l>.max.connections to ConnectionQuotas. It does not
// wait for a listener: the quotas' mutex is only ever held for a count.
//
// As in Kafka, a lower limit closes nothing by itself except through
// max.connections: each listener other than the protected one closes its
// least recently active connection per tick while the broker holds more
// than max.connections (Processor.closeExcessConnections reads the
// current limit). Addresses over a lowered per-address limit and
// listeners over a lowered listener limit keep their connections; new
// ones wait or are refused. A raised limit wakes the acceptors waiting
// for a slot at once. InterBrokerListener is fixed at start: it names a
// listener, and listeners do not change at runtime.
func (s *Server) SetConnectionLimits(lim ConnectionLimits) error {
	listeners := make(map[string]bool, len(s.cfg.Listeners))
	for _, l := range s.cfg.Listeners {
		listeners[l.Name] = true
	}
	if err := lim.validate(listeners); err != nil {
		return err
	}
	lim.ListenerMaxConnections = maps.Clone(lim.ListenerMaxConnections)
	lim.MaxConnectionsPerIPOverrides = maps.Clone(lim.MaxConnectionsPerIPOverrides)
	s.quotas.setLimits(lim)
	return nil
}

// setLimits swaps the limits and wakes the acceptors waiting for a slot,
// which look again under the new ones.
func (q *connQuotas) setLimits(lim ConnectionLimits) {
	q.mu.Lock()
	defer q.mu.Unlock()
	lim.InterBrokerListener = q.lim.InterBrokerListener
	q.lim = lim
	q.wakeWaitersLocked()
}
