package clientquota

import (
	"testing"
	"time"
)

// A new sensor divides by at least Samples-1 windows: 50 MB in the first
// instant under a 5 MB/s quota with 11 windows of 1 s is exactly at the
// quota, one byte more is over it, and the throttle is Kafka's
// (value-bound)/bound*window.
func TestRateFirstWindows(t *testing.T) {
	m := NewManager(DefaultWindow)
	t0 := time.Unix(1000, 0)
	const quota = 5e6
	if d := m.Record(Produce, "u", "", quota, 50e6, t0); d != 0 {
		t.Fatalf("50 MB over the 10 s minimum span: throttled %v", d)
	}
	// 100 MB over 10 s is 10 MB/s, twice the quota: wait one whole span.
	if d := m.Record(Produce, "u", "", quota, 50e6, t0); d != 10*time.Second {
		t.Fatalf("throttle %v, want 10s", d)
	}
	// Another entity has its own sensor.
	if d := m.Record(Produce, "v", "", quota, 1e6, t0); d != 0 {
		t.Fatalf("other entity throttled %v", d)
	}
}

// A client that sends as fast as it may, waiting out every throttle,
// averages the quota over a long run, whatever its request size.
func TestRateSteadyState(t *testing.T) {
	for _, size := range []float64{16 << 10, 1 << 20, 4 << 20} {
		m := NewManager(DefaultWindow)
		now := time.Unix(1000, 0)
		const quota = 5e6
		var sent float64
		var from time.Time
		var fromSent float64
		end := now.Add(120 * time.Second)
		for now.Before(end) {
			d := m.Record(Produce, "u", "c", quota, size, now)
			sent += size
			if from.IsZero() && now.Sub(time.Unix(1000, 0)) >= 30*time.Second {
				from, fromSent = now, sent
			}
			// 1 ms a request, then the throttle.
			now = now.Add(time.Millisecond + d)
		}
		got := (sent - fromSent) / now.Sub(from).Seconds()
		if got < quota*0.9 || got > quota*1.1 {
			t.Errorf("requests of %g bytes: %.0f B/s over the steady state, quota %.0f", size, got, float64(quota))
		}
	}
}
