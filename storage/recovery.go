package storage

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/strait-io/strait/storage/epoch"
	"github.com/strait-io/strait/storage/index"
	"github.com/strait-io/strait/storage/producer"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// RecoveryReport says what opening a log found. After a crash, recovery
// rescans every segment from the recovery point, truncates the first torn or
// corrupt batch and everything after it, and reports what it dropped rather
// than dropping it silently (nats-server's LostStreamData habit).
type RecoveryReport struct {
	// Clean is true when the previous process shut the log down cleanly
	// and no segment was rescanned.
	Clean bool
	// SegmentsRecovered counts segments rescanned.
	SegmentsRecovered int
	// TruncatedBytes is how many bytes were cut from the end of the
	// segment where the valid data stopped.
	TruncatedBytes int64
	// DroppedSegments are base offsets of whole segments deleted because
	// they came after the truncation point.
	DroppedSegments []int64
	// Reason says why recovery stopped early; empty when it found no
	// damage.
	Reason string
	// LogStartOffset and LogEndOffset are the recovered bounds.
	LogStartOffset, LogEndOffset int64
}

// Lost reports whether recovery dropped anything.
func (r *RecoveryReport) Lost() bool { return r.TruncatedBytes > 0 || len(r.DroppedSegments) > 0 }

func (r *RecoveryReport) String() string {
	if !r.Lost() {
		return fmt.Sprintf("clean=%t recovered=%d log=[%d,%d)", r.Clean, r.SegmentsRecovered, r.LogStartOffset, r.LogEndOffset)
	}
	return fmt.Sprintf("clean=%t recovered=%d log=[%d,%d) truncated=%dB dropped-segments=%v reason=%q",
		r.Clean, r.SegmentsRecovered, r.LogStartOffset, r.LogEndOffset, r.TruncatedBytes, r.DroppedSegments, r.Reason)
}

// load opens the files of the partition directory and recovers the log
// (Kafka's LogLoader.load).
func (l *Log) load(o Options) (*RecoveryReport, error) {
	if err := l.makeDir(); err != nil {
		return nil, err
	}
	if err := l.loadTopicID(); err != nil {
		return nil, err
	}
	bases, err := l.removeStrayFiles()
	if err != nil {
		return nil, err
	}
	nowMs := l.clock.Now().UnixMilli()
	segs := make([]*LogSegment, 0, len(bases))
	for _, base := range bases {
		s, err := openSegment(l.fsys, l.dir, base, false, l.segmentOptions(nowMs))
		if err != nil {
			for _, s := range segs {
				s.close(false)
			}
			return nil, err
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		s, err := l.newSegment(max(o.LogStartOffset, 0))
		if err != nil {
			return nil, err
		}
		segs = append(segs, s)
		if !l.newDir.unsynced.Load() {
			if err := l.fsys.SyncDir(l.dir); err != nil {
				return nil, err
			}
		}
	}
	l.setSegments(segs)

	if l.epochs, err = epoch.Open(l.fsys, l.dir); err != nil {
		return nil, err
	}
	l.producers, err = producer.NewManager(l.fsys, l.dir, producer.Config{
		ProducerIDExpiration: msDuration(l.config.ProducerIDExpirationMs),
	}, l.clock)
	if err != nil {
		return nil, err
	}
	l.logStartOffset.Store(max(o.LogStartOffset, segs[0].baseOffset))

	rep := &RecoveryReport{Clean: o.HadCleanShutdown}
	recoveryPoint := o.RecoveryPoint
	if !o.HadCleanShutdown {
		if err := l.recoverSegments(o.RecoveryPoint, rep); err != nil {
			return nil, err
		}
		// The process that crashed may have created the directory
		// and never flushed it (new_dir.go); recovery now calls it
		// durable, so its entries must be.
		l.newDir.unsynced.Store(true)
		if err := l.syncNewDirs(); err != nil {
			return nil, err
		}
		// Every recovered segment was flushed, and those before them were
		// below the recovery point: the whole log is durable.
		recoveryPoint = 1<<63 - 1
	}
	leo, err := l.activeSegment().nextOffset()
	if err != nil {
		return nil, err
	}
	if leo < o.LogStartOffset {
		// Segments went missing underneath the checkpoint: start over at
		// the checkpointed log start (Kafka's
		// deleteSegmentsIfLogStartGreaterThanLogEnd).
		l.logger.Warn("log end offset is below the checkpointed log start offset; deleting all segments",
			"logEndOffset", leo, "logStartOffset", o.LogStartOffset)
		for _, s := range l.segs() {
			rep.DroppedSegments = append(rep.DroppedSegments, s.baseOffset)
		}
		if err := l.replaceAllSegmentsLocked(o.LogStartOffset); err != nil {
			return nil, err
		}
		leo = o.LogStartOffset
	}
	// The active segment is appended to in place: one a drill clone
	// shares (cow.go) gets its own copy first.
	if err := l.activeSegment().privatize(l.activeSegment().Size()); err != nil {
		return nil, err
	}
	l.setLogEndOffsetLocked(leo, l.activeSegment())
	l.logStartOffset.Store(min(max(o.LogStartOffset, l.segs()[0].baseOffset), leo))
	if o.HadCleanShutdown {
		recoveryPoint = leo
	}
	l.setRecoveryPoint(min(recoveryPoint, leo))

	if err := l.epochs.TruncateFromEnd(leo); err != nil {
		return nil, err
	}
	if err := l.epochs.TruncateFromStart(l.logStartOffset.Load()); err != nil {
		return nil, err
	}
	if err := l.rebuildProducerState(leo); err != nil {
		return nil, err
	}
	hw := min(max(o.HighWatermark, l.logStartOffset.Load()), leo)
	l.highWatermark.Store(hw)
	l.producers.OnHighWatermarkUpdated(hw)
	l.refreshFirstUnstable()
	l.lastFlushMs = nowMs

	if l.newDir.unsynced.Load() {
		l.scheduler.Go(l.settleNewDir)
	}

	rep.LogStartOffset, rep.LogEndOffset = l.logStartOffset.Load(), leo
	if rep.Lost() {
		l.logger.Warn("recovery dropped data", "report", rep.String())
	}
	return rep, nil
}

func (l *Log) loadTopicID() error {
	onDisk, err := readPartitionMetadata(l.fsys, l.dir)
	if err != nil {
		return err
	}
	switch {
	case onDisk.IsZero() && !l.topicID.IsZero():
		if l.newDir.unsynced.Load() {
			l.newDir.topicIDPending = true // written by syncNewDirs
			return nil
		}
		return writePartitionMetadata(l.fsys, l.dir, l.topicID, true)
	case !onDisk.IsZero() && !l.topicID.IsZero() && onDisk != l.topicID:
		return fmt.Errorf("%s holds topic id %s, not %s", PartitionMetadataFile, onDisk, l.topicID)
	case !onDisk.IsZero():
		l.topicID = onDisk
	}
	return nil
}

// removeStrayFiles deletes what an interrupted operation left behind
// (.tmp, .deleted and .cleaned files, indexes without a .log), completes a
// cleaner swap a crash interrupted, and returns the base offsets of the
// segments present.
func (l *Log) removeStrayFiles() ([]int64, error) {
	if err := l.completeSwaps(); err != nil {
		return nil, err
	}
	names, err := l.fsys.List(l.dir)
	if err != nil {
		return nil, err
	}
	logs := map[int64]bool{}
	for _, n := range names {
		if strings.HasSuffix(n, LogFileSuffix) {
			if base, ok := offsetFromFileName(n); ok {
				logs[base] = true
			}
		}
	}
	var bases []int64
	for _, n := range names {
		remove := false
		switch {
		case strings.HasSuffix(n, TmpFileSuffix), strings.HasSuffix(n, DeletedFileSuffix):
			remove = true
		case strings.HasSuffix(n, IndexFileSuffix), strings.HasSuffix(n, TimeIndexFileSuffix), strings.HasSuffix(n, TxnIndexFileSuffix):
			base, ok := offsetFromFileName(n)
			remove = ok && !logs[base]
		case strings.HasSuffix(n, LogFileSuffix):
			if base, ok := offsetFromFileName(n); ok {
				bases = append(bases, base)
			}
		}
		if remove {
			l.logger.Info("removing stray file", "file", n)
			if err := l.fsys.Remove(filepath.Join(l.dir, n)); err != nil && !isNotExist(err) {
				return nil, err
			}
		}
	}
	return bases, nil
}

// segmentFileSuffixes are the files of one segment.
var segmentFileSuffixes = []string{LogFileSuffix, IndexFileSuffix, TimeIndexFileSuffix, TxnIndexFileSuffix}

// completeSwaps finishes or undoes a cleaner swap a crash interrupted, as
// Kafka's LogLoader does (removeTempFilesAndCollectSwapFiles and the passes
// after it; the cleaner's side is replaceSegments):
//
//   - .cleaned files are an unfinished cleaning: deleted. A .swap file at or
//     above the lowest .cleaned base offset belongs to a swap that was not
//     committed (KAFKA-6264): deleted too.
//   - A "<base>.log.swap" is a committed swap. Its data covers
//     [base, next), next being the offset after its last batch; every live
//     segment file with a base offset in that range (at least base itself)
//     is one it replaces, left by the crash before its rename to .deleted:
//     deleted. Then the .swap files get their live names.
//   - An index .swap without its .log.swap is deleted; the segment's index
//     is then rebuilt by recovery, which rescans a segment without one.
//
// Producer snapshots are left alone: cleaning changes no offset and no
// producer state.
func (l *Log) completeSwaps() error {
	names, err := l.fsys.List(l.dir)
	if err != nil {
		return err
	}
	minCleaned := int64(math.MaxInt64)
	var swaps []string
	for _, n := range names {
		switch {
		case strings.HasSuffix(n, CleanedFileSuffix):
			if base, ok := offsetFromFileName(n); ok {
				minCleaned = min(minCleaned, base)
			}
		case strings.HasSuffix(n, SwapFileSuffix):
			swaps = append(swaps, n)
		}
	}
	remove := func(n, why string) error {
		l.logger.Info("removing "+why, "file", n)
		if err := l.fsys.Remove(filepath.Join(l.dir, n)); err != nil && !isNotExist(err) {
			return err
		}
		return nil
	}
	for _, n := range names {
		if strings.HasSuffix(n, CleanedFileSuffix) {
			if err := remove(n, "file of an unfinished cleaning"); err != nil {
				return err
			}
		}
	}
	logSwaps := map[int64]bool{}
	var valid []string
	for _, n := range swaps {
		base, ok := offsetFromFileName(n)
		if !ok || base >= minCleaned {
			if err := remove(n, "swap file of an uncommitted swap"); err != nil {
				return err
			}
			continue
		}
		if strings.TrimSuffix(n, SwapFileSuffix) == filenamePrefixFromOffset(base)+LogFileSuffix {
			logSwaps[base] = true
		}
		valid = append(valid, n)
	}
	if len(valid) == 0 {
		return nil
	}
	type span struct{ from, to int64 }
	var replaced []span
	for base := range logSwaps {
		next, err := segmentFileNextOffset(l.fsys, segmentPath(l.dir, base, LogFileSuffix)+SwapFileSuffix, base)
		if err != nil {
			return err
		}
		replaced = append(replaced, span{base, max(next, base+1)})
		l.logger.Warn("completing an interrupted cleaner swap", "baseOffset", base, "nextOffset", next)
	}
	for _, n := range names {
		base, ok := offsetFromFileName(n)
		if !ok || !slices.ContainsFunc(segmentFileSuffixes, func(suf string) bool { return strings.HasSuffix(n, suf) }) {
			continue
		}
		for _, r := range replaced {
			if base >= r.from && base < r.to {
				if err := remove(n, "segment file replaced by a cleaned segment"); err != nil {
					return err
				}
				break
			}
		}
	}
	// Index files first: the .log.swap is what marks the swap as pending.
	isLog := func(n string) int {
		if strings.HasSuffix(n, LogFileSuffix+SwapFileSuffix) {
			return 1
		}
		return 0
	}
	slices.SortFunc(valid, func(a, b string) int { return cmp.Compare(isLog(a), isLog(b)) })
	for _, n := range valid {
		base, _ := offsetFromFileName(n)
		if !logSwaps[base] {
			if err := remove(n, "index swap file without its log"); err != nil {
				return err
			}
			continue
		}
		if err := l.fsys.Rename(filepath.Join(l.dir, n), filepath.Join(l.dir, strings.TrimSuffix(n, SwapFileSuffix))); err != nil {
			return err
		}
	}
	return l.fsys.SyncDir(l.dir)
}

// segmentFileNextOffset walks the batch headers of a segment file and
// returns the offset after its last whole batch (base when it has none),
// stopping at the first header that does not parse.
func segmentFileNextOffset(fsys vfs.FS, path string, base int64) (int64, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0, err
	}
	next := base
	var hdr [record.HeaderSize]byte
	for pos := int64(0); pos+record.HeaderSize <= size; {
		if n, err := f.ReadAt(hdr[:], pos); n < record.HeaderSize {
			if err == nil || errors.Is(err, io.EOF) {
				break
			}
			return 0, err
		}
		h := record.Batch(hdr[:])
		if _, err := record.ReadBatch(h); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		n := int64(h.Size())
		if n < record.HeaderSize || pos+n > size || h.LastOffsetDelta() < 0 || h.BaseOffset() < next {
			break
		}
		next = h.NextOffset()
		pos += n
	}
	return next, nil
}

// recoverSegments rescans every segment from the one holding recoveryPoint,
// or from a segment whose offset index is missing, whichever comes first.
func (l *Log) recoverSegments(recoveryPoint int64, rep *RecoveryReport) error {
	segs := l.segs()
	start := max(floorSegment(segs, recoveryPoint), 0)
	for i := 0; i < start; i++ {
		if _, err := l.fsys.Stat(segmentPath(l.dir, segs[i].baseOffset, IndexFileSuffix)); err != nil && segs[i].Size() > 0 {
			start = i
			break
		}
	}
	if start > 0 {
		if err := restoreMaxTimestamp(segs[start-1]); err != nil {
			return err
		}
	}
	if err := l.rebuildProducerState(segs[start].baseOffset); err != nil {
		return err
	}
	for i := start; i < len(segs); i++ {
		s := segs[i]
		sr, err := s.recover(func(b record.Batch) ([]index.AbortedTxn, error) {
			if e := b.PartitionLeaderEpoch(); e >= 0 {
				// The epoch checkpoint is synced at once, a truncation of the
				// log is not: after a crash the batches a truncation removed
				// can come back under a newer epoch's entry. The batch says
				// that entry is wrong; drop it and every later one.
				if cur, ok := l.epochs.EpochForOffset(b.BaseOffset()); ok && cur > e {
					next, _ := l.epochs.NextEpoch(e)
					wrong, _ := l.epochs.EpochEntry(next)
					if err := l.epochs.TruncateFromEnd(wrong.StartOffset); err != nil {
						return nil, err
					}
				}
				if latest, ok := l.epochs.LatestEpoch(); !ok || e > latest {
					if err := l.epochs.Assign(e, b.BaseOffset()); err != nil {
						return nil, err
					}
				}
			}
			return l.replayBatch(b)
		})
		if err != nil {
			return err
		}
		rep.SegmentsRecovered++
		// Persist the rebuilt indexes now: index entries reach their files
		// only on flush, and this segment may end up below the recovery
		// point, where nothing rebuilds them again.
		if err := s.flush(); err != nil {
			return err
		}
		l.producers.UpdateMapEndOffset(sr.nextOffset)
		if err := l.producers.TakeSnapshot(); err != nil {
			return err
		}
		if sr.reason == "" {
			continue
		}
		rep.TruncatedBytes += sr.truncatedBytes
		rep.Reason = fmt.Sprintf("segment %d: %s", s.baseOffset, sr.reason)
		// Nothing after the first bad batch is trusted (Kafka deletes the
		// remaining unflushed segments).
		for _, later := range segs[i+1:] {
			rep.DroppedSegments = append(rep.DroppedSegments, later.baseOffset)
			if err := later.renameForDeletion(); err != nil {
				return err
			}
			if err := later.deleteFiles(); err != nil {
				return err
			}
		}
		l.setSegments(append([]*LogSegment(nil), segs[:i+1]...))
		break
	}
	return l.fsys.SyncDir(l.dir)
}

// restoreMaxTimestamp re-adds the final time index entry of the segment
// before the first one recovery rescans. A roll writes that entry and syncs
// it in the background; when the recovery point already covered the
// segment, a crash in between loses the entry where recovery does not look,
// and the segment's max timestamp (retention.ms, ListOffsets) would be
// stale. Only the batches from the last time index entry on are read.
func restoreMaxTimestamp(s *LogSegment) error {
	ts, off := s.timeIndex.LastEntry()
	_, ipos := s.offsetIndex.Lookup(off)
	var hdr [record.HeaderSize]byte
	for pos, size := int64(ipos), s.Size(); pos+record.HeaderSize <= size; {
		h, err := s.batchHeaderAt(pos, hdr[:])
		if err != nil {
			return err
		}
		n := int64(h.Size())
		if n < record.HeaderSize || pos+n > size {
			break // not a whole batch: nothing recovery vouched for
		}
		if h.MaxTimestamp() > ts {
			ts, off = h.MaxTimestamp(), h.LastOffset()
		}
		pos += n
	}
	return s.appendFinalTimeEntry(ts, off)
}

func (l *Log) segmentOptions(nowMs int64) segmentOptions {
	return segmentOptions{
		indexIntervalBytes: l.config.IndexIntervalBytes,
		maxIndexSize:       l.config.SegmentIndexBytes,
		rollJitterMs:       l.config.SegmentJitterMs,
		nowMs:              nowMs,
	}
}

// rollJitter picks a segment's segment.jitter.ms share. Kafka draws it at
// random so partitions created together do not all roll at once; a hash of
// the directory and base offset spreads them the same way without a global
// random source, and stays the same across restarts.
func rollJitter(dir string, base, jitterMs int64) int64 {
	if jitterMs <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(dir))
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(base)))
	return int64(h.Sum64() % uint64(jitterMs))
}

// newSegment creates an empty segment at base. The caller syncs the
// directory.
func (l *Log) newSegment(base int64) (*LogSegment, error) {
	return openSegment(l.fsys, l.dir, base, true, l.segmentOptions(l.clock.Now().UnixMilli()))
}
