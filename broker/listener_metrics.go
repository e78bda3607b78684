package broker

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strait-io/strait/wire"
)

// listenerMetrics implement wire.ListenerMetrics: what the listeners'
// acceptors report. Kafka has no metric for failed accepts (its Acceptor
// only logs them); the time an acceptor waits under max.connections is
// Kafka's AcceptorBlockedPercent, whose rate this counter's is.
type listenerMetrics struct {
	acceptErrors *prometheus.CounterVec
	rejected     *prometheus.CounterVec
	blocked      *prometheus.CounterVec
}

func newListenerMetrics(reg *prometheus.Registry) *listenerMetrics {
	m := &listenerMetrics{
		acceptErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strait_accept_errors_total",
			Help: "Connections a listener failed to accept, by listener and reason (EMFILE, ENFILE, ENOBUFS, ENOMEM or other); the listener retries after a pause.",
		}, []string{"listener", "reason"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strait_connections_rejected_total",
			Help: "Connections closed as they arrived because of a connection quota, by listener and reason (per_ip: max.connections.per.ip).",
		}, []string{"listener", "reason"}),
		blocked: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strait_acceptor_blocked_seconds_total",
			Help: "Time a listener's acceptor waited for a connection slot under max.connections (Kafka's AcceptorBlockedPercent is its rate).",
		}, []string{"listener"}),
	}
	reg.MustRegister(m.acceptErrors, m.rejected, m.blocked)
	return m
}

// AcceptFailed implements wire.ListenerMetrics.
func (m *listenerMetrics) AcceptFailed(listener, reason string) {
	m.acceptErrors.WithLabelValues(listener, reason).Inc()
}

// ConnectionRejected implements wire.ListenerMetrics.
func (m *listenerMetrics) ConnectionRejected(listener, reason string) {
	m.rejected.WithLabelValues(listener, reason).Inc()
}

// AcceptorBlocked implements wire.ListenerMetrics.
func (m *listenerMetrics) AcceptorBlocked(listener string, d time.Duration) {
	m.blocked.WithLabelValues(listener).Add(d.Seconds())
}

var _ wire.ListenerMetrics = (*metrics)(nil)
