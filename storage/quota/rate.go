package quota

import (
	"sync"
	"time"
)

// Rate is Kafka's Rate of a SampledTotal (org.apache.kafka.common.metrics.
// stats.Rate): what was recorded in the last Samples windows of Window each,
// divided by the time those windows span. The windows are aligned to Window
// from the first record, as Kafka's SampledStat.record aligns a new window
// (KAFKA-15147); a window older than Samples×Window is dropped.
//
// The elapsed time is at least (Samples−1)×Window, as in Kafka's
// Rate.windowSize: a sensor that has just started does not read a few
// bytes as a huge rate. So right after start a quota lets up to that many
// windows' worth through at once, and then holds the average to the bound
// (Kafka's client quotas, ClientQuotaManager). A SimpleRate (NewSimpleRate)
// counts at least one window instead, which lets one window's worth through
// at start (Kafka's replication throttles, ReplicationQuotaManager).
//
// A Rate is safe for concurrent use.
type Rate struct {
	samples int
	window  int64 // ms
	// simple is Kafka's SimpleRate: the elapsed time is at least one
	// window rather than samples−1.
	simple bool

	mu      sync.Mutex
	buf     []sample
	current int
}

// sample is one window's total (Kafka's SampledStat.Sample).
type sample struct {
	start int64 // ms, Kafka's lastWindowMs
	total float64
}

// NewRate returns a rate over samples windows of window each (Kafka's
// quota.window.num and quota.window.size.seconds, or their replication.*
// twins). Values below 1 sample and 1 ms are raised to them.
func NewRate(samples int, window time.Duration) *Rate {
	return &Rate{samples: max(samples, 1), window: max(window.Milliseconds(), 1)}
}

// NewSimpleRate is NewRate with Kafka's SimpleRate.windowSize: the time
// elapsed since the oldest window began, at least one window.
func NewSimpleRate(samples int, window time.Duration) *Rate {
	r := NewRate(samples, window)
	r.simple = true
	return r
}

// Record adds v at now (SampledStat.record).
func (r *Rate) Record(v float64, now time.Time) {
	ms := now.UnixMilli()
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.currentLocked(ms)
	if ms-s.start >= r.window {
		// Advance to the next window, aligned to the window grid that
		// started with the previous one.
		prevEnd := s.start + r.window
		r.current = (r.current + 1) % r.samples
		if r.current >= len(r.buf) {
			r.buf = append(r.buf, sample{})
		}
		s = &r.buf[r.current]
		*s = sample{start: ms - (ms-prevEnd)%r.window}
	}
	s.total += v
}

func (r *Rate) currentLocked(ms int64) *sample {
	if len(r.buf) == 0 {
		r.buf = append(r.buf, sample{start: ms})
	}
	return &r.buf[r.current]
}

// Measure returns the rate per second at now (Rate.measure).
func (r *Rate) Measure(now time.Time) float64 {
	ms := now.UnixMilli()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.purgeLocked(ms)
	if len(r.buf) == 0 {
		return 0
	}
	var total float64
	for i := range r.buf {
		total += r.buf[i].total
	}
	return total / (float64(r.windowSizeLocked(ms)) / 1000)
}

// WindowSize is the time Measure divides by at now (Rate.windowSize):
// what a quota's throttle time is a fraction of (ClientQuotaManager's
// throttleTime).
func (r *Rate) WindowSize(now time.Time) time.Duration {
	ms := now.UnixMilli()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.purgeLocked(ms)
	return time.Duration(r.windowSizeLocked(ms)) * time.Millisecond
}

// windowSizeLocked is the elapsed time since the oldest window began, in
// ms, raised to the minimum (see Rate) and to 1 ms. mu is held, the
// windows purged.
func (r *Rate) windowSizeLocked(ms int64) int64 {
	oldest := ms
	for i := range r.buf {
		oldest = min(oldest, r.buf[i].start)
	}
	elapsed := ms - oldest
	if r.simple {
		elapsed = max(elapsed, r.window)
	} else if full, minFull := elapsed/r.window, int64(r.samples-1); full < minFull {
		elapsed += (minFull - full) * r.window
	}
	return max(elapsed, 1)
}

// purgeLocked resets the windows older than Samples×Window
// (SampledStat.purgeObsoleteSamples).
func (r *Rate) purgeLocked(ms int64) {
	expire := int64(r.samples) * r.window
	for i := range r.buf {
		if ms-r.buf[i].start >= expire {
			r.buf[i] = sample{start: ms}
		}
	}
}
