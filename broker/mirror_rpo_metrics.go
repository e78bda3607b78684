package broker

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/strait-io/strait/mirror/lag"
	"github.com/strait-io/strait/mirror/manager"
	"github.com/strait-io/strait/raftmeta"
)

// failoverBoundCollector exports the RPO guard's view (issue 27, mirror_rpo.go)
// for the mirror partitions this broker leads: the mirror config
// mirror.failover.max.lag.ms and how many of them a stop would refuse now
// for it (lag over the bound, or unknown). Alert on the second before a
// failover is needed, not during it.
type failoverBoundCollector struct {
	stats func() (manager.Stats, bool)
	image func() *raftmeta.Image

	bound, exceeded *prometheus.Desc
}

func newFailoverBoundCollector(stats func() (manager.Stats, bool), image func() *raftmeta.Image) *failoverBoundCollector {
	return &failoverBoundCollector{
		stats: stats, image: image,
		bound: prometheus.NewDesc("strait_mirror_failover_max_lag_ms",
			"The mirror config mirror.failover.max.lag.ms: the lag in milliseconds above which a stop (failover) is refused unless forced, by mirror; absent when unset.", []string{"mirror"}, nil),
		exceeded: prometheus.NewDesc("strait_mirror_failover_lag_bound_exceeded",
			"This broker's mirror partitions whose lag is over mirror.failover.max.lag.ms or unknown (a stop would be refused for them), by mirror; 0 when the mirror sets no bound.", []string{"mirror"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *failoverBoundCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.bound
	ch <- c.exceeded
}

// Collect implements prometheus.Collector.
func (c *failoverBoundCollector) Collect(ch chan<- prometheus.Metric) {
	st, ok := c.stats()
	if !ok {
		return
	}
	img := c.image()
	for name, ms := range st.Mirrors {
		bound := lag.Bound{Records: lag.Unknown, Ms: raftmeta.MirrorFailoverMaxLagMs(img.MirrorConfig(name))}
		if bound.Active() {
			ch <- prometheus.MustNewConstMetric(c.bound, prometheus.GaugeValue, float64(bound.Ms), name)
		}
		ch <- prometheus.MustNewConstMetric(c.exceeded, prometheus.GaugeValue, float64(lagsOverBound(bound, ms)), name)
	}
}

// lagsOverBound counts the partitions of ms over bound (one whose lag is
// not in ms.Lag is unknown).
func lagsOverBound(bound lag.Bound, ms manager.MirrorStats) int {
	over := 0
	for tp, lagMs := range ms.LagMs {
		records, ok := ms.Lag[tp]
		if !ok {
			records = lag.Unknown
		}
		if bound.Exceeded(records, lagMs) {
			over++
		}
	}
	return over
}
