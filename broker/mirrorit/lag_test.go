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
// in ms that is the age of the first of them: at least the time since it
// was written, and not much more (not the lag 0 of a source high
// watermark frozen where the fetcher stopped, nor the age of the last
// mirrored record); with
// the source stopped, the lag reads unknown (not 0) with the time of the
// last successful measurement, and the metrics say NaN.
func TestMirrorPausedLagTellsTheTruth(t *testing.T) {
	t.Parallel()
	src, dst := startOne(t, "source"), startOne(t, "destination", brokertest.WithMetrics())
	p := newPair(t, 2*time.Minute, src, dst)
	const topic, partitions, before, n, more, perBatch = "pausedlag", 3, 10, 200, 40, 20
	p.src.createTopic(t, p.ctx, topic, partitions)
	for part := range int32(partitions) {
		produceBatches(t, p, p.src, topic, part, 0, before, 5, "before")
	}
	beforeWritten := time.Now()
	p.createMirror()
	p.start(topic)
	p.waitMirroring(topic, partitions, 30*time.Second)

	p.pause(topic)
	p.waitState(topic, "PAUSED", partitions, 30*time.Second)
	// The last mirrored records are at least beforeGap older than the
	// first unmirrored one: a lag in ms taken from the mirrored data (now −
	// its last timestamp) overstates the age by that much, beyond slack.
	const beforeGap, slack = 3 * time.Second, time.Second
	time.Sleep(time.Until(beforeWritten.Add(beforeGap)))
	// The first unmirrored record of each partition is in its first batch
	// written while PAUSED, stamped between firstLo and firstHi.
	var firstLo, firstHi [partitions]time.Time
	for part := range int32(partitions) {
		firstLo[part] = time.Now()
		produceBatches(t, p, p.src, topic, part, before, perBatch, perBatch, "paused")
		firstHi[part] = time.Now()
		produceBatches(t, p, p.src, topic, part, before+perBatch, n-perBatch, perBatch, "paused")
	}
	p.logf("%d records per partition written to the source while PAUSED", n)
	// The age must stay the first unmirrored record's, whatever is written
	// after it.
	time.Sleep(time.Second)
	// ageBounds is what a lag in ms measured between asked and answered may
	// be for partition part: at least the first unmirrored record's age at
	// asked, at most its age at answered plus slack.
	ageBounds := func(part int32, asked, answered time.Time) (lo, hi int64) {
		return asked.Sub(firstHi[part]).Milliseconds(), answered.Sub(firstLo[part]).Milliseconds() + slack.Milliseconds()
	}

	var lastMeasured time.Time
	p.waitFor(15*time.Second, fmt.Sprintf("describe to show a lag of %d records per partition", n), func() string {
		asked := time.Now()
		td, err := p.describe(topic)
		answered := time.Now()
		if err != nil {
			return err.Error()
		}
		if len(td.Partitions) != partitions {
			return fmt.Sprintf("%d partitions described", len(td.Partitions))
		}
		for _, pd := range td.Partitions {
			lo, hi := ageBounds(pd.Partition, asked, answered)
			switch {
			case pd.State != "PAUSED":
				return fmt.Sprintf("p%d %s", pd.Partition, pd.State)
			case pd.Lag != n || pd.DestinationHighWatermark != before:
				return fmt.Sprintf("p%d: lag %d (destination HW %d, source HW %d), want %d", pd.Partition, pd.Lag,
					pd.DestinationHighWatermark, pd.SourceHighWatermark, n)
			case pd.LagMs < lo || pd.LagMs > hi:
				t.Fatalf("p%d: lag %d ms; the first unmirrored record was %d to %d ms old", pd.Partition, pd.LagMs, lo, hi)
			case pd.LagUnknown || pd.LagMeasuredAt == nil:
				t.Fatalf("p%d: a lag of %d with unknown %v, measured at %v", pd.Partition, pd.Lag, pd.LagUnknown, pd.LagMeasuredAt)
			}
			lastMeasured = *pd.LagMeasuredAt
		}
		return ""
	})
	// metricsAgeOK checks strait_mirror_lag_ms, the largest partition's.
	metricsAgeOK := func(m map[string]float64, asked, answered time.Time) string {
		var lo, hi int64
		for part := range int32(partitions) {
			l, h := ageBounds(part, asked, answered)
			lo, hi = max(lo, l), max(hi, h)
		}
		if v := m["strait_mirror_lag_ms"]; !(v >= float64(lo) && v <= float64(hi)) {
			return fmt.Sprintf("lag_ms %v; the oldest first unmirrored record was %d to %d ms old", v, lo, hi)
		}
		return ""
	}
	asked := time.Now()
	m := mirrorMetrics(t, p.ctx, dst.one.MetricsAddr())
	answered := time.Now()
	p.logf("metrics while PAUSED: %v", m)
	if m["strait_mirror_lag_records"] != partitions*n || m["strait_mirror_lag_records_max"] != n {
		t.Errorf("metrics: lag_records %v, lag_records_max %v; want %d and %d", m["strait_mirror_lag_records"],
			m["strait_mirror_lag_records_max"], partitions*n, n)
	}
	if msg := metricsAgeOK(m, asked, answered); msg != "" {
		t.Error("metrics: " + msg)
	}

	// Without describe (which measures the source itself), the metrics
	// follow the source through the manager's own measurements, and the
	// age stays the first unmirrored record's.
	for part := range int32(partitions) {
		produceBatches(t, p, p.src, topic, part, before+n, more, perBatch, "more")
	}
	p.waitFor(15*time.Second, "the metrics to follow the source while PAUSED", func() string {
		asked := time.Now()
		m = mirrorMetrics(t, p.ctx, dst.one.MetricsAddr())
		answered := time.Now()
		if v := m["strait_mirror_lag_records"]; v != partitions*(n+more) {
			return fmt.Sprintf("lag_records %v, want %d", v, partitions*(n+more))
		}
		if msg := metricsAgeOK(m, asked, answered); msg != "" {
			t.Fatal("metrics: " + msg)
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
