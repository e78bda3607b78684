package mirrorit

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestMirrorPausedLagTellsTheTruth is issue 33's "done when" for a paused
// mirror: records written to the source while a topic is PAUSED show in
// describe and the metrics as N records of lag per partition, with a lag
// in ms at least the time since the first of them was written (not the
// lag 0 of a source high watermark frozen where the fetcher stopped); with
// the source stopped, the lag reads unknown (not 0) with the time of the
// last successful measurement, and the metrics say NaN.
func TestMirrorPausedLagTellsTheTruth(t *testing.T) {
	t.Parallel()
	src, dst := startOne(t, "source"), startOne(t, "destination", brokertest.WithMetrics())
	p := newPair(t, 2*time.Minute, src, dst)
	const topic, partitions, before, n, more = "pausedlag", 3, 10, 200, 40
	p.src.createTopic(t, p.ctx, topic, partitions)
	for part := range int32(partitions) {
		produceBatches(t, p, p.src, topic, part, 0, before, 5, "before")
	}
	p.createMirror()
	p.start(topic)
	p.waitMirroring(topic, partitions, 30*time.Second)

	p.pause(topic)
	p.waitState(topic, "PAUSED", partitions, 30*time.Second)
	firstWritten := time.Now()
	for part := range int32(partitions) {
		produceBatches(t, p, p.src, topic, part, before, n, 20, "paused")
	}
	p.logf("%d records per partition written to the source while PAUSED", n)

	var lastMeasured time.Time
	p.waitFor(15*time.Second, fmt.Sprintf("describe to show a lag of %d records per partition", n), func() string {
		asked := time.Now()
		td, err := p.describe(topic)
		if err != nil {
			return err.Error()
		}
		if len(td.Partitions) != partitions {
			return fmt.Sprintf("%d partitions described", len(td.Partitions))
		}
		minMs := asked.Sub(firstWritten).Milliseconds()
		for _, pd := range td.Partitions {
			switch {
			case pd.State != "PAUSED":
				return fmt.Sprintf("p%d %s", pd.Partition, pd.State)
			case pd.Lag != n || pd.DestinationHighWatermark != before:
				return fmt.Sprintf("p%d: lag %d (destination HW %d, source HW %d), want %d", pd.Partition, pd.Lag,
					pd.DestinationHighWatermark, pd.SourceHighWatermark, n)
			case pd.LagMs < minMs:
				t.Fatalf("p%d: lag %d ms, less than the %d ms since the first unmirrored record was written",
					pd.Partition, pd.LagMs, minMs)
			case pd.LagUnknown || pd.LagMeasuredAt == nil:
				t.Fatalf("p%d: a lag of %d with unknown %v, measured at %v", pd.Partition, pd.Lag, pd.LagUnknown, pd.LagMeasuredAt)
			}
			lastMeasured = *pd.LagMeasuredAt
		}
		return ""
	})
	asked := time.Now()
	m := mirrorMetrics(t, p.ctx, dst.one.MetricsAddr())
	p.logf("metrics while PAUSED: %v", m)
	if m["strait_mirror_lag_records"] != partitions*n || m["strait_mirror_lag_records_max"] != n {
		t.Errorf("metrics: lag_records %v, lag_records_max %v; want %d and %d", m["strait_mirror_lag_records"],
			m["strait_mirror_lag_records_max"], partitions*n, n)
	}
	if minMs := float64(asked.Sub(firstWritten).Milliseconds()); !(m["strait_mirror_lag_ms"] >= minMs) {
		t.Errorf("metrics: lag_ms %v, less than the %v ms since the first unmirrored record was written", m["strait_mirror_lag_ms"], minMs)
	}

	// Without describe (which measures the source itself), the metrics
	// follow the source through the manager's own measurements.
	for part := range int32(partitions) {
		produceBatches(t, p, p.src, topic, part, before+n, more, 20, "more")
	}
	p.waitFor(15*time.Second, "the metrics to follow the source while PAUSED", func() string {
		m = mirrorMetrics(t, p.ctx, dst.one.MetricsAddr())
		if v := m["strait_mirror_lag_records"]; v != partitions*(n+more) {
			return fmt.Sprintf("lag_records %v, want %d", v, partitions*(n+more))
		}
		return ""
	})

	stopped := time.Now()
	src.one.Stop(t)
	p.logf("source stopped")
	p.waitFor(30*time.Second, "describe to show the lag unknown", func() string {
		td, err := p.describe(topic)
		if err != nil {
			return err.Error()
		}
		for _, pd := range td.Partitions {
			if !pd.LagUnknown || pd.Lag != -1 || pd.LagMs != -1 {
				return fmt.Sprintf("p%d: lag %d (unknown %v), lag ms %d", pd.Partition, pd.Lag, pd.LagUnknown, pd.LagMs)
			}
			if pd.LagMeasuredAt == nil || pd.LagMeasuredAt.Before(lastMeasured) || pd.LagMeasuredAt.After(stopped.Add(time.Second)) {
				t.Fatalf("p%d: unknown lag measured at %v; want between %v and the source's stop at %v", pd.Partition,
					pd.LagMeasuredAt, lastMeasured, stopped)
			}
		}
		return ""
	})
	// The metrics use the last measurement until it is lag.StaleAfter old
	// (describe measures the source for each call).
	p.waitFor(30*time.Second, "the metrics to show the lag unknown", func() string {
		m = mirrorMetrics(t, p.ctx, dst.one.MetricsAddr())
		for _, name := range []string{"strait_mirror_lag_records", "strait_mirror_lag_records_max", "strait_mirror_lag_ms"} {
			if v, ok := m[name]; !ok || !math.IsNaN(v) {
				return fmt.Sprintf("%s = %v (present %v), want NaN", name, v, ok)
			}
		}
		if v := m["strait_mirror_lag_unknown_partitions"]; v != partitions {
			return fmt.Sprintf("strait_mirror_lag_unknown_partitions = %v, want %d", v, partitions)
		}
		return ""
	})
	p.logf("metrics with the source stopped: %v", m)
}
