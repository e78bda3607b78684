package storage

import "slices"

// newCleanedSegment creates the segment a cleaning writes a group into:
// "<base>.log.cleaned" and its indexes, with the group's base offset.
// createdMs is the replaced segments' newest creation time, as Kafka gives
// the cleaned segment the last replaced segment's modification time.
func (l *Log) newCleanedSegment(base, createdMs int64) (*LogSegment, error) {
	l.mu.Lock()
	o := l.segmentOptions(createdMs)
	l.mu.Unlock()
	s, err := openSegmentWithSuffix(l.fsys, l.dir, base, true, CleanedFileSuffix, o)
	if err != nil {
		return nil, err
	}
	s.skipIndexWhenFull = true
	return s, nil
}

// replaceSegments swaps the cleaned segment dest in for old, crash-safely
// (Kafka's LocalLog.replaceSegments):
//
//  1. dest's files, already synced, are renamed .cleaned → .swap and the
//     directory is synced. This commits the swap: a crash before it leaves
//     the old segments and recovery deletes the .cleaned files; a crash
//     after it and recovery completes the swap (see completeSwaps).
//  2. The segment list is updated and the old segments are renamed to
//     .deleted (synced), their files removed after file.delete.delay.ms so
//     reads holding them finish.
//  3. dest is renamed .swap → live names, and the directory synced.
//
// It gives up with errCleaningAborted, before step 1, when the log was
// truncated since the cleaning started (gen), or any old segment was
// deleted or changed size.
func (l *Log) replaceSegments(dest *LogSegment, old []*LogSegment, sizes []int64, gen uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return err
	}
	if l.truncations != gen {
		return errCleaningAborted
	}
	segs := l.segs()
	first := slices.Index(segs, old[0])
	if first < 0 || first+len(old) >= len(segs) {
		return errCleaningAborted // gone, or would include the active segment
	}
	for k, s := range old {
		if segs[first+k] != s || s.Size() != sizes[k] {
			return errCleaningAborted
		}
	}
	if err := dest.changeSuffix(SwapFileSuffix); err != nil {
		return l.fail("clean: swap", err)
	}
	if err := l.fsys.SyncDir(l.dir); err != nil {
		return l.fail("clean: swap", err)
	}
	next := make([]*LogSegment, 0, len(segs)-len(old)+1)
	next = append(next, segs[:first]...)
	next = append(next, dest)
	next = append(next, segs[first+len(old):]...)
	l.setSegments(next)
	// The HW and LSO sit in segments the cleaner never replaces, but their
	// cached positions name segments by base offset, which dest reuses.
	l.forgetPositionsLocked()
	if err := l.scheduleDeletionLocked(old); err != nil {
		return err
	}
	if err := dest.changeSuffix(""); err != nil {
		return l.fail("clean: swap", err)
	}
	if err := l.fsys.SyncDir(l.dir); err != nil {
		return l.fail("clean: swap", err)
	}
	return nil
}
