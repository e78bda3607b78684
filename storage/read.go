package storage

import (
	"fmt"

	"github.com/strait-io/strait/storage/index"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// FetchIsolation is how far a read may see (Kafka's FetchIsolation).
type FetchIsolation int8

const (
	// FetchLogEnd reads up to the log end offset: follower fetches.
	FetchLogEnd FetchIsolation = iota
	// FetchHighWatermark reads up to the high watermark: read_uncommitted
	// consumers.
	FetchHighWatermark
	// FetchTxnCommitted reads up to the last stable offset: read_committed
	// consumers, who also get the aborted transactions in range.
	FetchTxnCommitted
)

// FileSlice is a byte range of a segment file. The fetch path sends it
// without copying it through Go memory where it can (sendfile on the
// File's descriptor, see vfs.FD). The range may end inside a batch, as in
// Kafka; clients drop a trailing partial batch.
type FileSlice struct {
	File     vfs.File
	Position int64
	Size     int32

	baseOffset int64
}

// ReadInto copies the slice into dst, which must hold Size bytes; tests and
// the non-sendfile write path use it.
func (s FileSlice) ReadInto(dst []byte) error {
	if s.Size == 0 {
		return nil
	}
	n, err := s.File.ReadAt(dst[:s.Size], s.Position)
	if n < int(s.Size) {
		return fmt.Errorf("storage: read %d of %d bytes at %d in %s (the segment was truncated): %v", n, s.Size, s.Position, s.File.Name(), err)
	}
	return nil
}

// FetchDataInfo is what a read returns (Kafka's FetchDataInfo plus the
// offsets a Fetch response reports, taken at the same moment).
type FetchDataInfo struct {
	// Records is the data; Size 0 means nothing to return.
	Records FileSlice
	// AbortedTxns lists the aborted transactions overlapping the data, for
	// read_committed fetches.
	AbortedTxns []index.AbortedTxn
	// FirstEntryIncomplete is set when maxBytes cut the first batch.
	FirstEntryIncomplete bool

	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64
	LogEndOffset     int64
}

// Read returns the data from the first batch holding an offset >= offset,
// at most maxBytes (or the whole first batch when minOneMessage is set and
// it is larger), bounded by isolation. Reading below the log start offset
// or above the log end offset is OFFSET_OUT_OF_RANGE; reading at or past the
// isolation bound returns no data. Read never takes the log lock.
func (l *Log) Read(offset int64, maxBytes int32, isolation FetchIsolation, minOneMessage bool) (FetchDataInfo, error) {
	if err := l.check(); err != nil {
		return FetchDataInfo{}, err
	}
	if maxBytes < 0 {
		return FetchDataInfo{}, fmt.Errorf("storage: negative max bytes %d", maxBytes)
	}
	segs := l.segs()
	// Load the bounds in an order that keeps them consistent with segs:
	// appends publish segments before the log end offset. The log end
	// offset comes with its byte position: an append stores the segment's
	// size before the log end offset, so the segment may already hold
	// batches past the offset loaded here, and they must not be returned
	// (Kafka's LocalLog.read bounds a read by maxOffsetMetadata's position
	// for the same reason). Returning them let a reader ask next for an
	// offset above the log end offset its next read loads:
	// OFFSET_OUT_OF_RANGE for a tail consumer or follower, and data above
	// the high watermark or LSO it reported for a consumer.
	end := l.logEnd.Load()
	leo := end.offset
	hw := min(l.highWatermark.Load(), leo)
	lso := l.lastStableOffset(hw)
	start := l.logStartOffset.Load()
	out := FetchDataInfo{HighWatermark: hw, LastStableOffset: lso, LogStartOffset: start, LogEndOffset: leo}
	if offset < start || offset > leo {
		return out, &OffsetOutOfRangeError{Offset: offset, LogStartOffset: start, LogEndOffset: leo, Dir: l.dir}
	}
	first := floorSegment(segs, offset)
	if first < 0 {
		// No segment holds the offset: the segments below it are gone.
		// Reading the first segment instead would return records past
		// the offset as if none were skipped; Kafka's LocalLog.read
		// answers OFFSET_OUT_OF_RANGE when there is no floor segment.
		return out, &OffsetOutOfRangeError{Offset: offset, LogStartOffset: start, LogEndOffset: leo, Dir: l.dir,
			What: fmt.Sprintf("no segment holds it, the first starts at %d", segs[0].baseOffset)}
	}
	maxOffset := leo
	var maxPos *offsetPosition
	switch isolation {
	case FetchHighWatermark:
		maxOffset = hw
	case FetchTxnCommitted:
		maxOffset = lso
	}
	if offset >= maxOffset {
		return out, nil
	}
	if maxOffset < leo {
		p, err := l.positionOf(segs, maxOffset, isolation)
		if err != nil {
			return out, l.fail("read", err)
		}
		maxPos = p
	}
	var hdr [record.HeaderSize]byte
	for i := first; i < len(segs); i++ {
		s := segs[i]
		if s.baseOffset >= maxOffset && !(maxPos != nil && maxPos.segBase == s.baseOffset) {
			break
		}
		limit := s.Size()
		if s == end.seg {
			limit = min(limit, end.pos)
		}
		if maxPos != nil && maxPos.segBase == s.baseOffset {
			limit = maxPos.pos
		}
		slice, firstBatchSize, found, err := s.read(offset, maxBytes, limit, minOneMessage, hdr[:])
		if err != nil {
			return out, l.fail("read", err)
		}
		if !found {
			continue // offset is in a gap or past this segment's data
		}
		out.Records = slice
		out.FirstEntryIncomplete = slice.Size > 0 && slice.Size < firstBatchSize
		if isolation == FetchTxnCommitted && slice.Size > 0 {
			upper, err := l.upperBoundOffset(segs, i, slice, maxOffset)
			if err != nil {
				return out, l.fail("read", err)
			}
			if out.AbortedTxns, err = collectAbortedTxns(segs[i:], offset, upper); err != nil {
				// Answering "none aborted" would show aborted records to a
				// read_committed consumer; fail the read instead.
				return out, l.fail("read txn index", err)
			}
		}
		return out, nil
	}
	return out, nil
}

// lastStableOffset is the first offset of an unfinished transaction,
// raised to the log start (a transaction may begin below it) and bounded by
// the high watermark, as Kafka's maybeIncrementFirstUnstableOffset does.
func (l *Log) lastStableOffset(hw int64) int64 {
	if fu := l.firstUnstable.Load(); fu >= 0 && fu < hw {
		return max(fu, l.logStartOffset.Load())
	}
	return hw
}

// positionOf finds where maxOffset sits: the segment holding it and the
// position of the batch that starts there. The high watermark and LSO
// always fall on batch boundaries; their positions are cached until they
// move (Kafka keeps LogOffsetMetadata for them).
func (l *Log) positionOf(segs []*LogSegment, off int64, isolation FetchIsolation) (*offsetPosition, error) {
	cache := &l.hwPos
	if isolation == FetchTxnCommitted {
		cache = &l.lsoPos
	}
	gen := l.positionsGen.Load() // before the search: see forgetPositionsLocked
	if p := cache.Load(); p != nil && p.offset == off && p.gen == gen {
		if i := floorSegment(segs, off); i >= 0 && segs[i].baseOffset == p.segBase {
			return p, nil
		}
	}
	i := floorSegment(segs, off)
	if i < 0 {
		return &offsetPosition{offset: off, segBase: segs[0].baseOffset, pos: 0, gen: gen}, nil
	}
	s := segs[i]
	var hdr [record.HeaderSize]byte
	size := s.Size()
	pos, _, found, err := s.translateOffset(off, size, hdr[:])
	if err != nil {
		return nil, err
	}
	if !found {
		pos = size
	}
	p := &offsetPosition{offset: off, segBase: s.baseOffset, pos: pos, gen: gen}
	cache.Store(p)
	return p, nil
}

// upperBoundOffset is an offset past the data returned, for collecting
// aborted transactions: that of the first offset index entry at or beyond
// the slice's end, else where the segment's data ends (Kafka's
// fetchUpperBoundOffset). maxBytes may cut the slice inside a batch, so the
// bytes at its end need not be a batch header.
func (l *Log) upperBoundOffset(segs []*LogSegment, i int, slice FileSlice, maxOffset int64) (int64, error) {
	s := segs[i]
	if off, ok := s.offsetIndex.FetchUpperBoundOffset(int32(slice.Position), slice.Size); ok {
		return min(off, maxOffset), nil
	}
	if i+1 < len(segs) {
		return min(segs[i+1].baseOffset, maxOffset), nil
	}
	return maxOffset, nil
}

// collectAbortedTxns gathers the aborted transactions overlapping
// [start, upper) from the segments' transaction indexes, stopping at the
// first index whose search is complete (Kafka's
// collectAbortedTransactions).
func collectAbortedTxns(segs []*LogSegment, start, upper int64) ([]index.AbortedTxn, error) {
	var out []index.AbortedTxn
	for _, s := range segs {
		txns, complete, err := s.txnIndex.CollectAbortedTxns(start, upper)
		if err != nil {
			return nil, err
		}
		out = append(out, txns...)
		if complete {
			break
		}
	}
	return out, nil
}
