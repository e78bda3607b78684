package broker

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strait-io/strait/wire"
)

// metrics are the broker's Prometheus metrics, registered on the node's own
// registry (never the global default one).
type metrics struct {
	requests    *prometheus.CounterVec
	errors      *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	bytesIn     prometheus.Counter
	bytesOut    prometheus.Counter
	connections prometheus.Gauge
	connsTotal  prometheus.Counter
	*listenerMetrics
	*authMetrics
	*quotaMetrics

	// The request memory pool (queued.max.request.bytes), Kafka's
	// SocketServer MemoryPoolUsed and MemoryPoolAvailable.
	memUsed      prometheus.Gauge
	memAvailable prometheus.Gauge
	memWaits     prometheus.Counter
	memWaitBytes prometheus.Counter

	// byKey caches the request counter and latency histogram of each
	// Kafka API key below len(byKey): WithLabelValues hashes the label
	// on every call, 2% of a one-partition produce request's broker CPU
	// in issue 29's profile. Strait's own keys (9400+) look them up.
	byKey [128]atomic.Pointer[requestMetrics]
}

// requestMetrics are one API's series of requests and latency.
type requestMetrics struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strait_requests_total", Help: "Kafka requests handled, by API.",
		}, []string{"api"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strait_request_errors_total", Help: "Kafka requests that closed their connection, by API.",
		}, []string{"api"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "strait_request_duration_seconds",
			Help:    "Time from a request's arrival to its response being queued, by API.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2.5, 14),
		}, []string{"api"}),
		bytesIn:     prometheus.NewCounter(prometheus.CounterOpts{Name: "strait_network_bytes_in_total", Help: "Request bytes read."}),
		bytesOut:    prometheus.NewCounter(prometheus.CounterOpts{Name: "strait_network_bytes_out_total", Help: "Response bytes written."}),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{Name: "strait_connections", Help: "Open client connections."}),
		connsTotal:  prometheus.NewCounter(prometheus.CounterOpts{Name: "strait_connections_total", Help: "Client connections accepted."}),

		memUsed: prometheus.NewGauge(prometheus.GaugeOpts{Name: "strait_memory_pool_used_bytes",
			Help: "Request memory reserved for requests being read or handled (Kafka's MemoryPoolUsed)."}),
		memAvailable: prometheus.NewGauge(prometheus.GaugeOpts{Name: "strait_memory_pool_available_bytes",
			Help: "Request memory left of queued.max.request.bytes; negative while over it (Kafka's MemoryPoolAvailable)."}),
		memWaits: prometheus.NewCounter(prometheus.CounterOpts{Name: "strait_memory_pool_waits_total",
			Help: "Times a connection stopped being read because its next request found no request memory."}),
		memWaitBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "strait_memory_pool_wait_bytes_total",
			Help: "Sizes of the requests that waited for request memory."}),
	}
	reg.MustRegister(m.requests, m.errors, m.latency, m.bytesIn, m.bytesOut, m.connections, m.connsTotal,
		m.memUsed, m.memAvailable, m.memWaits, m.memWaitBytes,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	m.listenerMetrics = newListenerMetrics(reg)
	m.authMetrics = newAuthMetrics(reg)
	m.quotaMetrics = newQuotaMetrics(reg)
	return m
}

// RequestDone implements wire.Metrics.
func (m *metrics) RequestDone(key, _ int16, dur time.Duration, failed bool) {
	rm := m.forKey(key)
	rm.count.Inc()
	rm.latency.Observe(dur.Seconds())
	if failed {
		m.errors.WithLabelValues(wire.NameForKey(key)).Inc()
	}
}

// forKey returns key's request series, cached in byKey when it fits.
func (m *metrics) forKey(key int16) *requestMetrics {
	if key >= 0 && int(key) < len(m.byKey) {
		if rm := m.byKey[key].Load(); rm != nil {
			return rm
		}
	}
	name := wire.NameForKey(key)
	rm := &requestMetrics{count: m.requests.WithLabelValues(name), latency: m.latency.WithLabelValues(name)}
	if key >= 0 && int(key) < len(m.byKey) {
		m.byKey[key].Store(rm)
	}
	return rm
}

// BytesIn implements wire.Metrics.
func (m *metrics) BytesIn(n int) { m.bytesIn.Add(float64(n)) }

// BytesOut implements wire.Metrics.
func (m *metrics) BytesOut(n int) { m.bytesOut.Add(float64(n)) }

// ConnOpened implements wire.Metrics.
func (m *metrics) ConnOpened() { m.connections.Inc(); m.connsTotal.Inc() }

// ConnClosed implements wire.Metrics.
func (m *metrics) ConnClosed() { m.connections.Dec() }

var _ wire.RequestMemoryMetrics = (*metrics)(nil)

// RequestMemory implements wire.RequestMemoryMetrics.
func (m *metrics) RequestMemory(used, available int64) {
	m.memUsed.Set(float64(used))
	m.memAvailable.Set(float64(available))
}

// RequestMemoryWait implements wire.RequestMemoryMetrics.
func (m *metrics) RequestMemoryWait(n int) {
	m.memWaits.Inc()
	m.memWaitBytes.Add(float64(n))
}
