package storage

import (
	"context"
	"errors"
	"sort"
)

// CleanerOffsetCheckpointFile holds, per compacted partition of the log
// directory, the first offset the cleaner has not compacted (Kafka's
// LogCleanerManager checkpoint, in the OffsetCheckpointFile format).
const CleanerOffsetCheckpointFile = "cleaner-offset-checkpoint"

// DefaultCleanerBackoffMs is log.cleaner.backoff.ms's default.
const DefaultCleanerBackoffMs = 15000

// DefaultCleanerMaxBytesPerPass bounds how much one maintenance pass
// cleans: once the logs cleaned in a pass have read this many bytes, the
// rest wait for the next pass. Not a Kafka config: Kafka's cleaner threads
// run on their own, Strait's cleaner runs in the maintenance pass and must
// not hold it up for long.
const DefaultCleanerMaxBytesPerPass = 1 << 30

// CleanerConfig is the broker's log cleaner configuration (log.cleaner.*).
// The zero value is Kafka's defaults.
type CleanerConfig struct {
	// Disable turns compaction off (log.cleaner.enable=false).
	Disable bool
	// BackoffMs is how long the cleaner rests after a pass that found
	// nothing to clean (log.cleaner.backoff.ms); 0 means
	// DefaultCleanerBackoffMs.
	BackoffMs int64
	// DedupeBufferSize and LoadFactor bound the offset map
	// (log.cleaner.dedupe.buffer.size, log.cleaner.io.buffer.load.factor);
	// see CleanOptions.
	DedupeBufferSize int64
	LoadFactor       float64
	// MaxBytesPerPass is DefaultCleanerMaxBytesPerPass when 0.
	MaxBytesPerPass int64
}

// CleanerPass says what one CleanLogs call cleaned.
type CleanerPass struct {
	// Cleaned lists the logs cleaned, dirtiest first, with what each
	// cleaning did.
	Cleaned []CleanedLog
	// Skipped is set when the pass did nothing because the cleaner is
	// disabled or resting after a pass that found nothing to clean.
	Skipped bool
}

// CleanedLog is one log's cleaning in a pass.
type CleanedLog struct {
	TopicPartition
	DirtyRatio float64
	CleanResult
}

// CleanLogs runs one pass of the log cleaner: it cleans the compacted logs
// whose dirty ratio is above min.cleanable.dirty.ratio, or whose dirty
// records have waited longer than max.compaction.lag.ms, dirtiest first
// (Kafka's grabFilthiestCompactedLog, repeated), until the pass has read
// CleanerConfig.MaxBytesPerPass bytes. After a pass that found nothing to
// clean it rests for log.cleaner.backoff.ms. RunMaintenance calls it.
//
// A log the cleaner cannot clean because of its data (a corrupt batch) is
// skipped from then on, as Kafka marks a partition uncleanable; an IO
// failure fails the log.
func (m *LogManager) CleanLogs(ctx context.Context) (CleanerPass, error) {
	cc := m.opts.Cleaner
	if cc.Disable {
		return CleanerPass{Skipped: true}, nil
	}
	m.cleanerMu.Lock()
	defer m.cleanerMu.Unlock()
	nowMs := m.opts.Clock.Now().UnixMilli()
	if nowMs < m.cleanerRestUntil {
		return CleanerPass{Skipped: true}, nil
	}
	type candidate struct {
		tp    TopicPartition
		l     *Log
		ratio float64
	}
	var due []candidate
	for tp, l := range m.Logs() {
		cfg := l.Config()
		if !cfg.CleanupPolicy.Compact || m.uncleanable[tp] || l.check() != nil {
			continue
		}
		info := l.CleanableInfo()
		if info.CleanBytes+info.CleanableBytes == 0 {
			continue
		}
		ratio := info.DirtyRatio()
		if (info.NeedCompactionNow && info.CleanableBytes > 0) || ratio > cfg.MinCleanableRatio {
			due = append(due, candidate{tp, l, ratio})
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if due[i].ratio != due[j].ratio {
			return due[i].ratio > due[j].ratio
		}
		return due[i].tp.String() < due[j].tp.String()
	})
	budget := cc.MaxBytesPerPass
	if budget <= 0 {
		budget = DefaultCleanerMaxBytesPerPass
	}
	var (
		pass CleanerPass
		errs []error
		read int64
	)
	for _, c := range due {
		if read >= budget || ctx.Err() != nil {
			break
		}
		res, err := c.l.Clean(ctx, CleanOptions{DedupeBufferSize: cc.DedupeBufferSize, LoadFactor: cc.LoadFactor})
		read += res.BytesRead
		if err != nil {
			var se *StorageError
			if !errors.As(err, &se) && !errors.Is(err, ErrLogClosed) && ctx.Err() == nil {
				m.logger.Error("marking partition uncleanable", "partition", c.tp, "err", err)
				m.uncleanable[c.tp] = true
			}
			errs = append(errs, err)
			continue
		}
		if res.Aborted {
			continue
		}
		pass.Cleaned = append(pass.Cleaned, CleanedLog{TopicPartition: c.tp, DirtyRatio: c.ratio, CleanResult: res})
	}
	if len(due) > 0 {
		// doneCleaning: the new checkpoints are written at once, so a
		// restart does not clean the same range again.
		errs = append(errs, m.writeCleanerCheckpoint())
	} else {
		backoff := cc.BackoffMs
		if backoff <= 0 {
			backoff = DefaultCleanerBackoffMs
		}
		m.cleanerRestUntil = nowMs + backoff
	}
	return pass, errors.Join(errs...)
}

// writeCleanerCheckpoint writes every log's cleaner checkpoint.
func (m *LogManager) writeCleanerCheckpoint() error {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	return writeOffsetCheckpoint(m.opts.FS, m.dir, CleanerOffsetCheckpointFile, m.cleanerCheckpoints(m.Logs()))
}

// cleanerCheckpoints lists the logs that have been cleaned.
func (m *LogManager) cleanerCheckpoints(logs map[TopicPartition]*Log) map[TopicPartition]int64 {
	out := map[TopicPartition]int64{}
	for tp, l := range logs {
		if cp := l.CleanerCheckpoint(); cp > 0 {
			out[tp] = cp
		}
	}
	return out
}
