package storage

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"

	"github.com/strait-io/strait/storage/index"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// LogSegment is one .log file of record batches and its three indexes, named
// by the segment's base offset (Kafka's LogSegment). Appends, truncation and
// recovery run under the owning Log's lock; reads run concurrently with them
// and see at most the bytes published through size.
type LogSegment struct {
	fsys       vfs.FS
	dir        string
	baseOffset int64
	// suffix follows every file name: "" while live, DeletedFileSuffix once
	// scheduled for deletion, CleanedFileSuffix then SwapFileSuffix while
	// the cleaner writes and swaps it in.
	suffix string

	// file is the open .log file. It changes only when copy-on-write
	// (privatize) gives the segment a file of its own; reads load it
	// without the Log's lock.
	file atomic.Pointer[segmentFile]
	// retired are files privatize replaced, kept open until the segment
	// closes: a read that loaded one before the swap may still use it (a
	// FileSlice on its way to the socket). Guarded by the Log's lock.
	retired []vfs.File
	// size is the number of valid bytes in file. It is stored after the
	// bytes are written, so a reader that loads it reads only whole writes.
	size atomic.Int64
	// tail remembers where the newest batches lie, for reads at the log
	// end; appends add to it, truncation and recovery reset it, and it is
	// freed when the segment stops being the active one.
	tail tailBatches

	offsetIndex *index.OffsetIndex
	timeIndex   *index.TimeIndex
	txnIndex    *index.TxnIndex

	// flushMu serialises fsyncs of the .log file; syncedSize is the size
	// at the last one and syncDirty marks a truncation since, so an
	// unchanged file is not synced again.
	flushMu    sync.Mutex
	syncedSize int64
	syncDirty  bool

	indexIntervalBytes       int32
	bytesSinceLastIndexEntry int32
	// preallocEnd is where the blocks reserved for appends end (0: none
	// known), preallocOff set once reserving failed (segment_prealloc.go).
	// Guarded by the Log's lock.
	preallocEnd int64
	preallocOff bool
	// skipIndexWhenFull makes a full index skip entries instead of failing
	// the append: a cleaned segment may need a few more entries than the
	// segments it replaces had, and a sparser index only costs lookups.
	skipIndexWhenFull bool
	rollJitterMs      int64
	createdMs         int64

	mu sync.Mutex // guards the fields below, read by retention and ListOffsets
	// maxTimestamp and offsetOfMaxTimestamp are the largest batch max
	// timestamp seen and that batch's last offset (Kafka's
	// maxTimestampAndOffsetSoFar); loaded lazily from the time index.
	maxTimestamp         int64
	offsetOfMaxTimestamp int64
	maxTimestampKnown    bool
	// rollingBasedTimestamp is the first batch's max timestamp, the base
	// of segment.ms rolling (Kafka's rollingBasedTimestamp).
	rollingBasedTimestamp      int64
	rollingBasedTimestampKnown bool
}

type segmentOptions struct {
	indexIntervalBytes int32
	maxIndexSize       int32
	rollJitterMs       int64
	nowMs              int64
}

// openSegment opens (creating when create is set) the files of the segment
// at base. Index files are opened lazily by the index package.
func openSegment(fsys vfs.FS, dir string, base int64, create bool, o segmentOptions) (*LogSegment, error) {
	return openSegmentWithSuffix(fsys, dir, base, create, "", o)
}

// openSegmentWithSuffix opens a segment whose file names carry suffix
// after their usual one, as the cleaner's "<base>.log.cleaned" does.
func openSegmentWithSuffix(fsys vfs.FS, dir string, base int64, create bool, suffix string, o segmentOptions) (*LogSegment, error) {
	path := segmentPath(dir, base, LogFileSuffix) + suffix
	var (
		f   vfs.File
		err error
	)
	if create {
		f, err = fsys.Create(path)
	} else {
		f, err = fsys.OpenReadWrite(path)
	}
	if err != nil {
		return nil, err
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, err
	}
	s := &LogSegment{
		fsys:               fsys,
		dir:                dir,
		baseOffset:         base,
		suffix:             suffix,
		indexIntervalBytes: o.indexIntervalBytes,
		rollJitterMs:       rollJitter(dir, base, o.rollJitterMs),
		createdMs:          o.nowMs,
	}
	s.file.Store(&segmentFile{f})
	s.size.Store(size)
	if create {
		// A fresh segment must not inherit index files left by an earlier
		// segment with the same base offset (after truncation to it).
		for _, suf := range []string{IndexFileSuffix, TimeIndexFileSuffix, TxnIndexFileSuffix} {
			if err := fsys.Remove(segmentPath(dir, base, suf) + suffix); err != nil && !vfs.IsNotExist(err) {
				f.Close()
				return nil, err
			}
		}
		s.maxTimestamp, s.offsetOfMaxTimestamp, s.maxTimestampKnown = record.NoTimestamp, base, true
	}
	if s.offsetIndex, err = index.OpenOffsetIndex(fsys, s.path(IndexFileSuffix), base, int(o.maxIndexSize)); err != nil {
		f.Close()
		return nil, err
	}
	if s.timeIndex, err = index.OpenTimeIndex(fsys, s.path(TimeIndexFileSuffix), base, int(o.maxIndexSize)); err != nil {
		f.Close()
		return nil, err
	}
	if s.txnIndex, err = index.OpenTxnIndex(fsys, s.path(TxnIndexFileSuffix), base); err != nil {
		f.Close()
		return nil, err
	}
	if create {
		// Kafka creates both index files with the segment; loading them
		// now does that, so kafka-dump-log finds them for every segment.
		if err := s.offsetIndex.Load(); err != nil {
			s.close(false)
			return nil, err
		}
		if err := s.timeIndex.Load(); err != nil {
			s.close(false)
			return nil, err
		}
	}
	return s, nil
}

// BaseOffset is the offset the segment is named by.
func (s *LogSegment) BaseOffset() int64 { return s.baseOffset }

// Size is the number of bytes in the segment's .log file.
func (s *LogSegment) Size() int64 { return s.size.Load() }

func (s *LogSegment) path(suffix string) string {
	return segmentPath(s.dir, s.baseOffset, suffix) + s.suffix
}

// canConvertToRelativeOffset reports whether offset fits the 32-bit
// relative offsets of the segment's indexes.
func (s *LogSegment) canConvertToRelativeOffset(offset int64) bool {
	rel := offset - s.baseOffset
	return rel >= 0 && rel <= math.MaxInt32
}

// batchHeaderAt reads the header of the batch at pos into hdr.
func (s *LogSegment) batchHeaderAt(pos int64, hdr []byte) (record.Batch, error) {
	n, err := s.f().ReadAt(hdr[:record.HeaderSize], pos)
	if n < record.HeaderSize {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return record.Batch(hdr[:record.HeaderSize]), nil
}

// translateOffset finds the first batch whose last offset is >= offset,
// starting from the index's floor entry (Kafka's translateOffset). found is
// false when no such batch lies before limit.
func (s *LogSegment) translateOffset(offset int64, limit int64, hdr []byte) (pos int64, batchSize int32, found bool, err error) {
	if b, ok := s.tail.find(offset); ok {
		// A remembered batch not yet within limit is one a concurrent
		// append has not published to this reader: as if the scan
		// below reached limit first.
		if b.pos+record.LogOverhead > limit {
			return 0, 0, false, nil
		}
		return b.pos, b.size, true, nil
	}
	_, ipos := s.offsetIndex.Lookup(offset)
	pos = int64(ipos)
	for pos+record.LogOverhead <= limit {
		h, err := s.batchHeaderAt(pos, hdr)
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) && s.size.Load() <= pos {
				// A truncation (a follower's, or the mirror's of a
				// leader) cut the file under this scan, which loaded
				// the size before: the data at pos is gone, not
				// unreadable. As Kafka's batch iterator ends at the
				// file's end, the scan ends; failing the log here took
				// it offline and halted the broker.
				return 0, 0, false, nil
			}
			return 0, 0, false, err
		}
		size := int64(h.Size())
		if h.LastOffset() >= offset {
			return pos, int32(size), true, nil
		}
		pos += size
	}
	return 0, 0, false, nil
}

// read returns the slice of the segment starting at the first batch that
// holds an offset >= startOffset, no longer than maxSize bytes (but at least
// that first batch when minOneMessage is set) and ending at or before
// maxPosition. It also returns the first batch's size. found is false when
// the segment holds no such batch.
func (s *LogSegment) read(startOffset int64, maxSize int32, maxPosition int64, minOneMessage bool, hdr []byte) (FileSlice, int32, bool, error) {
	pos, batchSize, found, err := s.translateOffset(startOffset, s.size.Load(), hdr)
	if err != nil || !found {
		return FileSlice{}, 0, false, err
	}
	adjusted := int64(maxSize)
	if minOneMessage && int64(batchSize) > adjusted {
		adjusted = int64(batchSize)
	}
	n := min(maxPosition-pos, adjusted)
	if n < 0 {
		n = 0
	}
	return FileSlice{File: s.f(), Position: pos, Size: int32(n), baseOffset: s.baseOffset}, batchSize, true, nil
}

// append writes buf, which holds batches back to back, at the end of the
// segment and adds an index entry per batch every index.interval.bytes
// (Kafka indexes the batch's last offset at the batch's position, which is
// what kafka-dump-log --verify-index-only checks).
func (s *LogSegment) append(buf []byte, batches []record.Batch) error {
	pos := s.size.Load()
	s.preallocateFor(pos + int64(len(buf)))
	if _, err := s.f().WriteAt(buf, pos); err != nil {
		return err
	}
	s.mu.Lock()
	s.loadMaxTimestampLocked()
	if pos == 0 {
		s.rollingBasedTimestamp, s.rollingBasedTimestampKnown = batches[0].MaxTimestamp(), true
	}
	s.mu.Unlock()
	s.tail.add(batches, pos)
	for _, b := range batches {
		if err := s.indexBatch(b, pos); err != nil {
			return err
		}
		pos += int64(len(b))
	}
	s.size.Store(pos)
	return nil
}

func (s *LogSegment) indexBatch(b record.Batch, pos int64) error {
	s.mu.Lock()
	if b.MaxTimestamp() > s.maxTimestamp {
		s.maxTimestamp, s.offsetOfMaxTimestamp = b.MaxTimestamp(), b.LastOffset()
	}
	maxTs, maxOff := s.maxTimestamp, s.offsetOfMaxTimestamp
	s.mu.Unlock()
	if s.bytesSinceLastIndexEntry > s.indexIntervalBytes &&
		!(s.skipIndexWhenFull && (s.offsetIndex.IsFull() || s.timeIndex.IsFull())) {
		if err := s.offsetIndex.Append(b.LastOffset(), int32(pos)); err != nil {
			return err
		}
		if err := s.timeIndex.MaybeAppend(maxTs, maxOff, false); err != nil {
			return err
		}
		s.bytesSinceLastIndexEntry = 0
	}
	s.bytesSinceLastIndexEntry += int32(len(b))
	return nil
}

// loadMaxTimestampLocked fills the max timestamp from the time index's last
// entry for a segment opened from disk (Kafka's
// readMaxTimestampAndOffsetSoFar). s.mu must be held.
func (s *LogSegment) loadMaxTimestampLocked() {
	if !s.maxTimestampKnown {
		if err := s.timeIndex.Load(); err != nil {
			// Answer as an empty index and retry next time; the IO error
			// surfaces on the next index write.
			s.maxTimestamp, s.offsetOfMaxTimestamp = record.NoTimestamp, s.baseOffset
			return
		}
		s.maxTimestamp, s.offsetOfMaxTimestamp = s.timeIndex.LastEntry()
		s.maxTimestampKnown = true
	}
}

// MaxTimestamp returns the largest batch timestamp in the segment and the
// last offset of the batch that carries it.
func (s *LogSegment) MaxTimestamp() (ts, offset int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loadMaxTimestampLocked()
	return s.maxTimestamp, s.offsetOfMaxTimestamp
}

// largestTimestamp is what retention.ms compares against: the max timestamp,
// or the segment's creation time when no batch carried a timestamp.
func (s *LogSegment) largestTimestamp() int64 {
	if ts, _ := s.MaxTimestamp(); ts >= 0 {
		return ts
	}
	return s.createdMs
}

// timeWaitedForRoll measures segment.ms from the first batch's timestamp
// when there is one, else from the segment's creation (Kafka).
func (s *LogSegment) timeWaitedForRoll(nowMs, messageTimestamp int64) int64 {
	if ts, ok := s.firstBatchMaxTimestamp(); ok {
		return messageTimestamp - ts
	}
	return nowMs - s.createdMs
}

// firstBatchMaxTimestamp is the first batch's max timestamp, read once and
// cached; ok is false when the segment is empty or the batch has none.
func (s *LogSegment) firstBatchMaxTimestamp() (ts int64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.rollingBasedTimestampKnown && s.size.Load() > 0 {
		var hdr [record.HeaderSize]byte
		if h, err := s.batchHeaderAt(0, hdr[:]); err == nil {
			s.rollingBasedTimestamp, s.rollingBasedTimestampKnown = h.MaxTimestamp(), true
		}
	}
	return s.rollingBasedTimestamp, s.rollingBasedTimestampKnown && s.rollingBasedTimestamp >= 0
}

// firstBatchTimestamp is the first batch's max timestamp, or MaxInt64 when
// the segment is empty or the batch has none (Kafka's
// getFirstBatchTimestamp); max.compaction.lag.ms counts from it.
func (s *LogSegment) firstBatchTimestamp() int64 {
	if ts, ok := s.firstBatchMaxTimestamp(); ok {
		return ts
	}
	return math.MaxInt64
}

// rollParams are the inputs of shouldRoll (Kafka's RollParams).
type rollParams struct {
	maxSegmentBytes        int32
	maxSegmentMs           int64
	messagesSize           int
	maxTimestampInMessages int64
	maxOffsetInMessages    int64
	nowMs                  int64
}

// shouldRoll is Kafka's LogSegment.shouldRoll: full by size, old by
// segment.ms, an index full, or an offset the indexes cannot hold.
func (s *LogSegment) shouldRoll(p rollParams) bool {
	size := s.size.Load()
	reachedRollMs := s.timeWaitedForRoll(p.nowMs, p.maxTimestampInMessages) > p.maxSegmentMs-s.rollJitterMs
	return size > int64(p.maxSegmentBytes)-int64(p.messagesSize) ||
		(size > 0 && reachedRollMs) ||
		s.offsetIndex.IsFull() || s.timeIndex.IsFull() ||
		!s.canConvertToRelativeOffset(p.maxOffsetInMessages)
}

// nextOffset scans from the last index entry to the end of the file and
// returns the offset after the last batch, or the base offset if empty.
func (s *LogSegment) nextOffset() (int64, error) {
	var hdr [record.HeaderSize]byte
	_, ipos := s.offsetIndex.Lookup(math.MaxInt64)
	pos, next, size := int64(ipos), s.baseOffset, s.size.Load()
	for pos+record.LogOverhead <= size {
		h, err := s.batchHeaderAt(pos, hdr[:])
		if err != nil {
			return 0, err
		}
		next = h.NextOffset()
		pos += int64(h.Size())
	}
	return next, nil
}

// markTruncated forces the next flush to sync even at an unchanged size.
func (s *LogSegment) markTruncated() {
	s.flushMu.Lock()
	s.syncDirty = true
	s.flushMu.Unlock()
}

// onBecomeInactive records the final max-timestamp entry when the segment
// stops being the active one (Kafka's onBecomeInactiveSegment).
func (s *LogSegment) onBecomeInactive() error {
	// Reads at the log end now go to the next segment.
	s.tail.reset(true)
	s.releasePreallocated()
	ts, off := s.MaxTimestamp()
	return s.appendFinalTimeEntry(ts, off)
}

// appendFinalTimeEntry adds the segment's max timestamp as the time
// index's last entry, skipping the full check (the index keeps a slot for
// it). When the index already ends at that timestamp there is nothing to
// add; the call is skipped, because the index refuses even a no-op once
// its last slot is used, and a segment whose final entry took that slot is
// closed, rolled or recovered again later.
func (s *LogSegment) appendFinalTimeEntry(ts, off int64) error {
	if last, _ := s.timeIndex.LastEntry(); ts <= last {
		return nil
	}
	return s.timeIndex.MaybeAppend(ts, off, true)
}

// flushLog fsyncs the .log file unless it is unchanged since the last sync.
func (s *LogSegment) flushLog() error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	size := s.size.Load()
	if size == s.syncedSize && !s.syncDirty {
		return nil
	}
	if err := s.f().Sync(); err != nil {
		return err
	}
	s.syncedSize, s.syncDirty = size, false
	return nil
}

// flush fsyncs the .log file and its indexes, skipping what did not change
// since the last flush.
func (s *LogSegment) flush() error {
	if err := s.flushLog(); err != nil {
		return err
	}
	return s.writeBackIndexes()
}

// writeBackIndexes writes the indexes' new entries to their files and
// fsyncs them (through the segment's FS, which may defer the syncs).
func (s *LogSegment) writeBackIndexes() error {
	if err := s.offsetIndex.Flush(); err != nil {
		return err
	}
	if err := s.timeIndex.Flush(); err != nil {
		return err
	}
	return s.txnIndex.Flush()
}

// truncateTo removes every batch whose last offset is >= offset and the
// index entries that point at them, returning the bytes removed.
func (s *LogSegment) truncateTo(offset int64) (int64, error) {
	var hdr [record.HeaderSize]byte
	size := s.size.Load()
	pos, _, found, err := s.translateOffset(offset, size, hdr[:])
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, nil
	}
	if err := s.offsetIndex.TruncateTo(offset); err != nil {
		return 0, err
	}
	if err := s.timeIndex.TruncateTo(offset); err != nil {
		return 0, err
	}
	if err := s.txnIndex.TruncateTo(offset); err != nil {
		return 0, err
	}
	s.tail.reset(false)
	// The size drops before the file is cut: a reader that finds the file
	// ending under its scan then finds the size at or below where it read
	// (translateOffset).
	s.size.Store(pos)
	if err := s.privatize(pos); err != nil {
		return 0, err
	}
	s.preallocEnd = 0 // the truncation frees what was reserved past pos
	if err := s.f().Truncate(pos); err != nil {
		return 0, err
	}
	s.markTruncated()
	s.bytesSinceLastIndexEntry = 0
	s.mu.Lock()
	s.maxTimestamp, s.offsetOfMaxTimestamp = s.timeIndex.LastEntry()
	s.maxTimestampKnown = true
	if pos == 0 {
		s.rollingBasedTimestampKnown = false
	}
	s.mu.Unlock()
	return size - pos, nil
}

// recoverFunc is called for every valid batch during recovery, in order; it
// updates producer state and the epoch cache and returns the aborted
// transactions the batch completed, for the transaction index.
type recoverFunc func(b record.Batch) ([]index.AbortedTxn, error)

// recoverReport says what recovering one segment found.
type recoverReport struct {
	validBytes     int64
	truncatedBytes int64
	nextOffset     int64
	reason         string // why the scan stopped early, "" if it reached the end
}

// recover rebuilds the segment's indexes by scanning every batch, checking
// structure, CRC and offset order, and truncates the file at the first
// batch that fails (Kafka's LogSegment.recover). A torn tail or a corrupt
// batch both end the valid prefix; nothing after it is trusted.
func (s *LogSegment) recover(fn recoverFunc) (recoverReport, error) {
	rep := recoverReport{nextOffset: s.baseOffset}
	s.tail.reset(false)
	if err := s.offsetIndex.Reset(); err != nil {
		return rep, err
	}
	if err := s.timeIndex.Reset(); err != nil {
		return rep, err
	}
	if err := s.txnIndex.Reset(); err != nil {
		return rep, err
	}
	s.mu.Lock()
	s.maxTimestamp, s.offsetOfMaxTimestamp, s.maxTimestampKnown = record.NoTimestamp, s.baseOffset, true
	s.rollingBasedTimestampKnown = false
	s.mu.Unlock()
	s.bytesSinceLastIndexEntry = 0
	// A segment the cleaner merged from several may hold more index-worthy
	// batches than its indexes have room for: the cleaner skipped entries
	// once they were full, and so does the rebuild.
	s.skipIndexWhenFull = true

	fileSize, err := s.f().Size()
	if err != nil {
		return rep, err
	}
	var (
		pos  int64
		buf  []byte
		hdr  [record.HeaderSize]byte
		prev = s.baseOffset - 1
	)
	for pos < fileSize {
		reason, b, err := s.readBatchForRecovery(pos, fileSize, hdr[:], &buf)
		if err != nil {
			return rep, err
		}
		if reason == "" && b.BaseOffset() <= prev {
			reason = fmt.Sprintf("batch at byte %d has base offset %d, not above the previous batch's last offset %d", pos, b.BaseOffset(), prev)
		}
		if reason == "" && !s.canConvertToRelativeOffset(b.LastOffset()) {
			reason = fmt.Sprintf("batch at byte %d has last offset %d, outside the segment's relative offset range", pos, b.LastOffset())
		}
		if reason != "" {
			rep.reason = reason
			break
		}
		if err := s.indexBatch(b, pos); err != nil {
			return rep, err
		}
		if pos == 0 {
			s.mu.Lock()
			s.rollingBasedTimestamp, s.rollingBasedTimestampKnown = b.MaxTimestamp(), true
			s.mu.Unlock()
		}
		aborted, err := fn(b)
		if err != nil {
			return rep, err
		}
		for _, t := range aborted {
			if err := s.txnIndex.Append(t); err != nil {
				return rep, err
			}
		}
		prev = b.LastOffset()
		rep.nextOffset = b.NextOffset()
		pos += int64(len(b))
	}
	rep.validBytes = pos
	rep.truncatedBytes = fileSize - pos
	if rep.truncatedBytes > 0 {
		if err := s.privatize(pos); err != nil {
			return rep, err
		}
		s.preallocEnd = 0 // the truncation frees what was reserved past pos
		if err := s.f().Truncate(pos); err != nil {
			return rep, err
		}
	}
	s.size.Store(pos)
	s.markTruncated()
	ts, off := s.MaxTimestamp()
	if err := s.appendFinalTimeEntry(ts, off); err != nil {
		return rep, err
	}
	return rep, nil
}

// readBatchForRecovery reads the whole batch at pos into *buf. A non-empty
// reason means the batch is torn or corrupt and recovery stops there.
func (s *LogSegment) readBatchForRecovery(pos, fileSize int64, hdr []byte, buf *[]byte) (reason string, b record.Batch, err error) {
	if fileSize-pos < record.HeaderSize {
		return fmt.Sprintf("torn batch header at byte %d: only %d bytes remain", pos, fileSize-pos), nil, nil
	}
	h, err := s.batchHeaderAt(pos, hdr)
	if err != nil {
		return "", nil, err
	}
	if _, perr := record.ReadBatch(h); perr != nil && !errors.Is(perr, io.ErrUnexpectedEOF) {
		return fmt.Sprintf("invalid batch header at byte %d: %v", pos, perr), nil, nil
	}
	size := int64(h.Size())
	if size > fileSize-pos {
		return fmt.Sprintf("torn batch at byte %d: declares %d bytes, %d remain", pos, size, fileSize-pos), nil, nil
	}
	if int64(cap(*buf)) < size {
		*buf = make([]byte, size)
	}
	data := (*buf)[:size]
	if n, err := s.f().ReadAt(data, pos); int64(n) < size {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return "", nil, err
	}
	b = record.Batch(data)
	if !b.ValidCRC() {
		return fmt.Sprintf("batch at byte %d (offset %d) has CRC %08x, computed %08x", pos, b.BaseOffset(), b.CRC(), b.ComputeCRC()), nil, nil
	}
	if b.LastOffsetDelta() < 0 {
		return fmt.Sprintf("batch at byte %d has negative last offset delta %d", pos, b.LastOffsetDelta()), nil, nil
	}
	return "", b, nil
}

// close closes the files; on a clean shutdown the final time index entry
// is written first, as Kafka's LogSegment.close does.
func (s *LogSegment) close(clean bool) error {
	var errs []error
	if !clean {
		// The indexes open their files by path to write back (they hold
		// no descriptor), and an unclean close is of a log being dropped
		// (failed, or replaced by its future log, whose files may now be
		// at these paths) or of one that recovery repairs: what they hold
		// beyond their files is not written.
		s.offsetIndex.Discard()
		s.timeIndex.Discard()
		s.txnIndex.Discard()
		return errors.Join(s.f().Close(), s.closeRetired())
	}
	if ts, off := s.MaxTimestamp(); ts >= 0 {
		errs = append(errs, s.appendFinalTimeEntry(ts, off))
	}
	errs = append(errs, s.offsetIndex.Close(), s.timeIndex.Close(), s.txnIndex.Close(), s.f().Close(), s.closeRetired())
	return errors.Join(errs...)
}

// renameForDeletion gives every file of the segment the .deleted suffix so a
// restart finishes the deletion (Kafka's changeFileSuffixes).
func (s *LogSegment) renameForDeletion() error {
	if s.suffix == DeletedFileSuffix {
		return nil
	}
	if err := s.fsys.Rename(s.path(LogFileSuffix), s.path(LogFileSuffix)+DeletedFileSuffix); err != nil {
		return err
	}
	s.suffix = DeletedFileSuffix
	if err := s.offsetIndex.Rename(s.path(IndexFileSuffix)); err != nil {
		return err
	}
	if err := s.timeIndex.Rename(s.path(TimeIndexFileSuffix)); err != nil {
		return err
	}
	return s.txnIndex.Rename(s.path(TxnIndexFileSuffix))
}

// changeSuffix renames every file of the segment from its current suffix
// to newSuffix (Kafka's changeFileSuffixes). The .log file goes last: during
// a swap its name is what recovery goes by, so once it has the new suffix
// its indexes have it too. The caller syncs the directory.
func (s *LogSegment) changeSuffix(newSuffix string) error {
	if s.suffix == newSuffix {
		return nil
	}
	oldLog := s.path(LogFileSuffix)
	s.suffix = newSuffix
	if err := s.offsetIndex.Rename(s.path(IndexFileSuffix)); err != nil {
		return err
	}
	if err := s.timeIndex.Rename(s.path(TimeIndexFileSuffix)); err != nil {
		return err
	}
	if err := s.txnIndex.Rename(s.path(TxnIndexFileSuffix)); err != nil {
		return err
	}
	return s.fsys.Rename(oldLog, s.path(LogFileSuffix))
}

// deleteFiles closes and removes every file of the segment.
func (s *LogSegment) deleteFiles() error {
	errs := []error{s.offsetIndex.Delete(), s.timeIndex.Delete(), s.txnIndex.Delete()}
	errs = append(errs, s.f().Close(), s.closeRetired())
	if err := s.fsys.Remove(s.path(LogFileSuffix)); err != nil && !vfs.IsNotExist(err) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
