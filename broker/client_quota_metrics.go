package broker

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strait-io/strait/wire"
)

// quotaMetrics implement wire.QuotaMetrics: the responses client quotas
// throttled and for how long, by quota type (Kafka's throttle-time
// sensors, summed over users and client ids to keep the series few).
type quotaMetrics struct {
	throttled, throttleSeconds *prometheus.CounterVec
}

func newQuotaMetrics(reg *prometheus.Registry) *quotaMetrics {
	m := &quotaMetrics{
		throttled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strait_client_quota_throttled_total",
			Help: "Responses a client quota throttled (throttle_time_ms above 0, the connection muted), by quota type: Produce, Fetch or Request."}, []string{"quota"}),
		throttleSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strait_client_quota_throttle_seconds_total",
			Help: "The throttle times client quotas gave, by quota type."}, []string{"quota"}),
	}
	reg.MustRegister(m.throttled, m.throttleSeconds)
	return m
}

// ClientThrottled implements wire.QuotaMetrics.
func (m *quotaMetrics) ClientThrottled(quota string, d time.Duration) {
	m.throttled.WithLabelValues(quota).Inc()
	m.throttleSeconds.WithLabelValues(quota).Add(d.Seconds())
}

var _ wire.QuotaMetrics = (*metrics)(nil)
