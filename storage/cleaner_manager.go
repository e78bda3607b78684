package storage

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"
)

// CleanerOffsetCheckpointFile holds, per compacted partition of the log
// directory, the first offset the cleaner has not compacted (Kafka's
// LogCleanerManager checkpoint, in the OffsetCheckpointFile format).
const CleanerOffsetCheckpointFile = "cleaner-offset-checkpoint"

// DefaultCleanerBackoffMs is log.cleaner.backoff.ms's default.
const DefaultCleanerBackoffMs = 15000

// CleanerConfig is the broker's log cleaner configuration (log.cleaner.*).
// The zero value is Kafka's defaults. SetCleanerConfig changes it at
// runtime, as Kafka's LogCleaner.reconfigure does for the keys it lists
// in LogCleaner.ReconfigurableConfigs.
type CleanerConfig struct {
	// Disable turns compaction off (log.cleaner.enable=false, or
	// log.cleaner.threads=0: no cleaner thread runs).
	Disable bool
	// Threads is log.cleaner.threads: how many logs are cleaned at once;
	// 0 means 1, Kafka's default.
	Threads int
	// BackoffMs is how long a cleaner thread rests after finding nothing
	// to clean (log.cleaner.backoff.ms); 0 means DefaultCleanerBackoffMs.
	BackoffMs int64
	// DedupeBufferSize and LoadFactor bound the offset map
	// (log.cleaner.dedupe.buffer.size, log.cleaner.io.buffer.load.factor);
	// see CleanOptions. The buffer size is the total over every thread:
	// each cleaning gets its share, as Kafka gives each CleanerThread
	// dedupeBufferSize / numThreads.
	DedupeBufferSize int64
	LoadFactor       float64
	// IoMaxBytesPerSecond is log.cleaner.io.max.bytes.per.second: the
	// cleaner threads together read and write at most this many bytes per
	// second on average; 0, a negative value or +Inf means no limit
	// (Kafka's default is Double.MAX_VALUE).
	IoMaxBytesPerSecond float64
}

func (c CleanerConfig) threads() int {
	if c.Disable {
		return 0
	}
	return max(c.Threads, 1)
}

func (c CleanerConfig) backoffMs() int64 {
	if c.BackoffMs <= 0 {
		return DefaultCleanerBackoffMs
	}
	return c.BackoffMs
}

// cleanOptions are one cleaning's bounds under this config.
func (c CleanerConfig) cleanOptions(throttle func(context.Context, int64)) CleanOptions {
	buf := c.DedupeBufferSize
	if buf <= 0 {
		buf = DefaultDedupeBufferSize
	}
	return CleanOptions{
		DedupeBufferSize: max(buf/int64(max(c.Threads, 1)), 1),
		LoadFactor:       c.LoadFactor,
		Throttle:         throttle,
	}
}

func (c CleanerConfig) ioLimited() bool {
	return c.IoMaxBytesPerSecond > 0 && c.IoMaxBytesPerSecond < math.MaxFloat64
}

// cleanerManager is what Kafka's LogCleanerManager keeps: which logs a
// cleaner thread is cleaning (so two threads never take the same one) and
// which it gave up on. mu guards the fields; no log lock is taken under it
// except briefly to read a log's config.
type cleanerManager struct {
	mu          sync.Mutex
	inProgress  map[TopicPartition]bool
	uncleanable map[TopicPartition]bool
	stats       CleanerStats
}

// CleanerStats are the log cleaner's figures, for metrics (Kafka's
// LogCleaner and LogCleanerManager gauges).
type CleanerStats struct {
	// Threads is how many cleaner threads run.
	Threads int
	// MaxDirtyRatio is the dirty ratio of the dirtiest compacted log at
	// the last look for work, due or not (max-dirty-percent / 100).
	MaxDirtyRatio float64
	// LastRun is when a thread last looked for work (time-since-last-run-ms);
	// zero before the first look.
	LastRun time.Time
	// UncleanablePartitions counts the logs the cleaner gave up on
	// (uncleanable-partitions-count).
	UncleanablePartitions int
	// Cleanings counts cleanings that did work; BytesRead and
	// BytesWritten sum their segments' sizes before and after.
	Cleanings               int64
	BytesRead, BytesWritten int64
}

// CleanerStats returns the cleaner's figures now.
func (m *LogManager) CleanerStats() CleanerStats {
	cm := &m.cleaner
	cm.mu.Lock()
	st := cm.stats
	st.UncleanablePartitions = len(cm.uncleanable)
	cm.mu.Unlock()
	t := &m.cleanerThreads
	t.mu.Lock()
	st.Threads = len(t.cancels)
	t.mu.Unlock()
	return st
}

// CleanedLog is one log's cleaning by CleanFilthiestLog.
type CleanedLog struct {
	TopicPartition
	DirtyRatio float64
	CleanResult
}

// cleanable is a log grabbed for cleaning (Kafka's LogToClean).
type cleanable struct {
	tp    TopicPartition
	l     *Log
	info  CleanableInfo
	ratio float64
}

// cleanableLogs returns the compacted logs a cleaner thread may take now
// (Kafka's grabFilthiestCompactedLog before it picks one): neither being
// cleaned by another thread nor uncleanable, with some data below their
// first uncleanable offset, and either dirtier than their
// min.cleanable.dirty.ratio (strictly, as Kafka compares) or holding dirty
// bytes older than max.compaction.lag.ms. min.compaction.lag.ms is in the
// first uncleanable offset (CleanableInfo). It records the look in the
// stats. cm.mu is held.
func (m *LogManager) cleanableLogs() []cleanable {
	var out []cleanable
	now := m.opts.Clock.Now()
	m.cleaner.stats.LastRun, m.cleaner.stats.MaxDirtyRatio = now, 0
	for tp, l := range m.Logs() {
		if m.cleaner.inProgress[tp] || m.cleaner.uncleanable[tp] || l.check() != nil {
			continue
		}
		cfg := l.Config()
		if !cfg.CleanupPolicy.Compact {
			continue
		}
		info := l.cleanableInfo(l.segs(), cfg, now.UnixMilli())
		if info.CleanBytes+info.CleanableBytes == 0 {
			continue
		}
		ratio := info.DirtyRatio()
		m.cleaner.stats.MaxDirtyRatio = max(m.cleaner.stats.MaxDirtyRatio, ratio)
		if (info.NeedCompactionNow && info.CleanableBytes > 0) || ratio > cfg.MinCleanableRatio {
			out = append(out, cleanable{tp, l, info, ratio})
		}
	}
	return out
}

// grabFilthiestLog picks the dirtiest cleanable log (ties by name, so the
// choice is deterministic) and marks it in progress.
func (m *LogManager) grabFilthiestLog() (cleanable, bool) {
	cm := &m.cleaner
	cm.mu.Lock()
	defer cm.mu.Unlock()
	var best cleanable
	found := false
	for _, c := range m.cleanableLogs() {
		if !found || c.ratio > best.ratio || (c.ratio == best.ratio && c.tp.String() < best.tp.String()) {
			best, found = c, true
		}
	}
	if found {
		cm.inProgress[best.tp] = true
	}
	return best, found
}

// CleanFilthiestLog is one step of a cleaner thread (Kafka's
// CleanerThread.cleanFilthiestLog): it cleans the dirtiest log that is due
// and reports whether it did. A log the cleaner cannot clean
// because of its data (a corrupt batch) is skipped from then on, as Kafka
// marks a partition uncleanable, and the step reports no cleaning; an IO
// failure fails the log. The cleaner checkpoint file is written after each
// cleaning (Kafka's doneCleaning), so a restart does not clean the same
// range again.
func (m *LogManager) CleanFilthiestLog(ctx context.Context) (CleanedLog, bool, error) {
	c, ok := m.grabFilthiestLog()
	if !ok {
		return CleanedLog{}, false, nil
	}
	res, err := c.l.Clean(ctx, m.cleanerConfig().cleanOptions(m.throttler.maybeThrottle))
	cm := &m.cleaner
	cm.mu.Lock()
	delete(cm.inProgress, c.tp)
	uncleanable := false
	if err != nil {
		var se *StorageError
		if !errors.As(err, &se) && !errors.Is(err, ErrLogClosed) && ctx.Err() == nil {
			m.logger.Error("marking partition uncleanable", "partition", c.tp, "err", err)
			cm.uncleanable[c.tp] = true
			uncleanable = true
		}
	}
	if err == nil && !res.Aborted && res.EndOffset > res.FirstDirtyOffset {
		cm.stats.Cleanings++
		cm.stats.BytesRead += res.BytesRead
		cm.stats.BytesWritten += res.BytesWritten
	}
	cm.mu.Unlock()
	// A cleaning that found nothing to do after all (the log changed since
	// it was picked) counts as none, so the thread rests rather than pick
	// the same log again at once.
	worked := err != nil || res.Aborted || res.EndOffset > res.FirstDirtyOffset
	err = errors.Join(err, m.writeCleanerCheckpoint())
	return CleanedLog{TopicPartition: c.tp, DirtyRatio: c.ratio, CleanResult: res}, worked && !uncleanable, err
}

// writeCleanerCheckpoint writes every log directory's cleaner checkpoint.
func (m *LogManager) writeCleanerCheckpoint() error {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	return m.writeCheckpoints(cleanerOffsetCheckpoint)
}
