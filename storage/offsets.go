package storage

import (
	"io"

	"github.com/strait-io/strait/storage/epoch"
	"github.com/strait-io/strait/storage/record"
)

// Special ListOffsets timestamps (ListOffsetsRequest in Kafka).
const (
	LatestTimestamp        int64 = -1
	EarliestTimestamp      int64 = -2
	MaxTimestamp           int64 = -3 // KIP-734
	EarliestLocalTimestamp int64 = -4 // KIP-405
	LatestTieredTimestamp  int64 = -5 // KIP-1005
)

// LogEndOffset is the offset the next append gets.
func (l *Log) LogEndOffset() int64 { return l.logEndOffset() }

// LogStartOffset is the first offset a reader may fetch.
func (l *Log) LogStartOffset() int64 { return l.logStartOffset.Load() }

// HighWatermark is the offset below which records are replicated; the
// replication layer sets it.
func (l *Log) HighWatermark() int64 { return min(l.highWatermark.Load(), l.logEndOffset()) }

// LastStableOffset is the first offset of a transaction that is not yet
// decided, bounded by the high watermark (read_committed readers stop here).
func (l *Log) LastStableOffset() int64 { return l.lastStableOffset(l.HighWatermark()) }

// UpdateHighWatermark sets the high watermark, clamped to [log start, log
// end], and returns the value set (Kafka's updateHighWatermark). It may move
// backwards, as after truncation.
func (l *Log) UpdateHighWatermark(hw int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.setHighWatermarkLocked(hw)
}

// MaybeIncrementHighWatermark raises the high watermark to hw if that is
// higher, and reports whether it moved.
func (l *Log) MaybeIncrementHighWatermark(hw int64) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if hw <= l.highWatermark.Load() {
		return l.highWatermark.Load(), false
	}
	return l.setHighWatermarkLocked(hw), true
}

func (l *Log) setHighWatermarkLocked(hw int64) int64 {
	hw = min(max(hw, l.logStartOffset.Load()), l.logEndOffset())
	l.highWatermark.Store(hw)
	l.hwPos.Store(nil)
	if l.producers != nil {
		l.producers.OnHighWatermarkUpdated(hw)
		l.refreshFirstUnstable()
	}
	return hw
}

// LatestEpoch is the newest leader epoch in the epoch cache.
func (l *Log) LatestEpoch() (int32, bool) { return l.epochs.LatestEpoch() }

// EpochEntries returns the leader epoch cache (epoch → start offset).
func (l *Log) EpochEntries() []epoch.Entry { return l.epochs.Entries() }

// EndOffsetForEpoch answers OffsetForLeaderEpoch: the largest epoch <= the
// requested one and the offset where it ended (KIP-101, KIP-279). ok is
// false when the log knows no such epoch.
func (l *Log) EndOffsetForEpoch(requested int32) (ep int32, endOffset int64, ok bool) {
	ep, endOffset = l.epochs.EndOffsetFor(requested, l.logEndOffset())
	if ep == epoch.UndefinedEpoch && endOffset == epoch.UndefinedOffset {
		return ep, endOffset, false
	}
	return ep, endOffset, true
}

// TimestampOffset is a ListOffsets answer.
type TimestampOffset struct {
	Timestamp   int64
	Offset      int64
	LeaderEpoch int32 // -1 when unknown
}

// FetchOffsetByTimestamp answers ListOffsets for a timestamp, including the
// special values (earliest, latest, max timestamp, earliest local, latest
// tiered), as UnifiedLog.fetchOffsetByTimestamp does. ok is false when no
// record has a timestamp >= ts.
func (l *Log) FetchOffsetByTimestamp(ts int64) (TimestampOffset, bool, error) {
	if err := l.check(); err != nil {
		return TimestampOffset{}, false, err
	}
	start := l.logStartOffset.Load()
	switch ts {
	case EarliestTimestamp, EarliestLocalTimestamp:
		out := TimestampOffset{Timestamp: record.NoTimestamp, Offset: start, LeaderEpoch: -1}
		if e, ok := l.epochs.EarliestEntry(); ok && e.StartOffset <= start {
			out.LeaderEpoch = e.Epoch
		}
		return out, true, nil
	case LatestTimestamp:
		out := TimestampOffset{Timestamp: record.NoTimestamp, Offset: l.logEndOffset(), LeaderEpoch: -1}
		if e, ok := l.epochs.LatestEpoch(); ok {
			out.LeaderEpoch = e
		}
		return out, true, nil
	case LatestTieredTimestamp:
		// Nothing is tiered: Kafka answers offset -1, epoch -1.
		return TimestampOffset{Timestamp: record.NoTimestamp, Offset: -1, LeaderEpoch: -1}, true, nil
	case MaxTimestamp:
		return l.offsetOfMaxTimestamp()
	}
	if ts < 0 {
		return TimestampOffset{}, false, nil
	}
	for _, s := range l.segs() {
		if s.largestTimestamp() < ts {
			continue
		}
		out, ok, err := l.searchForTimestamp(s, ts, start)
		if err != nil {
			return out, false, l.fail("list offsets", err)
		}
		return out, ok, nil
	}
	return TimestampOffset{}, false, nil
}

// searchForTimestamp finds the first record at or after startingOffset with
// a timestamp >= ts in the segment (LogSegment.findOffsetByTimestamp).
func (l *Log) searchForTimestamp(s *LogSegment, ts, startingOffset int64) (TimestampOffset, bool, error) {
	_, idxOff := s.timeIndex.Lookup(ts)
	_, ipos := s.offsetIndex.Lookup(max(idxOff, startingOffset))
	var found TimestampOffset
	var ok bool
	err := l.scanSegmentFrom(s, int64(ipos), func(b record.Batch) (bool, error) {
		if b.MaxTimestamp() < ts || b.LastOffset() < startingOffset {
			return true, nil
		}
		return l.eachRecordTimestamp(b, func(off, rts int64) bool {
			if rts >= ts && off >= startingOffset {
				found, ok = TimestampOffset{Timestamp: rts, Offset: off, LeaderEpoch: epochOrUnknown(b)}, true
				return false
			}
			return true
		})
	})
	return found, ok, err
}

// offsetOfMaxTimestamp finds the record carrying the largest timestamp in
// the log (KIP-734; the exact record, as Kafka 3.8+ does).
func (l *Log) offsetOfMaxTimestamp() (TimestampOffset, bool, error) {
	var best *LogSegment
	bestTs := int64(-1 << 63)
	for _, s := range l.segs() {
		if ts, _ := s.MaxTimestamp(); ts > bestTs {
			best, bestTs = s, ts
		}
	}
	if best == nil || bestTs < 0 {
		return TimestampOffset{}, false, nil
	}
	_, off := best.MaxTimestamp()
	_, ipos := best.offsetIndex.Lookup(off)
	var found TimestampOffset
	var ok bool
	err := l.scanSegmentFrom(best, int64(ipos), func(b record.Batch) (bool, error) {
		if b.MaxTimestamp() != bestTs {
			return true, nil
		}
		return l.eachRecordTimestamp(b, func(o, rts int64) bool {
			if rts == bestTs {
				found, ok = TimestampOffset{Timestamp: rts, Offset: o, LeaderEpoch: epochOrUnknown(b)}, true
				return false
			}
			return true
		})
	})
	if err != nil {
		return found, false, l.fail("list offsets", err)
	}
	return found, ok, nil
}

func epochOrUnknown(b record.Batch) int32 {
	if e := b.PartitionLeaderEpoch(); e >= 0 {
		return e
	}
	return -1
}

// scanSegmentFrom reads whole batches from pos to the segment's end and
// calls fn until it returns false.
func (l *Log) scanSegmentFrom(s *LogSegment, pos int64, fn func(b record.Batch) (bool, error)) error {
	var (
		hdr [record.HeaderSize]byte
		buf []byte
	)
	size := s.Size()
	for pos+record.LogOverhead <= size {
		h, err := s.batchHeaderAt(pos, hdr[:])
		if err != nil {
			return err
		}
		n := int64(h.Size())
		if pos+n > size {
			return nil
		}
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		if _, err := s.f().ReadAt(buf[:n], pos); err != nil {
			return err
		}
		more, err := fn(record.Batch(buf[:n]))
		if err != nil || !more {
			return err
		}
		pos += n
	}
	return nil
}

// eachRecordTimestamp calls fn with each record's offset and timestamp
// until fn returns false; it reports whether to continue scanning batches.
// LogAppendTime batches stamp every record with the batch's max timestamp.
func (l *Log) eachRecordTimestamp(b record.Batch, fn func(offset, ts int64) bool) (bool, error) {
	rr, done, err := l.decomp.OpenRecords(b, l.Config().validatorConfig().MaxDecompressedBytes)
	if err != nil {
		return false, err
	}
	defer done()
	for {
		rec, err := rr.Next(false)
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		ts := b.BaseTimestamp() + rec.TimestampDelta
		if b.TimestampType() == record.LogAppendTime {
			ts = b.MaxTimestamp()
		}
		if !fn(b.BaseOffset()+int64(rec.OffsetDelta), ts) {
			return false, nil
		}
	}
}

// MaybeAssignEpochStartOffset records that epoch starts at the log end
// offset, if it is newer than the latest epoch in the cache. A replica that
// becomes leader calls it (Kafka's UnifiedLog.maybeAssignEpochStartOffset
// from Partition.makeLeader), so OffsetForLeaderEpoch knows the new epoch
// before its first append.
func (l *Log) MaybeAssignEpochStartOffset(epoch int32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.check(); err != nil {
		return err
	}
	if latest, ok := l.epochs.LatestEpoch(); ok && epoch <= latest {
		return nil
	}
	if err := l.epochs.Assign(epoch, l.logEndOffset()); err != nil {
		return l.fail("epoch checkpoint", err)
	}
	return nil
}
