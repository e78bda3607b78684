package storage

import (
	"errors"
)

// RetentionResult says what a retention pass deleted.
type RetentionResult struct {
	Segments                   int
	Bytes                      int64
	NewLogStart                int64
	ByTime, BySize, ByLogStart int
}

// DeleteOldSegments applies retention.ms, retention.bytes and the log start
// offset (Kafka's deleteOldSegments) when cleanup.policy includes delete;
// a log start offset moved by DeleteRecords is honoured under any policy.
// Only whole segments below the high watermark are deleted, oldest first,
// and the log always keeps an active segment: if every segment goes, an
// empty one is rolled at the log end offset first.
func (l *Log) DeleteOldSegments() (RetentionResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return RetentionResult{}, err
	}
	var res RetentionResult
	nowMs := l.clock.Now().UnixMilli()
	cfg := l.config
	// Three passes, as Kafka runs them: log start offset, size, time.
	n, err := l.deleteSegmentsWhile(&res, func(s, next *LogSegment) bool {
		return next != nil && next.baseOffset <= l.logStartOffset.Load()
	})
	res.ByLogStart = n
	if err != nil || !cfg.CleanupPolicy.Delete {
		return res, err
	}
	if cfg.RetentionBytes >= 0 {
		excess := l.Size() - cfg.RetentionBytes
		n, err = l.deleteSegmentsWhile(&res, func(s, _ *LogSegment) bool {
			if excess-s.Size() < 0 {
				return false
			}
			excess -= s.Size()
			return true
		})
		res.BySize = n
		if err != nil {
			return res, err
		}
	}
	if cfg.RetentionMs >= 0 {
		n, err = l.deleteSegmentsWhile(&res, func(s, _ *LogSegment) bool {
			return nowMs-s.largestTimestamp() > cfg.RetentionMs
		})
		res.ByTime = n
	}
	return res, err
}

// deleteSegmentsWhile deletes segments from the oldest while pred holds
// (Kafka's deletableSegments + deleteSegments). A segment is only deletable
// when everything in it is below the high watermark, and the last segment
// only when it is not empty.
func (l *Log) deleteSegmentsWhile(res *RetentionResult, pred func(s, next *LogSegment) bool) (int, error) {
	segs := l.segs()
	hw := l.HighWatermark()
	leo := l.logEndOffset()
	var doomed []*LogSegment
	for i, s := range segs {
		var next *LogSegment
		end := leo
		if i+1 < len(segs) {
			next, end = segs[i+1], segs[i+1].baseOffset
		}
		if (next == nil && s.Size() == 0) || end > hw || !pred(s, next) {
			break
		}
		doomed = append(doomed, s)
	}
	if len(doomed) == 0 {
		return 0, nil
	}
	var bytes int64
	for _, s := range doomed {
		bytes += s.Size()
	}
	if len(doomed) == len(segs) {
		// Never leave the log without an active segment (Kafka rolls here).
		if _, err := l.rollLocked(leo); err != nil {
			return 0, err
		}
		segs = l.segs()
	}
	// Readers see the log start offset move past the doomed segments
	// before the segments leave the list, as Kafka's deleteSegments raises
	// it "before removing the segment for lookups": Read loads the list
	// before the log start, so a reader that misses the segments also
	// sees the new log start and answers OFFSET_OUT_OF_RANGE below it. The
	// other order let its range check pass an offset whose segment was
	// gone. The epoch cache is truncated only once the segments are renamed
	// for deletion: a crash in between must find both (crash_test.go).
	first := segs[len(doomed)].baseOffset
	raised := first > l.logStartOffset.Load()
	if raised {
		l.logStartOffset.Store(first)
	}
	l.setSegments(append([]*LogSegment(nil), segs[len(doomed):]...))
	if err := l.scheduleDeletionLocked(doomed); err != nil {
		return 0, err
	}
	if raised {
		if err := l.afterLogStartMovedLocked(first); err != nil {
			return 0, err
		}
	}
	if err := l.producers.DeleteSnapshotsBefore(first); err != nil {
		return 0, l.fail("delete producer snapshots", err)
	}
	res.Segments += len(doomed)
	res.Bytes += bytes
	res.NewLogStart = l.logStartOffset.Load()
	l.logger.Info("deleted segments by retention", "segments", len(doomed), "bytes", bytes, "logStartOffset", res.NewLogStart)
	return len(doomed), nil
}

// scheduleDeletionLocked renames segments to .deleted and queues their
// removal after file.delete.delay.ms, so reads that already hold one of
// their file slices finish (Kafka's asynchronous segment deletion). The
// caller has already taken them out of the segment list.
func (l *Log) scheduleDeletionLocked(doomed []*LogSegment) error {
	due := l.clock.Now().UnixMilli() + l.config.FileDeleteDelayMs
	for _, s := range doomed {
		if err := s.renameForDeletion(); err != nil {
			return l.fail("delete segment", err)
		}
		l.pendingDeletes = append(l.pendingDeletes, pendingDelete{seg: s, dueMs: due})
	}
	if len(doomed) > 0 {
		if err := l.fsys.SyncDir(l.dir); err != nil {
			return l.fail("delete segment", err)
		}
	}
	return l.removeDueDeletesLocked(l.clock.Now().UnixMilli())
}

// RemoveDeletedSegments removes the files of segments whose deletion delay
// has passed; the broker's scheduler calls it.
func (l *Log) RemoveDeletedSegments() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.removeDueDeletesLocked(l.clock.Now().UnixMilli())
}

func (l *Log) removeDueDeletesLocked(nowMs int64) error {
	var errs []error
	kept := l.pendingDeletes[:0]
	for _, pd := range l.pendingDeletes {
		if pd.dueMs > nowMs {
			kept = append(kept, pd)
			continue
		}
		errs = append(errs, pd.seg.deleteFiles())
	}
	l.pendingDeletes = kept
	if err := errors.Join(errs...); err != nil {
		return l.fail("remove deleted segment", err)
	}
	return nil
}
