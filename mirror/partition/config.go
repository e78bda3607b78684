package partition

import (
	"fmt"
	"time"
)

// Rand is the jitter source, injected so a simulation is reproducible from
// its seed. *math/rand/v2.Rand satisfies it.
type Rand interface {
	// Int64N returns a uniform value in [0, n); n > 0.
	Int64N(n int64) int64
}

// Config tunes one machine. Zero durations and attempts take the defaults;
// Rand is required.
type Config struct {
	// RetryInitialBackoff, RetryMaxBackoff, RetryMaxAttempts: FAILED retries
	// (broker configs mirror.failed.retry.initial.backoff.ms = 100,
	// mirror.failed.retry.max.backoff.ms = 300000,
	// mirror.failed.retry.max.attempts = 20, digest §5.2). Attempt n waits
	// full jitter, uniform in [0, min(max, initial·2^(n−1))].
	// RetryMaxAttempts < 0 means no automatic retries (the broker config's
	// 0; use NoAutomaticRetries).
	RetryInitialBackoff time.Duration
	RetryMaxBackoff     time.Duration
	RetryMaxAttempts    int32
	// RetryResetAfter: a failure after the fetcher ran this long counts as
	// attempt 1 again, so a partition that fails once a day is not
	// eventually given up on. Defaults to RetryMaxBackoff.
	RetryResetAfter time.Duration
	// StepInitialBackoff, StepMaxBackoff: retrying one effect after a
	// retriable error (coordinator moving, source unreachable), full jitter
	// as above, unlimited attempts. Ours; defaults 100ms and 10s.
	StepInitialBackoff time.Duration
	StepMaxBackoff     time.Duration
	// WaitAllReplicas: PREPARING waits for every replica, not only the ISR
	// (mirror.support.unclean.leader.election=true).
	WaitAllReplicas bool
	Rand            Rand
}

// NoAutomaticRetries is RetryMaxAttempts for mirror.failed.retry.max.attempts=0.
const NoAutomaticRetries int32 = -1

const (
	DefaultRetryInitialBackoff = 100 * time.Millisecond
	DefaultRetryMaxBackoff     = 300 * time.Second
	DefaultRetryMaxAttempts    = 20
	DefaultStepInitialBackoff  = 100 * time.Millisecond
	DefaultStepMaxBackoff      = 10 * time.Second
)

func (c Config) withDefaults() Config {
	if c.RetryInitialBackoff == 0 {
		c.RetryInitialBackoff = DefaultRetryInitialBackoff
	}
	if c.RetryMaxBackoff == 0 {
		c.RetryMaxBackoff = DefaultRetryMaxBackoff
	}
	if c.RetryMaxAttempts == 0 {
		c.RetryMaxAttempts = DefaultRetryMaxAttempts
	}
	if c.RetryResetAfter == 0 {
		c.RetryResetAfter = c.RetryMaxBackoff
	}
	if c.StepInitialBackoff == 0 {
		c.StepInitialBackoff = DefaultStepInitialBackoff
	}
	if c.StepMaxBackoff == 0 {
		c.StepMaxBackoff = DefaultStepMaxBackoff
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Rand == nil:
		return fmt.Errorf("%w: Rand is required", ErrInvalidConfig)
	case c.RetryInitialBackoff < time.Millisecond || c.RetryMaxBackoff < c.RetryInitialBackoff:
		return fmt.Errorf("%w: retry backoff %s..%s", ErrInvalidConfig, c.RetryInitialBackoff, c.RetryMaxBackoff)
	case c.StepInitialBackoff < time.Millisecond || c.StepMaxBackoff < c.StepInitialBackoff:
		return fmt.Errorf("%w: step backoff %s..%s", ErrInvalidConfig, c.StepInitialBackoff, c.StepMaxBackoff)
	case c.RetryResetAfter < 0:
		return fmt.Errorf("%w: negative RetryResetAfter", ErrInvalidConfig)
	}
	return nil
}

// Backoff is the ceiling of the n-th (1-based) attempt's delay:
// min(max, initial·2^(n−1)).
func Backoff(initial, max time.Duration, n int) time.Duration {
	b := initial
	for i := 1; i < n && b < max; i++ {
		b *= 2
	}
	return min(b, max)
}

// jitter is full jitter (uniform in [0, ceiling]) at millisecond
// granularity, as the mirror.failed.retry.* docs describe.
func jitter(r Rand, ceiling time.Duration) time.Duration {
	return time.Duration(r.Int64N(ceiling.Milliseconds()+1)) * time.Millisecond
}
