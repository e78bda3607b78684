package broker

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/strait-io/strait/wire"
)

// authMetrics implement wire.AuthMetrics: Kafka's selector metrics
// successful-authentication-total, failed-authentication-total,
// successful-reauthentication-total and failed-reauthentication-total, by
// listener and mechanism.
type authMetrics struct {
	ok, failed, reauthOK, reauthFailed *prometheus.CounterVec
}

func newAuthMetrics(reg *prometheus.Registry) *authMetrics {
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"listener", "mechanism"})
	}
	m := &authMetrics{
		ok: counter("strait_successful_authentication_total",
			"SASL authentications that succeeded, by listener and mechanism (Kafka's successful-authentication-total)."),
		failed: counter("strait_failed_authentication_total",
			"Connections closed because their SASL authentication failed: bad credentials, an unsupported mechanism, a request out of order or above sasl.server.max.receive.size before authenticating (Kafka's failed-authentication-total). mechanism is empty when none was chosen."),
		reauthOK: counter("strait_successful_reauthentication_total",
			"KIP-368 re-authentications that succeeded (Kafka's successful-reauthentication-total)."),
		reauthFailed: counter("strait_failed_reauthentication_total",
			"KIP-368 re-authentications that failed and closed the connection (Kafka's failed-reauthentication-total)."),
	}
	reg.MustRegister(m.ok, m.failed, m.reauthOK, m.reauthFailed)
	return m
}

// Authenticated implements wire.AuthMetrics.
func (m *authMetrics) Authenticated(listener, mechanism string, reauth bool) {
	if reauth {
		m.reauthOK.WithLabelValues(listener, mechanism).Inc()
		return
	}
	m.ok.WithLabelValues(listener, mechanism).Inc()
}

// AuthenticationFailed implements wire.AuthMetrics.
func (m *authMetrics) AuthenticationFailed(listener, mechanism string, reauth bool) {
	if reauth {
		m.reauthFailed.WithLabelValues(listener, mechanism).Inc()
		return
	}
	m.failed.WithLabelValues(listener, mechanism).Inc()
}

var _ wire.AuthMetrics = (*metrics)(nil)
