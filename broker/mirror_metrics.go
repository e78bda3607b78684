package broker

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strait-io/strait/mirror/manager"
)

// mirrorCollector exports the mirror manager's numbers (Manager.Stats) at
// each scrape, for the mirror partitions this broker leads: KIP-1279's
// per-mirror lag and throughput metrics in the broker's Prometheus style.
type mirrorCollector struct {
	stats func() (manager.Stats, bool)

	partitions, lag, lagMax, lagMs, lagUnknown, committedLag, bytes, records, fetchErrors, skipped *prometheus.Desc
}

func newMirrorCollector(stats func() (manager.Stats, bool)) *mirrorCollector {
	return &mirrorCollector{
		stats: stats,
		partitions: prometheus.NewDesc("strait_mirror_partitions",
			"Mirror partitions this broker leads, by mirror and state.", []string{"mirror", "state"}, nil),
		lag: prometheus.NewDesc("strait_mirror_lag_records",
			"Records the source's consumers can read that the destination's cannot yet (source high watermark - destination high watermark), summed over this broker's mirror partitions, by mirror; NaN when the lag of one of them is unknown.", []string{"mirror"}, nil),
		committedLag: prometheus.NewDesc("strait_mirror_lag_committed_records",
			"Records the source's read_committed consumers can read that the destination's cannot yet (source last stable offset - destination last stable offset), summed over this broker's mirror partitions, by mirror; NaN when the committed lag of one of them is unknown.", []string{"mirror"}, nil),
		lagMax: prometheus.NewDesc("strait_mirror_lag_records_max",
			"The largest lag in records of one of this broker's mirror partitions, by mirror; NaN when the lag of one of them is unknown.", []string{"mirror"}, nil),
		lagMs: prometheus.NewDesc("strait_mirror_lag_ms",
			"The age in milliseconds of the oldest source record the destination cannot serve yet, from the source's timestamps: the largest of this broker's mirror partitions, by mirror (0 when caught up; NaN when the age of a lagging one is unknown).", []string{"mirror"}, nil),
		lagUnknown: prometheus.NewDesc("strait_mirror_lag_unknown_partitions",
			"This broker's mirror partitions whose lag is unknown (the source not measured in the last 5s: it cannot be reached), by mirror: alert on it, a NaN lag compares false.", []string{"mirror"}, nil),
		bytes: prometheus.NewDesc("strait_mirror_bytes_total",
			"Bytes mirrored from the source into partitions this broker leads, by mirror.", []string{"mirror"}, nil),
		records: prometheus.NewDesc("strait_mirror_records_total",
			"Records mirrored from the source into partitions this broker leads, by mirror.", []string{"mirror"}, nil),
		fetchErrors: prometheus.NewDesc("strait_mirror_fetch_errors_total",
			"Partition errors of the fetches from the source, by mirror.", []string{"mirror"}, nil),
		skipped: prometheus.NewDesc("strait_mirror_offsets_skipped_total",
			"Source offsets never mirrored because the source deleted them first (retention), by mirror.", []string{"mirror"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *mirrorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.partitions, c.lag, c.committedLag, c.lagMax, c.lagMs, c.lagUnknown, c.bytes, c.records, c.fetchErrors, c.skipped} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *mirrorCollector) Collect(ch chan<- prometheus.Metric) {
	st, ok := c.stats()
	if !ok {
		return
	}
	for name, ms := range st.Mirrors {
		for s, count := range ms.Partitions {
			ch <- prometheus.MustNewConstMetric(c.partitions, prometheus.GaugeValue, float64(count), name, s.String())
		}
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, knownOrNaN(ms.LagTotal, ms.LagUnknown), name)
		ch <- prometheus.MustNewConstMetric(c.committedLag, prometheus.GaugeValue, knownOrNaN(ms.CommittedLagTotal, ms.CommittedLagUnknown), name)
		ch <- prometheus.MustNewConstMetric(c.lagMax, prometheus.GaugeValue, knownOrNaN(ms.LagMax, ms.LagUnknown), name)
		ch <- prometheus.MustNewConstMetric(c.lagMs, prometheus.GaugeValue, knownOrNaN(ms.LagMsMax, ms.LagMsUnknown), name)
		ch <- prometheus.MustNewConstMetric(c.lagUnknown, prometheus.GaugeValue, float64(ms.LagUnknown), name)
		ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.CounterValue, float64(ms.BytesMirrored), name)
		ch <- prometheus.MustNewConstMetric(c.records, prometheus.CounterValue, float64(ms.RecordsMirrored), name)
		ch <- prometheus.MustNewConstMetric(c.fetchErrors, prometheus.CounterValue, float64(ms.FetchErrors), name)
		ch <- prometheus.MustNewConstMetric(c.skipped, prometheus.CounterValue, float64(ms.OffsetsSkipped), name)
	}
}

// knownOrNaN is v, or NaN when unknown partitions make it unknown: an
// unknown lag must never read as 0 (issue 33). NaN rather than leaving
// the series out, so a dashboard shows a gap where the number is not
// known while the series itself (and the mirror's other series) stay, and
// "no series" keeps meaning "this broker leads none of the mirror's
// partitions"; strait_mirror_lag_unknown_partitions is what to alert on.
func knownOrNaN(v int64, unknown int) float64 {
	if unknown > 0 {
		return math.NaN()
	}
	return float64(v)
}

// mirrorStats is the manager's Stats, false before it exists.
func (n *Node) mirrorStats() (manager.Stats, bool) {
	m := n.mirrorManager()
	if m == nil {
		return manager.Stats{}, false
	}
	return m.Stats(), true
}
