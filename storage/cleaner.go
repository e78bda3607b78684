package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
)

// Log compaction (cleanup.policy=compact), Kafka's LogCleaner and Cleaner.
//
// The log below the first uncleanable offset is cleanable. The part of it
// past the cleaner checkpoint (cleaner-offset-checkpoint) is dirty: it has
// not been compacted yet. A cleaning maps every key of the dirty part to
// its latest offset, then rewrites the segments from the log start up to
// where the map reached, in groups that each fit one segment, keeping a
// record only if it is its key's latest and, for a tombstone, only until
// its delete horizon. Each group is written as "<base>.log.cleaned" with
// its indexes, renamed to .swap, which commits it, and then swapped in for
// the segments it replaces; recovery completes a swap a crash interrupted.
// Offsets never change, so the epoch cache, producer-state snapshots and
// the indexes' offsets stay valid.
//
// Cleaning reads segments without the log lock, as Kafka's cleaner does:
// only truncation and deletion change a segment below the active one, and
// the swap, under the lock, gives up when either happened meanwhile.
//
// Tombstones and transaction markers use Kafka 3.x's delete horizon
// (KIP-534): the first cleaning that keeps a tombstone, or a marker whose
// transaction has no data left, rewrites its batch with the horizon
// (now + delete.retention.ms) as the batch's base timestamp and sets the
// batch attribute that says so; a later cleaning after the horizon drops
// them. Batches written before any cleaning carry no horizon, so the
// legacy rule based on segments' last-modified times is not needed.

// DefaultDedupeBufferSize is log.cleaner.dedupe.buffer.size's default: the
// most memory one cleaning's offset map may take. The map is sized to the
// dirty range, so small logs take far less.
const DefaultDedupeBufferSize = 128 << 20

// DefaultDedupeBufferLoadFactor is log.cleaner.io.buffer.load.factor's
// default: how full the offset map may get.
const DefaultDedupeBufferLoadFactor = 0.9

// CleanOptions bound one cleaning.
type CleanOptions struct {
	// DedupeBufferSize is the offset map's memory limit in bytes
	// (log.cleaner.dedupe.buffer.size); 0 means DefaultDedupeBufferSize.
	// When the dirty part has more keys than fit, the cleaning stops where
	// the map filled up and the next one continues from there.
	DedupeBufferSize int64
	// LoadFactor is log.cleaner.io.buffer.load.factor; 0 means
	// DefaultDedupeBufferLoadFactor.
	LoadFactor float64
	// Throttle, when set, hears of every byte the cleaning reads or
	// writes and may hold it back (log.cleaner.io.max.bytes.per.second,
	// Kafka's Throttler.maybeThrottle); it returns early when ctx ends.
	Throttle func(ctx context.Context, bytes int64)
}

// CleanResult says what a cleaning did (Kafka's CleanerStats).
type CleanResult struct {
	// FirstDirtyOffset is where the dirty part started; EndOffset is the
	// first offset not cleaned, the new cleaner checkpoint.
	FirstDirtyOffset, EndOffset int64
	// Aborted is set when the log changed underneath (truncation, segment
	// deletion or close) and the cleaning gave up; nothing is lost, the
	// checkpoint stays and a later cleaning starts over.
	Aborted bool
	// SegmentsCleaned counts segments replaced; SegmentsWritten the cleaned
	// segments that replaced them.
	SegmentsCleaned, SegmentsWritten int
	// MapRecords counts keyed records put in the offset map;
	// MapUtilization is the share of its slots used.
	MapRecords     int64
	MapUtilization float64
	// BytesRead and BytesWritten are the rewritten segments' sizes before
	// and after; RecordsRead and RecordsRetained count their records.
	BytesRead, BytesWritten      int64
	RecordsRead, RecordsRetained int64
}

// errCleaningAborted says the log changed while it was being cleaned
// (Kafka's LogCleaningAbortedException).
var errCleaningAborted = errors.New("storage: cleaning aborted: the log changed underneath")

// cleanerIOError marks a filesystem failure during cleaning; the log fails
// unless the failure came from the log changing underneath.
type cleanerIOError struct {
	op  string
	err error
}

func (e *cleanerIOError) Error() string { return e.op + ": " + e.err.Error() }
func (e *cleanerIOError) Unwrap() error { return e.err }

// CleanerCheckpoint is the first offset the cleaner has not compacted yet:
// this log's entry in cleaner-offset-checkpoint.
func (l *Log) CleanerCheckpoint() int64 { return l.cleanerCheckpoint.Load() }

// CleanableInfo describes how much of a log a cleaning would compact
// (Kafka's LogToClean).
type CleanableInfo struct {
	// FirstDirtyOffset is where the dirty part starts: the cleaner
	// checkpoint, or the log start when the checkpoint is outside the log.
	FirstDirtyOffset int64
	// FirstUncleanableOffset is the base offset of the first segment that
	// cannot be cleaned: the active segment, or the segment holding the
	// last stable offset (which is at most the high watermark), or the
	// first segment with a record newer than min.compaction.lag.ms.
	FirstUncleanableOffset int64
	// CleanBytes is the size of the segments below the first dirty offset,
	// CleanableBytes that of the dirty segments below the first
	// uncleanable one.
	CleanBytes, CleanableBytes int64
	// NeedCompactionNow is set when a dirty segment's first batch is older
	// than max.compaction.lag.ms.
	NeedCompactionNow bool
}

// DirtyRatio is the dirty share of the cleanable log, compared with
// min.cleanable.dirty.ratio.
func (c CleanableInfo) DirtyRatio() float64 {
	total := c.CleanBytes + c.CleanableBytes
	if total == 0 {
		return 0
	}
	return float64(c.CleanableBytes) / float64(total)
}

// CleanableInfo computes the log's cleanable range now. The log cleaner
// calls it for every compacted log each time it looks for work, so it
// takes the log lock, which appends wait on, only to read the config: the
// rest comes from atomics and one snapshot of the segment list (each
// segment's size and timestamps), as Kafka's LogCleanerManager reads the
// cleaner checkpoint and segment sizes without the log's lock.
func (l *Log) CleanableInfo() CleanableInfo {
	cfg := l.Config()
	return l.cleanableInfo(l.segs(), cfg, l.clock.Now().UnixMilli())
}

// cleanableInfoLocked is cleanableInfo with the log's current segments
// and config. mu is held.
func (l *Log) cleanableInfoLocked(nowMs int64) CleanableInfo {
	return l.cleanableInfo(l.segs(), l.config, nowMs)
}

// cleanableInfo is LogCleanerManager.cleanableOffsets followed by
// calculateCleanableBytes and maxCompactionDelay, over segs (a snapshot of
// the segment list) and cfg.
func (l *Log) cleanableInfo(segs []*LogSegment, cfg LogConfig, nowMs int64) CleanableInfo {
	active := segs[len(segs)-1]
	logStart, leo := l.logStartOffset.Load(), l.logEndOffset()
	firstDirty := l.cleanerCheckpoint.Load()
	if firstDirty < logStart || firstDirty > leo {
		// Below the log start (retention or DeleteRecords moved it) or past
		// the end (truncation): start over from the log start.
		firstDirty = logStart
	}
	uncleanable := min(l.LastStableOffset(), active.baseOffset)
	if lag := max(cfg.MinCompactionLagMs, 0); lag > 0 {
		for i := max(floorSegment(segs, firstDirty), 0); i < len(segs)-1; i++ {
			if segs[i].largestTimestamp() > nowMs-lag {
				uncleanable = min(uncleanable, segs[i].baseOffset)
				break
			}
		}
	}
	uncleanable = max(firstDirty, uncleanable)
	first := active
	if i := floorSegment(segs, uncleanable); i >= 0 && i < len(segs)-1 {
		first = segs[i]
	}
	info := CleanableInfo{FirstDirtyOffset: firstDirty, FirstUncleanableOffset: first.baseOffset}
	from := min(firstDirty, first.baseOffset)
	for i, s := range segs {
		end := int64(math.MaxInt64)
		if i+1 < len(segs) {
			end = segs[i+1].baseOffset
		}
		if s.baseOffset < firstDirty {
			info.CleanBytes += s.Size()
		}
		if end > from && s.baseOffset < first.baseOffset {
			info.CleanableBytes += s.Size()
		}
	}
	// maxCompactionDelay: the oldest first batch of a dirty non-active
	// segment against max.compaction.lag.ms.
	cleanUntil := nowMs - max(cfg.MaxCompactionLagMs, 0)
	for i := max(floorSegment(segs, firstDirty), 0); i < len(segs)-1; i++ {
		if ts := segs[i].firstBatchTimestamp(); ts > 0 && ts < cleanUntil {
			info.NeedCompactionNow = true
			break
		}
	}
	return info
}

// lastRecord is what the cleaner keeps for an active producer (Kafka's
// LastRecord): the last offset of its newest data batch, or -1 when only a
// marker is left, and its epoch.
type lastRecord struct {
	lastDataOffset int64
	epoch          int16
}

// lastRecordsOfActiveProducersLocked is UnifiedLog.lastRecordsOfActiveProducers.
func (l *Log) lastRecordsOfActiveProducersLocked() map[int64]lastRecord {
	out := map[int64]lastRecord{}
	for _, p := range l.producers.Producers() {
		e, ok := l.producers.Entry(p.ProducerID)
		if !ok {
			continue
		}
		out[p.ProducerID] = lastRecord{lastDataOffset: e.LastDataOffset(), epoch: e.ProducerEpoch}
	}
	return out
}

// Clean compacts the log once from its cleaner checkpoint, whatever its
// dirty ratio (Kafka's Cleaner.clean), and moves the checkpoint to the
// first offset it did not clean. Cleanings of one log are serialised;
// appends and reads go on meanwhile. ctx ends the cleaning early, leaving
// the log as it was.
func (l *Log) Clean(ctx context.Context, o CleanOptions) (CleanResult, error) {
	l.cleanMu.Lock()
	defer l.cleanMu.Unlock()
	nowMs := l.clock.Now().UnixMilli()
	l.mu.Lock()
	if err := l.check(); err != nil {
		l.mu.Unlock()
		return CleanResult{}, err
	}
	info := l.cleanableInfoLocked(nowMs)
	c := &cleaner{
		l:         l,
		ctx:       ctx,
		cfg:       l.config,
		nowMs:     nowMs,
		segs:      l.segs(),
		gen:       l.truncations,
		producers: l.lastRecordsOfActiveProducersLocked(),
		comp:      l.comp,
		opts:      o,
	}
	l.mu.Unlock()
	res := CleanResult{FirstDirtyOffset: info.FirstDirtyOffset, EndOffset: info.FirstDirtyOffset}
	if info.FirstUncleanableOffset <= info.FirstDirtyOffset {
		return res, nil
	}
	err := c.doClean(info.FirstDirtyOffset, info.FirstUncleanableOffset, &res)
	if err != nil {
		var ioe *cleanerIOError
		switch {
		case errors.Is(err, errCleaningAborted) || l.check() != nil || c.changed():
			res.Aborted, res.EndOffset = true, info.FirstDirtyOffset
			if cerr := l.check(); cerr != nil {
				return res, cerr
			}
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			l.logger.Info("log cleaning aborted", "reason", err)
			return res, nil
		case ctx.Err() != nil:
			res.Aborted, res.EndOffset = true, info.FirstDirtyOffset
			return res, ctx.Err()
		case errors.As(err, &ioe):
			return res, l.fail("clean: "+ioe.op, ioe.err)
		}
		return res, fmt.Errorf("storage: cleaning %s: %w", l.dir, err)
	}
	l.cleanerCheckpoint.Store(res.EndOffset)
	l.logger.Info("cleaned log", "firstDirtyOffset", res.FirstDirtyOffset, "endOffset", res.EndOffset,
		"segments", res.SegmentsCleaned, "bytesRead", res.BytesRead, "bytesWritten", res.BytesWritten,
		"recordsRead", res.RecordsRead, "recordsRetained", res.RecordsRetained)
	return res, nil
}

// cleaner is one cleaning of one log (Kafka's Cleaner.doClean and what it
// calls).
type cleaner struct {
	l         *Log
	ctx       context.Context
	cfg       LogConfig
	nowMs     int64
	segs      []*LogSegment // the segments when the cleaning started
	gen       uint64        // l.truncations then
	producers map[int64]lastRecord
	comp      *record.Compressor
	opts      CleanOptions

	buf []byte // reused batch read buffer
	dec []byte // reused decompression buffer
}

// changed reports whether the log was truncated or lost one of the
// segments the cleaning started from.
func (c *cleaner) changed() bool {
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.truncations != c.gen {
		return true
	}
	live := map[*LogSegment]bool{}
	for _, s := range l.segs() {
		live[s] = true
	}
	for _, s := range c.segs[:len(c.segs)-1] {
		if !live[s] {
			return true
		}
	}
	return false
}

func (c *cleaner) decompressLimit() int64 {
	return max(c.cfg.validatorConfig().MaxDecompressedBytes, 64<<20)
}

// doClean builds the offset map over the dirty range [firstDirty, upper),
// then rewrites every segment below where the map reached.
func (c *cleaner) doClean(firstDirty, upper int64, res *CleanResult) error {
	m, err := c.buildOffsetMap(firstDirty, upper, res)
	if err != nil {
		return err
	}
	end := m.latestOffset + 1
	if end <= firstDirty {
		return fmt.Errorf("the offset map of %d slots cannot hold the first batch's keys at offset %d: raise log.cleaner.dedupe.buffer.size", m.slots(), firstDirty)
	}
	res.MapUtilization = m.utilization()
	var toClean []int
	for i, s := range c.segs[:len(c.segs)-1] {
		if s.baseOffset < end {
			toClean = append(toClean, i)
		}
	}
	txn := newCleanedTxnMetadata(c.controlType)
	for _, group := range c.groupSegmentsBySize(toClean, upper) {
		if err := c.cleanSegments(group, m, txn, upper, res); err != nil {
			return err
		}
	}
	res.EndOffset = end
	return nil
}

// groupSegmentsBySize groups consecutive segments (indexes into c.segs) so
// each group's data fits segment.bytes, its index entries fit
// segment.index.bytes and its offsets fit the indexes' relative offsets
// (Cleaner.groupSegmentsBySize).
func (c *cleaner) groupSegmentsBySize(idx []int, upper int64) [][]int {
	maxSize := int64(c.cfg.SegmentBytes)
	maxEntries := int64(c.cfg.SegmentIndexBytes)
	// lastOffsetOf bounds a segment's last offset by the next one's base.
	lastOffsetOf := func(j int) int64 {
		if j+1 < len(c.segs) {
			return min(c.segs[j+1].baseOffset, upper) - 1
		}
		return upper - 1
	}
	var groups [][]int
	for len(idx) > 0 {
		first := c.segs[idx[0]]
		group := []int{idx[0]}
		size := first.Size()
		// Each segment can add one index entry beyond its own (the first
		// batch after a segment boundary), hence the +1s.
		offEntries := int64(first.offsetIndex.Entries()+1) * 8
		timeEntries := int64(first.timeIndex.Entries()+1) * 12
		idx = idx[1:]
		for len(idx) > 0 {
			s := c.segs[idx[0]]
			if size+s.Size() > maxSize ||
				offEntries+int64(s.offsetIndex.Entries()+1)*8 > maxEntries ||
				timeEntries+int64(s.timeIndex.Entries()+1)*12 > maxEntries ||
				(s.Size() > 0 && lastOffsetOf(idx[0])-first.baseOffset > math.MaxInt32) {
				break
			}
			group = append(group, idx[0])
			size += s.Size()
			offEntries += int64(s.offsetIndex.Entries()+1) * 8
			timeEntries += int64(s.timeIndex.Entries()+1) * 12
			idx = idx[1:]
		}
		groups = append(groups, group)
	}
	return groups
}

// controlType is the type of a control batch's record; ok is false for a
// control batch the cleaner emptied.
func (c *cleaner) controlType(b record.Batch) (kmsg.ControlRecordKeyType, bool, error) {
	if b.RecordCount() == 0 {
		return 0, false, nil
	}
	t, err := c.l.decomp.ControlType(b)
	return t, err == nil, err
}

// forEachSegmentBatch reads the whole batches of s from pos to size and
// calls fn for each; the batch is valid only during the call. A batch that
// does not pass its CRC stops the walk with an error: the cleaner must not
// copy corruption into a segment recovery will then trust.
func (c *cleaner) forEachSegmentBatch(s *LogSegment, pos, size int64, fn func(b record.Batch) error) error {
	var hdr [record.HeaderSize]byte
	for pos+record.LogOverhead <= size {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		if c.l.check() != nil {
			// Closed (deleted) or failed meanwhile: stop reading now.
			return errCleaningAborted
		}
		h, err := s.batchHeaderAt(pos, hdr[:])
		if err != nil {
			return &cleanerIOError{"read", err}
		}
		if _, err := record.ReadBatch(h); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("segment %d at byte %d: %w", s.baseOffset, pos, err)
		}
		n := int64(h.Size())
		if pos+n > size {
			return fmt.Errorf("segment %d: batch at byte %d of %d bytes passes the segment's end %d", s.baseOffset, pos, n, size)
		}
		c.throttle(n)
		if int64(cap(c.buf)) < n {
			c.buf = make([]byte, n)
		}
		b := record.Batch(c.buf[:n])
		if got, err := s.f().ReadAt(b, pos); int64(got) < n {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return &cleanerIOError{"read", err}
		}
		if !b.ValidCRC() {
			return fmt.Errorf("segment %d: batch at byte %d (offset %d) fails its CRC", s.baseOffset, pos, b.BaseOffset())
		}
		if err := fn(b); err != nil {
			return err
		}
		pos += n
	}
	return nil
}

// throttle counts bytes read or written against
// log.cleaner.io.max.bytes.per.second.
func (c *cleaner) throttle(n int64) {
	if c.opts.Throttle != nil {
		c.opts.Throttle(c.ctx, n)
	}
}

// records returns the decompressed record stream of b.
func (c *cleaner) records(b record.Batch) ([]byte, error) {
	data, err := c.l.decomp.RecordsData(b, c.decompressLimit(), c.dec)
	if err != nil {
		return nil, err
	}
	if b.Compression() != record.CodecNone {
		c.dec = data[:0]
	}
	return data, nil
}

// buildOffsetMap maps each key of the dirty range to its latest offset,
// stopping when the map is full (Cleaner.buildOffsetMap). Data of aborted
// transactions is not mapped: those records go regardless.
func (c *cleaner) buildOffsetMap(start, end int64, res *CleanResult) (*offsetMap, error) {
	bufSize := c.opts.DedupeBufferSize
	if bufSize <= 0 {
		bufSize = DefaultDedupeBufferSize
	}
	lf := c.opts.LoadFactor
	if lf <= 0 || lf >= 1 {
		lf = DefaultDedupeBufferLoadFactor
	}
	// A dirty range of n offsets holds at most n keyed records, so the map
	// never needs more slots than n / lf: small logs get small maps.
	slots := bufSize / offsetMapEntrySize
	slots = min(slots, int64(float64(end-start)/lf)+2)
	slots = max(slots, 2)
	m := newOffsetMap(int(slots))
	maxDesired := min(int(float64(slots)*lf), int(slots)-1)

	first := max(floorSegment(c.segs, start), 0)
	txn := newCleanedTxnMetadata(c.controlType)
	aborted, err := collectAbortedTxns(c.segs[first:], start, end)
	if err != nil {
		return nil, &cleanerIOError{"read txn index", err}
	}
	txn.addAborted(aborted)
	errFull := errors.New("offset map full")
	for i := first; i < len(c.segs)-1 && c.segs[i].baseOffset < end; i++ {
		s := c.segs[i]
		next := end
		if i+1 < len(c.segs) && c.segs[i+1].baseOffset < end {
			next = c.segs[i+1].baseOffset
		}
		_, ipos := s.offsetIndex.Lookup(start)
		err := c.forEachSegmentBatch(s, int64(ipos), s.Size(), func(b record.Batch) error {
			if b.IsControl() {
				if _, err := txn.onControlBatch(b); err != nil {
					return err
				}
			} else if !txn.onDataBatch(b) {
				data, err := c.records(b)
				if err != nil {
					return err
				}
				err = record.ParseRawRecords(data, b.RecordCount(), func(r record.RawRecord) error {
					off := b.BaseOffset() + int64(r.OffsetDelta)
					if r.HasKey() && off >= start {
						if m.size >= maxDesired {
							return errFull
						}
						m.put(r.Key, off)
						res.MapRecords++
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			if b.LastOffset() >= start {
				m.updateLatestOffset(b.LastOffset())
			}
			return nil
		})
		if errors.Is(err, errFull) {
			return m, nil
		}
		if err != nil {
			return nil, err
		}
		// Past a gap in the offsets, the map covers up to the next segment.
		m.updateLatestOffset(next - 1)
	}
	return m, nil
}

// batchRetention is RecordFilter.BatchRetention.
type batchRetention int8

const (
	retentionDeleteEmpty batchRetention = iota // drop the batch if no record is kept
	retentionRetainEmpty                       // keep the header even with no record
	retentionDelete                            // drop the batch whatever its records
)

// cleanSegments rewrites one group of segments into a cleaned segment and
// swaps it in (Cleaner.cleanSegments).
func (c *cleaner) cleanSegments(group []int, m *offsetMap, txn *cleanedTxnMetadata, upper int64, res *CleanResult) (err error) {
	l := c.l
	last := c.segs[group[len(group)-1]]
	dest, err := l.newCleanedSegment(c.segs[group[0]].baseOffset, last.createdMs)
	if err != nil {
		return &cleanerIOError{"create cleaned segment", err}
	}
	defer func() {
		// Once renamed to .swap the cleaned segment is committed: recovery
		// swaps it in, so it must not be removed even if a later step
		// failed (the log is then failed and recovers at the next start).
		if err != nil && dest.suffix == CleanedFileSuffix {
			_ = dest.deleteFiles()
		}
	}()
	txn.cleanedIndex = dest.txnIndex
	sizes := make([]int64, len(group))
	old := make([]*LogSegment, len(group))
	for k, i := range group {
		s := c.segs[i]
		old[k], sizes[k] = s, s.Size()
		// The segment's aborted transactions, to tell its aborted batches
		// and which markers must stay (the whole segment's range, as the
		// cleaned segment's transaction index is rebuilt from them).
		segUpper := int64(0)
		if k+1 < len(group) {
			segUpper = c.segs[group[k+1]].baseOffset
		} else if segUpper, err = s.nextOffset(); err != nil {
			return &cleanerIOError{"read", err}
		}
		aborted, err := collectAbortedTxns(c.segs[i:], s.baseOffset, segUpper)
		if err != nil {
			return &cleanerIOError{"read txn index", err}
		}
		txn.addAborted(aborted)
		if err := c.cleanInto(s, sizes[k], dest, m, txn, upper, res); err != nil {
			return err
		}
	}
	if err := dest.onBecomeInactive(); err != nil {
		return &cleanerIOError{"write cleaned segment", err}
	}
	if err := dest.flush(); err != nil {
		return &cleanerIOError{"flush cleaned segment", err}
	}
	res.BytesWritten += dest.Size()
	if err := l.replaceSegments(dest, old, sizes, c.gen); err != nil {
		return err
	}
	res.SegmentsCleaned += len(group)
	res.SegmentsWritten++
	return nil
}

// isLastBatchOfProducer reports whether b holds what producer state needs
// of an active producer: its last data batch (the last sequence), or, when
// only a marker is left, a marker of its current epoch (fencing).
func (c *cleaner) isLastBatchOfProducer(b record.Batch) bool {
	lr, ok := c.producers[b.ProducerID()]
	if !ok {
		return false
	}
	if lr.lastDataOffset >= 0 {
		return b.LastOffset() == lr.lastDataOffset
	}
	return b.IsControl() && b.ProducerEpoch() == lr.epoch
}

// cleanInto copies what survives of the segment's batches into dest
// (Cleaner.cleanInto with MemoryRecords.filterTo).
func (c *cleaner) cleanInto(s *LogSegment, size int64, dest *LogSegment, m *offsetMap, txn *cleanedTxnMetadata,
	upper int64, res *CleanResult) error {
	var (
		out     []byte
		batches []record.Batch
	)
	write := func() error {
		if len(out) == 0 {
			return nil
		}
		c.throttle(int64(len(out)))
		if err := dest.append(out, batches); err != nil {
			return &cleanerIOError{"write cleaned segment", err}
		}
		out, batches = out[:0], batches[:0]
		return nil
	}
	var kept []record.RawRecord
	err := c.forEachSegmentBatch(s, 0, size, func(b record.Batch) error {
		res.BytesRead += int64(len(b))
		var canDiscard bool
		if b.IsControl() {
			var err error
			if canDiscard, err = txn.onControlBatch(b); err != nil {
				return err
			}
		} else {
			canDiscard = txn.onDataBatch(b)
		}
		discardRecords := canDiscard
		horizon, hasHorizon := b.DeleteHorizonMs()
		if b.IsControl() {
			discardRecords = canDiscard && hasHorizon && horizon <= c.nowMs
		}
		retention := retentionDeleteEmpty
		switch {
		case b.HasProducerID() && c.isLastBatchOfProducer(b):
			retention = retentionRetainEmpty
		case b.NextOffset() == upper:
			// The last batch of the cleaning round stays, so the offset
			// after it is not lost.
			retention = retentionRetainEmpty
		case discardRecords:
			retention = retentionDelete
		}
		if retention == retentionDelete {
			res.RecordsRead += int64(b.RecordCount())
			return nil
		}
		kept = kept[:0]
		tombstones := false
		if !discardRecords {
			data, err := c.records(b)
			if err != nil {
				return err
			}
			err = record.ParseRawRecords(data, b.RecordCount(), func(r record.RawRecord) error {
				res.RecordsRead++
				if b.IsControl() || c.shouldRetainRecord(m, b, r) {
					kept = append(kept, r)
					tombstones = tombstones || !r.HasValue()
				}
				return nil
			})
			if err != nil {
				return err
			}
		} else {
			res.RecordsRead += int64(b.RecordCount())
		}
		res.RecordsRetained += int64(len(kept))
		markerForEmptyTxn := canDiscard && b.IsControl()
		switch {
		case len(kept) > 0:
			needHorizon := (tombstones || markerForEmptyTxn) && !hasHorizon
			if len(kept) == int(b.RecordCount()) && !needHorizon {
				out = append(out, b...)
				batches = append(batches, record.Batch(out[len(out)-len(b):]))
				break
			}
			newHorizon := int64(-1)
			if needHorizon {
				newHorizon = c.nowMs + min(c.cfg.DeleteRetentionMs, math.MaxInt64-c.nowMs)
			}
			nb, err := record.BuildRetained(b, kept, newHorizon, c.comp)
			if err != nil {
				return err
			}
			out = append(out, nb...)
			batches = append(batches, record.Batch(out[len(out)-len(nb):]))
		case retention == retentionRetainEmpty:
			nb := record.EmptyBatch(b)
			out = append(out, nb...)
			batches = append(batches, record.Batch(out[len(out)-len(nb):]))
		}
		if len(out) >= 1<<20 {
			return write()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return write()
}

// shouldRetainRecord keeps a record past the mapped range, or the latest
// of its key unless it is a tombstone past its delete horizon
// (Cleaner.shouldRetainRecord). A record without a key cannot be
// compacted and goes, as in Kafka.
func (c *cleaner) shouldRetainRecord(m *offsetMap, b record.Batch, r record.RawRecord) bool {
	off := b.BaseOffset() + int64(r.OffsetDelta)
	if off > m.latestOffset {
		return true
	}
	if !r.HasKey() {
		return false
	}
	if off < m.get(r.Key) {
		return false
	}
	if r.HasValue() {
		return true
	}
	horizon, ok := b.DeleteHorizonMs()
	return !ok || c.nowMs < horizon
}
