package storage

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// flusher makes fsync a shared, coalescing operation (group commit). An
// appender that needs its data durable calls flushUpTo(offset). If a flush
// that covers offset is running it waits for it; otherwise it becomes the
// flusher and syncs everything appended so far, which covers every appender
// that arrived meanwhile. Eight concurrent appenders with flush.messages=1
// thus share a handful of fsyncs instead of paying eight.
//
// The flusher never holds the log's mu while it syncs, so appends continue
// during an fsync and join the next one.
type flusher struct {
	mu       sync.Mutex
	cond     *sync.Cond
	flushing bool
	// groupCommit is set when flush.messages makes appends wait for a
	// flush. started and done count such appends: a new flusher first
	// waits for the appends already under way, so one fsync covers them
	// all. Without that wait the appender that just finished a flush
	// re-appends and starts the next flush alone, and batches alternate
	// 1, 8, 1, 8 instead of covering all eight appenders.
	groupCommit   atomic.Bool
	started, done int64 // guarded by mu
	// recoveryPoint is the offset below which everything is durable
	// (Kafka's recoveryPoint); recovery rescans from it after a crash.
	recoveryPoint int64
}

func (f *flusher) init() { f.cond = sync.NewCond(&f.mu) }

// appendStarted and appendDone bracket an append that will wait for a
// flush (see groupCommit).
func (f *flusher) appendStarted() bool {
	if !f.groupCommit.Load() {
		return false
	}
	f.mu.Lock()
	f.started++
	f.mu.Unlock()
	return true
}

func (f *flusher) appendDone() {
	f.mu.Lock()
	f.done++
	f.cond.Broadcast()
	f.mu.Unlock()
}

// RecoveryPoint is the offset below which the log is known to be flushed.
func (l *Log) RecoveryPoint() int64 {
	l.flush.mu.Lock()
	defer l.flush.mu.Unlock()
	return l.flush.recoveryPoint
}

// Flush makes everything appended so far durable.
func (l *Log) Flush() error {
	return l.flushUpTo(l.logEndOffset())
}

// flushUpTo returns once every offset below target is durable.
func (l *Log) flushUpTo(target int64) error {
	f := &l.flush
	f.mu.Lock()
	for {
		if err := l.check(); err != nil {
			f.mu.Unlock()
			return err
		}
		if f.recoveryPoint >= target {
			f.mu.Unlock()
			return nil
		}
		if !f.flushing {
			break
		}
		f.cond.Wait()
	}
	f.flushing = true
	if f.groupCommit.Load() {
		// Let appenders that were just woken by the previous flush start
		// their next append before deciding what this flush waits for; on
		// two cores they would otherwise still be runnable but not yet
		// counted.
		f.mu.Unlock()
		runtime.Gosched()
		f.mu.Lock()
		for want := f.started; f.done < want; {
			f.cond.Wait()
		}
	}
	from := f.recoveryPoint
	f.mu.Unlock()

	// Everything appended up to now is covered, not just target: that is
	// what lets waiting appenders share this fsync.
	goal := l.logEndOffset()
	err := l.syncNewDirs()
	if err == nil {
		// The recovery point may pass an epoch entry only once it is
		// in the checkpoint (epoch.Cache.AssignDeferred).
		err = l.epochs.Flush()
	}
	if err == nil {
		err = l.syncSegments(from, goal)
	}

	f.mu.Lock()
	f.flushing = false
	if err == nil && goal > f.recoveryPoint {
		f.recoveryPoint = goal
	}
	f.cond.Broadcast()
	f.mu.Unlock()
	if err != nil {
		return l.fail("flush", err)
	}
	return nil
}

// syncSegments fsyncs every segment holding offsets in [from, to). A
// segment that ends at or before to is flushed whole, indexes included:
// once the recovery point passes it, recovery trusts its indexes. The
// segment holding to only needs its data synced, because recovery rescans
// the segment that holds the recovery point and rebuilds its indexes; so a
// group commit on the active segment costs one fsync.
func (l *Log) syncSegments(from, to int64) error {
	segs := l.segs()
	for i, s := range segs {
		end := int64(1<<63 - 1)
		if i+1 < len(segs) {
			end = segs[i+1].baseOffset
		}
		if s.baseOffset >= to || end <= from {
			continue
		}
		var err error
		if end <= to {
			err = s.flush()
		} else {
			err = s.flushLog()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// flushAllLocked flushes every segment; used by Close. mu is held.
func (l *Log) flushAllLocked() error {
	if err := l.syncNewDirs(); err != nil {
		return l.fail("flush", err)
	}
	if err := l.epochs.Flush(); err != nil {
		return l.fail("flush", err)
	}
	deferred := l.syncsDeferred != nil && l.syncsDeferred()
	for _, s := range l.segs() {
		flush := s.flush
		if deferred {
			// The owner syncs the file system after closing every log.
			flush = s.writeBackIndexes
		}
		if err := flush(); err != nil {
			return l.fail("flush", err)
		}
	}
	l.flush.mu.Lock()
	l.flush.recoveryPoint = max(l.flush.recoveryPoint, l.logEndOffset())
	l.flush.mu.Unlock()
	l.unflushedMessages = 0
	return nil
}

// setRecoveryPoint lowers (truncation) or sets the recovery point. mu held.
func (l *Log) setRecoveryPoint(off int64) {
	l.flush.mu.Lock()
	l.flush.recoveryPoint = off
	l.flush.mu.Unlock()
}

// FlushIfDue flushes when flush.ms has passed since the last flush; the
// broker's scheduler calls it (Kafka's flush-log task).
func (l *Log) FlushIfDue() error {
	l.mu.Lock()
	due := l.config.FlushMs != 1<<63-1 && l.clock.Now().UnixMilli()-l.lastFlushMs >= l.config.FlushMs && l.unflushedMessages > 0
	if due {
		l.lastFlushMs = l.clock.Now().UnixMilli()
		l.unflushedMessages = 0
	}
	l.mu.Unlock()
	if !due {
		return nil
	}
	return l.Flush()
}
