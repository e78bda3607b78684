package storage

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strait-io/strait/storage/clock"
)

// cleanerThrottleCheckInterval is how often the throttle measures the
// cleaner's IO rate (Kafka's LogCleaner passes 300 ms to its Throttler).
const cleanerThrottleCheckInterval = 300 * time.Millisecond

// ioThrottler holds the cleaner threads to log.cleaner.io.max.bytes.per.second
// (Kafka's Throttler): the bytes every thread reads and writes are counted,
// and once per check interval a thread that finds the rate above the limit
// sleeps until the average is back at it. The sleep happens under mu, so
// every thread waits, as in Kafka, where maybeThrottle sleeps inside its
// lock.
type ioThrottler struct {
	clock clock.Clock
	// rate is the limit in bytes per second as math.Float64bits, 0 for
	// none; atomic, so a new limit never waits for a throttled thread's
	// sleep (SetCleanerConfig runs on the metadata subscriber).
	rate atomic.Uint64

	mu          sync.Mutex
	periodStart time.Time
	observed    float64
}

func newIOThrottler(c clock.Clock, cfg CleanerConfig) *ioThrottler {
	t := &ioThrottler{clock: c, periodStart: c.Now()}
	t.setRate(cfg)
	return t
}

// setRate applies a new log.cleaner.io.max.bytes.per.second.
func (t *ioThrottler) setRate(cfg CleanerConfig) {
	var rate float64
	if cfg.ioLimited() {
		rate = cfg.IoMaxBytesPerSecond
	}
	t.rate.Store(math.Float64bits(rate))
}

// maybeThrottle counts n bytes and sleeps if the rate is over the limit;
// it returns early when ctx ends.
func (t *ioThrottler) maybeThrottle(ctx context.Context, n int64) {
	rate := math.Float64frombits(t.rate.Load())
	if rate <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.observed += float64(n)
	elapsed := t.clock.Now().Sub(t.periodStart)
	if elapsed < cleanerThrottleCheckInterval {
		return
	}
	// Sleep long enough that observed bytes over the whole period are at
	// the rate.
	if wait := time.Duration(t.observed/rate*float64(time.Second)) - elapsed; wait > 0 {
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		timer.Stop()
	}
	t.periodStart, t.observed = t.clock.Now(), 0
}
