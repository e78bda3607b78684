package storage

import (
	"fmt"
)

// TruncateTo removes every record at or after target: segments above it are
// deleted, the segment holding it is cut at the batch that contains target,
// and the epoch cache and producer state are brought back to match (Kafka's
// UnifiedLog.truncateTo). It reports whether anything was removed. A target
// below the log start offset empties the log and restarts it there.
func (l *Log) TruncateTo(target int64) (bool, error) {
	if target < 0 {
		return false, fmt.Errorf("storage: cannot truncate %s to negative offset %d", l.dir, target)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return false, err
	}
	if target >= l.logEndOffset() {
		return false, nil
	}
	if target < l.logStartOffset.Load() {
		return true, l.truncateFullyAndStartAtLocked(target)
	}
	segs := l.segs()
	keep := segs[:0:0]
	var doomed []*LogSegment
	for _, s := range segs {
		if s.baseOffset > target {
			doomed = append(doomed, s)
		} else {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return true, l.truncateFullyAndStartAtLocked(target)
	}
	l.truncations++
	if l.cleanerCheckpoint.Load() > target {
		// What was cleaned above target is gone (Kafka's
		// maybeTruncateCheckpoint).
		l.cleanerCheckpoint.Store(target)
	}
	l.setSegments(keep)
	if err := l.scheduleDeletionLocked(doomed); err != nil {
		return true, err
	}
	active := keep[len(keep)-1]
	if _, err := active.truncateTo(target); err != nil {
		return true, l.fail("truncate", err)
	}
	// A closed segment becomes the active one, appended to in place: if a
	// drill clone shares it, it needs its own copy first (cow.go), even
	// when target fell on its end and nothing was cut.
	if err := active.privatize(active.Size()); err != nil {
		return true, l.fail("truncate", err)
	}
	l.setLogEndOffsetLocked(target, keep[len(keep)-1])
	if err := l.epochs.TruncateFromEnd(target); err != nil {
		return true, l.fail("epoch checkpoint", err)
	}
	if l.highWatermark.Load() > target {
		l.setHighWatermarkLocked(target)
	}
	if rp := l.RecoveryPoint(); rp > target {
		l.setRecoveryPoint(target)
	}
	l.unflushedMessages = 0
	if err := l.rebuildProducerState(target); err != nil {
		return true, l.fail("rebuild producer state", err)
	}
	// The rebuild replays ended transactions as unreplicated; those whose
	// marker is below the high watermark are not (Kafka updates the high
	// watermark after the rebuild for the same reason).
	l.producers.OnHighWatermarkUpdated(l.highWatermark.Load())
	l.refreshFirstUnstable()
	l.forgetPositionsLocked()
	return true, nil
}

// TruncateFullyAndStartAt deletes every segment and restarts the log empty
// at offset: log start, log end, high watermark and recovery point all
// become offset (Kafka's truncateFullyAndStartAt). Followers use it when
// the leader's log starts past theirs; the mirror when the source's does.
func (l *Log) TruncateFullyAndStartAt(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("storage: cannot restart %s at negative offset %d", l.dir, offset)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return err
	}
	return l.truncateFullyAndStartAtLocked(offset)
}

func (l *Log) truncateFullyAndStartAtLocked(offset int64) error {
	l.truncations++
	l.cleanerCheckpoint.Store(offset)
	if err := l.replaceAllSegmentsLocked(offset); err != nil {
		return err
	}
	if err := l.epochs.Clear(); err != nil {
		return l.fail("epoch checkpoint", err)
	}
	if err := l.producers.TruncateFullyAndStartAt(offset); err != nil {
		return l.fail("producer snapshot", err)
	}
	l.setLogEndOffsetLocked(offset, l.activeSegment())
	l.logStartOffset.Store(offset)
	l.highWatermark.Store(offset)
	l.producers.OnHighWatermarkUpdated(offset)
	l.refreshFirstUnstable()
	l.forgetPositionsLocked()
	l.setRecoveryPoint(offset)
	l.unflushedMessages = 0
	return nil
}

// replaceAllSegmentsLocked schedules every segment for deletion and starts
// a new empty one at offset.
func (l *Log) replaceAllSegmentsLocked(offset int64) error {
	doomed := l.segs()
	// Rename first: the new segment may reuse a doomed one's file names.
	if err := l.scheduleDeletionLocked(doomed); err != nil {
		return err
	}
	s, err := l.newSegment(offset)
	if err != nil {
		return l.fail("create segment", err)
	}
	if err := l.fsys.SyncDir(l.dir); err != nil {
		return l.fail("create segment", err)
	}
	l.setSegments([]*LogSegment{s})
	return nil
}

// MaybeIncrementLogStartOffset moves the log start offset up to offset
// (DeleteRecords, or retention after deleting segments). Records below it
// are no longer readable; whole segments below it are deleted by the next
// retention pass. Moving it past the high watermark is OFFSET_OUT_OF_RANGE,
// as in Kafka.
func (l *Log) MaybeIncrementLogStartOffset(offset int64) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return false, err
	}
	return l.maybeIncrementLogStartOffsetLocked(offset, true)
}

func (l *Log) maybeIncrementLogStartOffsetLocked(offset int64, checkHW bool) (bool, error) {
	if checkHW && offset > l.HighWatermark() {
		return false, &OffsetOutOfRangeError{Offset: offset, LogStartOffset: l.logStartOffset.Load(), LogEndOffset: l.HighWatermark(),
			Dir: l.dir, What: "cannot move the log start offset past the high watermark"}
	}
	if offset <= l.logStartOffset.Load() {
		return false, nil
	}
	l.logStartOffset.Store(offset)
	return true, l.afterLogStartMovedLocked(offset)
}

// afterLogStartMovedLocked brings the epoch cache and the producer state
// to a log start offset just raised to offset. mu is held.
func (l *Log) afterLogStartMovedLocked(offset int64) error {
	if err := l.epochs.TruncateFromStart(offset); err != nil {
		return l.fail("epoch checkpoint", err)
	}
	l.producers.OnLogStartOffsetIncremented(offset)
	l.refreshFirstUnstable()
	return nil
}
