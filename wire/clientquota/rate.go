// Package clientquota measures clients' usage against their quotas as
// Kafka's ClientQuotaManager does (KIP-13, KIP-124, KIP-219): a sensor per
// quota entity holds a rate over Samples windows of Window each, and a
// request that takes the rate past the quota gets a throttle time, in
// Kafka's formula, during which the server sends its response and then
// reads nothing more from the connection.
package clientquota

import (
	"math"
	"time"
)

// Window is the rate's sampling: quota.window.num samples of
// quota.window.size.seconds.
type Window struct {
	Samples int
	Size    time.Duration
}

// DefaultWindow is Kafka's default: 11 windows of 1 s.
var DefaultWindow = Window{Samples: 11, Size: time.Second}

// sample is one window of a rate (Kafka's SampledStat.Sample).
type sample struct {
	start time.Time // lastWindowMs
	value float64
}

// rate is Kafka's Rate over a WindowedSum: the sum of the samples not
// older than Samples windows, divided by the time they span, which counts
// as at least Samples-1 whole windows so that a new sensor does not see
// its first bytes as a burst over a tiny span.
type rate struct {
	w       Window
	samples []sample
	current int
}

func newRate(w Window) *rate { return &rate{w: w} }

// record adds v at now (SampledStat.record): into the current sample, or
// into the next one once the current window is over. A new window starts
// on the grid of window-sized steps from the end of the last one, not at
// now, so that the windows a rate spans are whole (KAFKA-15481): a window
// started at the first record after an idle spell would make the span
// look shorter than the time the samples hold, and let a throttled client
// through faster than its quota.
func (r *rate) record(v float64, now time.Time) {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, sample{start: now})
		r.current = 0
	}
	s := &r.samples[r.current]
	if now.Sub(s.start) >= r.w.Size {
		end := s.start.Add(r.w.Size)
		start := now.Add(-(now.Sub(end) % r.w.Size))
		r.current = (r.current + 1) % r.w.Samples
		if r.current >= len(r.samples) {
			r.samples = append(r.samples, sample{start: start})
		} else {
			r.samples[r.current] = sample{start: start}
		}
		s = &r.samples[r.current]
	}
	s.value += v
}

// purge resets the samples older than Samples windows
// (SampledStat.purgeObsoleteSamples).
func (r *rate) purge(now time.Time) {
	expire := time.Duration(r.w.Samples) * r.w.Size
	for i := range r.samples {
		if now.Sub(r.samples[i].start) >= expire {
			r.samples[i] = sample{start: now}
		}
	}
}

// windowSize is the span the rate divides by (Rate.windowSize).
func (r *rate) windowSize(now time.Time) time.Duration {
	r.purge(now)
	oldest := now
	for _, s := range r.samples {
		if s.start.Before(oldest) {
			oldest = s.start
		}
	}
	elapsed := now.Sub(oldest)
	full := int(elapsed / r.w.Size)
	if min := r.w.Samples - 1; full < min {
		elapsed += time.Duration(min-full) * r.w.Size
	}
	return elapsed
}

// measure is the rate per second at now (Rate.measure).
func (r *rate) measure(now time.Time) float64 {
	r.purge(now)
	var sum float64
	for _, s := range r.samples {
		sum += s.value
	}
	ws := r.windowSize(now).Seconds()
	if ws <= 0 {
		return 0
	}
	return sum / ws
}

// throttle is the time the client must wait so that its rate comes back
// to bound (ClientQuotaManager.throttleTime): the excess over the bound,
// as a fraction of it, times the window the rate spans; 0 when the rate
// is within the bound.
func (r *rate) throttle(bound float64, now time.Time) time.Duration {
	v := r.measure(now)
	if v <= bound || bound <= 0 {
		return 0
	}
	ms := (v - bound) / bound * float64(r.windowSize(now).Milliseconds())
	return time.Duration(math.Round(ms)) * time.Millisecond
}
