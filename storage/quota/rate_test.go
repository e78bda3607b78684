package quota

import (
	"math"
	"testing"
	"time"
)

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > want*0.01+1e-9 {
		t.Fatalf("%s = %.2f, want %.2f", what, got, want)
	}
}

// TestRateSteady: a steady 10 000 units/s read back as 10 000/s once the
// windows are full, from 11 one-second windows as Kafka's defaults.
func TestRateSteady(t *testing.T) {
	r := NewRate(11, time.Second)
	start := time.UnixMilli(1_000_000)
	now := start
	for i := 0; i < 300; i++ { // 30 s, 1000 every 100 ms
		r.Record(1000, now)
		now = now.Add(100 * time.Millisecond)
	}
	near(t, "steady rate", r.Measure(now), 10000)
}

// TestRateMinimumElapsed: right after start the elapsed time counts as
// (samples-1) windows (Kafka's Rate.windowSize), so one record of 5000 is
// 500/s, not 5000/ms.
func TestRateMinimumElapsed(t *testing.T) {
	r := NewRate(11, time.Second)
	now := time.UnixMilli(1_000_000)
	r.Record(5000, now)
	near(t, "rate at start", r.Measure(now), 500)
	// 3.5 s on: 3 full windows, raised to 10, plus the half.
	near(t, "rate after 3.5 s", r.Measure(now.Add(3500*time.Millisecond)), 5000/10.5)
	// 12 s later the window that held it is obsolete.
	near(t, "rate after the windows expired", r.Measure(now.Add(12*time.Second)), 0)
}

// TestRateWindowsSlide: what was recorded more than samples×window ago no
// longer counts, and the rest is divided by the time it spans.
func TestRateWindowsSlide(t *testing.T) {
	r := NewRate(2, time.Second)
	t0 := time.UnixMilli(1_000_000)
	r.Record(4000, t0)                            // window [0,1)
	r.Record(1000, t0.Add(1500*time.Millisecond)) // window [1,2)
	// At 1.5 s both count over 1.5 s elapsed.
	near(t, "rate at 1.5 s", r.Measure(t0.Add(1500*time.Millisecond)), 5000/1.5)
	// At 2.5 s the first window expired: 1000 over one window (1 s min).
	near(t, "rate at 2.5 s", r.Measure(t0.Add(2500*time.Millisecond)), 1000/1.5)
	if got := NewRate(0, 0).Measure(t0); got != 0 {
		t.Fatalf("an empty rate measures %v", got)
	}
}

// TestSimpleRate: Kafka's SimpleRate, which the replication throttles use,
// counts the time since the oldest window began, at least one window: a
// record of 5000 at start reads 5000/s for the first second, then falls as
// time passes.
func TestSimpleRate(t *testing.T) {
	r := NewSimpleRate(11, time.Second)
	now := time.UnixMilli(1_000_000)
	r.Record(5000, now)
	near(t, "rate at start", r.Measure(now), 5000)
	near(t, "rate after 0.5 s", r.Measure(now.Add(500*time.Millisecond)), 5000)
	near(t, "rate after 2.5 s", r.Measure(now.Add(2500*time.Millisecond)), 2000)
	near(t, "rate after the windows expired", r.Measure(now.Add(11*time.Second)), 0)
}
