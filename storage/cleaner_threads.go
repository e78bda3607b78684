package storage

import (
	"context"
	"sync"
	"time"
)

// cleanerThreads are the log cleaner's goroutines (Kafka's LogCleaner and
// its CleanerThreads): each cleans the dirtiest log that is due, again and
// again, and rests for log.cleaner.backoff.ms when none is. They run on
// their own schedule, not in the maintenance pass of
// log.retention.check.interval.ms, and never on a request path.
type cleanerThreads struct {
	mu      sync.Mutex
	cfg     CleanerConfig
	started bool
	// cancels stops each running thread; a thread stopped while it
	// cleans aborts the cleaning, which leaves the log as it was.
	cancels []context.CancelFunc
	// wake is closed, and replaced, to cut the threads' rest short when
	// the config changes (a shorter backoff applies at once).
	wake chan struct{}
	wg   sync.WaitGroup
}

// cleanerConfig returns the cleaner's current configuration.
func (m *LogManager) cleanerConfig() CleanerConfig {
	t := &m.cleanerThreads
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cfg
}

// StartCleaner starts the cleaner threads (log.cleaner.threads of them,
// none when the cleaner is disabled). The broker calls it once the first
// metadata image gave every log its topic's config: a log opened with the
// broker defaults must not be compacted, as Kafka's LogManager starts its
// cleaner only then (BrokerMetadataPublisher). Close stops them.
// Calling it again does nothing.
func (m *LogManager) StartCleaner() {
	t := &m.cleanerThreads
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started || m.ctx.Err() != nil {
		return
	}
	t.started = true
	m.resizeCleanerLocked()
}

// SetCleanerConfig applies a new cleaner configuration (a dynamic change
// of log.cleaner.threads, backoff.ms, dedupe.buffer.size,
// io.buffer.load.factor or io.max.bytes.per.second, as Kafka's
// LogCleaner.reconfigure): running threads are added or stopped to match
// log.cleaner.threads, resting ones wake to pick up the new backoff, and
// the next cleaning uses the new buffer and rate. It does not block.
func (m *LogManager) SetCleanerConfig(c CleanerConfig) {
	m.throttler.setRate(c)
	t := &m.cleanerThreads
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cfg = c
	if t.started {
		m.resizeCleanerLocked()
	}
	close(t.wake)
	t.wake = make(chan struct{})
}

// resizeCleanerLocked starts or stops threads until as many run as the
// config asks. t.mu is held.
func (m *LogManager) resizeCleanerLocked() {
	t := &m.cleanerThreads
	want := t.cfg.threads()
	for len(t.cancels) > want {
		last := len(t.cancels) - 1
		t.cancels[last]()
		t.cancels = t.cancels[:last]
	}
	for len(t.cancels) < want {
		ctx, cancel := context.WithCancel(m.ctx)
		t.cancels = append(t.cancels, cancel)
		t.wg.Add(1)
		go m.runCleanerThread(ctx, len(t.cancels)-1)
	}
}

// stopCleaner stops the threads and waits for them (Close, Abandon).
func (m *LogManager) stopCleaner() {
	t := &m.cleanerThreads
	t.mu.Lock()
	t.started = false
	for _, cancel := range t.cancels {
		cancel()
	}
	t.cancels = nil
	t.mu.Unlock()
	t.wg.Wait()
}

// runCleanerThread is CleanerThread.doWork in a loop.
func (m *LogManager) runCleanerThread(ctx context.Context, id int) {
	t := &m.cleanerThreads
	defer t.wg.Done()
	logger := m.logger.With("cleanerThread", id)
	for ctx.Err() == nil {
		c, cleaned, err := m.CleanFilthiestLog(ctx)
		if err != nil && ctx.Err() == nil {
			logger.Warn("log cleaning failed", "partition", c.TopicPartition, "err", err)
		}
		if cleaned {
			continue
		}
		t.mu.Lock()
		backoff, wake := time.Duration(t.cfg.backoffMs())*time.Millisecond, t.wake
		t.mu.Unlock()
		timer := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
		case <-timer.C:
		case <-wake:
		}
		timer.Stop()
	}
}
