package broker

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
)

// cleanerCollector exports the log cleaner's figures, after Kafka's
// LogCleaner and LogCleanerManager gauges (max-dirty-percent,
// time-since-last-run-ms, uncleanable-partitions-count) plus totals of
// what it cleaned.
type cleanerCollector struct {
	stats func() storage.CleanerStats
	clock clock.Clock

	threads, maxDirty, sinceLastRun, uncleanable, cleanings, bytesRead, bytesWritten *prometheus.Desc
}

func newCleanerCollector(stats func() storage.CleanerStats, c clock.Clock) *cleanerCollector {
	return &cleanerCollector{
		stats: stats,
		clock: c,
		threads: prometheus.NewDesc("strait_log_cleaner_threads",
			"Log cleaner threads running (log.cleaner.threads; 0 before the first metadata image or with the cleaner off).", nil, nil),
		maxDirty: prometheus.NewDesc("strait_log_cleaner_max_dirty_ratio",
			"The dirty ratio of the dirtiest compacted log at the cleaner's last look, due or not (Kafka's max-dirty-percent / 100).", nil, nil),
		sinceLastRun: prometheus.NewDesc("strait_log_cleaner_seconds_since_last_run",
			"Seconds since a cleaner thread last looked for a log to clean (Kafka's time-since-last-run-ms); NaN before the first look.", nil, nil),
		uncleanable: prometheus.NewDesc("strait_log_cleaner_uncleanable_partitions",
			"Partitions the cleaner gave up on because of their data (Kafka's uncleanable-partitions-count).", nil, nil),
		cleanings: prometheus.NewDesc("strait_log_cleaner_cleanings_total",
			"Cleanings of a log that compacted something.", nil, nil),
		bytesRead: prometheus.NewDesc("strait_log_cleaner_read_bytes_total",
			"Bytes of the segments the cleaner rewrote, before cleaning.", nil, nil),
		bytesWritten: prometheus.NewDesc("strait_log_cleaner_written_bytes_total",
			"Bytes of the cleaned segments that replaced them.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *cleanerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.threads, c.maxDirty, c.sinceLastRun, c.uncleanable, c.cleanings, c.bytesRead, c.bytesWritten} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *cleanerCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.stats()
	since := math.NaN()
	if !st.LastRun.IsZero() {
		since = c.clock.Now().Sub(st.LastRun).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(c.threads, prometheus.GaugeValue, float64(st.Threads))
	ch <- prometheus.MustNewConstMetric(c.maxDirty, prometheus.GaugeValue, st.MaxDirtyRatio)
	ch <- prometheus.MustNewConstMetric(c.sinceLastRun, prometheus.GaugeValue, since)
	ch <- prometheus.MustNewConstMetric(c.uncleanable, prometheus.GaugeValue, float64(st.UncleanablePartitions))
	ch <- prometheus.MustNewConstMetric(c.cleanings, prometheus.CounterValue, float64(st.Cleanings))
	ch <- prometheus.MustNewConstMetric(c.bytesRead, prometheus.CounterValue, float64(st.BytesRead))
	ch <- prometheus.MustNewConstMetric(c.bytesWritten, prometheus.CounterValue, float64(st.BytesWritten))
}
