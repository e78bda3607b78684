package index

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/strait-io/strait/storage/vfs"
)

// TimeEntrySize is the size of one .timeindex entry: timestamp int64 and
// relative offset int32, big-endian (Kafka's TimeIndex.ENTRY_SIZE).
const TimeEntrySize = 12

// NoTimestamp is Kafka's RecordBatch.NO_TIMESTAMP, the timestamp Lookup and
// LastEntry report for an empty index.
const NoTimestamp int64 = -1

// timestampOffset is one decoded entry (Kafka's TimestampOffset): every
// record after Offset has a timestamp above Timestamp, the largest seen up
// to Offset.
type timestampOffset struct {
	Timestamp int64
	Offset    int64
}

// TimeIndex maps timestamps to offsets for ListOffsets by time and for
// time-based retention. Timestamps in it strictly increase. It follows
// Kafka's TimeIndex; see the package comment for how storage differs.
type TimeIndex struct {
	baseOffset int64
	maxEntries int
	file       *entryFile
}

// OpenTimeIndex records the index at path; the file is read (or created)
// on first use. maxIndexSize is segment.index.bytes.
func OpenTimeIndex(fsys vfs.FS, path string, baseOffset int64, maxIndexSize int) (*TimeIndex, error) {
	maxEntries, err := maxEntriesFor(maxIndexSize, TimeEntrySize)
	if err != nil {
		return nil, fmt.Errorf("open time index %s: %w", path, err)
	}
	return &TimeIndex{
		baseOffset: baseOffset,
		maxEntries: maxEntries,
		file:       newEntryFile(fsys, path, TimeEntrySize, true),
	}, nil
}

// BaseOffset is the segment's base offset, the origin of relative offsets.
func (x *TimeIndex) BaseOffset() int64 { return x.baseOffset }

// MaxEntries is maxIndexSize / 12.
func (x *TimeIndex) MaxEntries() int { return x.maxEntries }

// Path is the file's current path.
func (x *TimeIndex) Path() string { return x.file.Path() }

// Load reads the file now instead of on first use, returning any IO error.
func (x *TimeIndex) Load() error { return x.file.Load() }

// Entries is the number of entries.
func (x *TimeIndex) Entries() int { return x.file.Entries() }

// IsFull reports whether the segment must roll. As in Kafka it is true one
// entry early: the last slot is kept for the final entry a segment adds
// when it rolls or closes (MaybeAppend with skipFullCheck).
func (x *TimeIndex) IsFull() bool { return x.Entries() >= x.maxEntries-1 }

func (x *TimeIndex) parse(buf []byte, i int) timestampOffset {
	e := buf[i*TimeEntrySize:]
	return timestampOffset{
		Timestamp: int64(binary.BigEndian.Uint64(e)),
		Offset:    x.baseOffset + int64(int32(binary.BigEndian.Uint32(e[8:]))),
	}
}

func (x *TimeIndex) last(buf []byte) timestampOffset {
	n := len(buf) / TimeEntrySize
	if n == 0 {
		return timestampOffset{Timestamp: NoTimestamp, Offset: x.baseOffset}
	}
	return x.parse(buf, n-1)
}

// MaybeAppend adds (timestamp, offset) when timestamp is above the last
// entry's; otherwise it does nothing, which is how re-adding the last entry
// on roll or close is a no-op. In Kafka's order it fails when the index is
// full (unless skipFullCheck), when offset is below the last entry's
// (ErrInvalidOffset), when timestamp is below the last entry's
// (ErrInvalidTimestamp), and when offset does not fit a relative offset
// (ErrOffsetOverflow). Even with skipFullCheck the file never grows beyond
// maxEntries (Kafka's mmap would overflow there).
func (x *TimeIndex) MaybeAppend(timestamp, offset int64, skipFullCheck bool) error {
	return x.file.write(func(buf []byte) error {
		n := len(buf) / TimeEntrySize
		if (!skipFullCheck && n >= x.maxEntries-1) || n >= x.maxEntries {
			return fmt.Errorf("%w: %d entries (%s)", ErrIndexFull, n, x.file.path)
		}
		last := x.last(buf)
		if n > 0 && offset < last.Offset {
			return fmt.Errorf("%w: offset %d at entry %d, last offset %d (%s)",
				ErrInvalidOffset, offset, n, last.Offset, x.file.path)
		}
		if n > 0 && timestamp < last.Timestamp {
			return fmt.Errorf("%w: timestamp %d at entry %d, last timestamp %d (%s)",
				ErrInvalidTimestamp, timestamp, n, last.Timestamp, x.file.path)
		}
		if timestamp <= last.Timestamp {
			return nil
		}
		rel, err := relativeOffset(x.baseOffset, offset, x.file.path)
		if err != nil {
			return err
		}
		var e [TimeEntrySize]byte
		binary.BigEndian.PutUint64(e[:], uint64(timestamp))
		binary.BigEndian.PutUint32(e[8:], uint32(rel))
		return x.file.appendLocked(e[:])
	})
}

// Lookup returns the entry with the largest timestamp <= target, or
// (NoTimestamp, baseOffset) when there is none.
func (x *TimeIndex) Lookup(target int64) (timestamp, offset int64) {
	out := timestampOffset{Timestamp: NoTimestamp, Offset: x.baseOffset}
	_ = x.file.read(func(buf []byte) error {
		n := len(buf) / TimeEntrySize
		i := sort.Search(n, func(i int) bool { return x.parse(buf, i).Timestamp > target }) - 1
		if i >= 0 {
			out = x.parse(buf, i)
		}
		return nil
	})
	return out.Timestamp, out.Offset
}

// LastEntry is the last entry, or (NoTimestamp, baseOffset) when empty. A
// segment reads its max timestamp so far from it after loading (call Load
// first to tell a failed load from an empty index).
func (x *TimeIndex) LastEntry() (timestamp, offset int64) {
	out := timestampOffset{Timestamp: NoTimestamp, Offset: x.baseOffset}
	_ = x.file.read(func(buf []byte) error {
		out = x.last(buf)
		return nil
	})
	return out.Timestamp, out.Offset
}

// Entry returns the i-th entry. Unlike the lookups it reports errors: an
// i outside [0, Entries()) is ErrEntryOutOfRange (Kafka throws), and a
// failed load is returned.
func (x *TimeIndex) Entry(i int) (timestamp, offset int64, err error) {
	err = x.file.read(func(buf []byte) error {
		if n := len(buf) / TimeEntrySize; i < 0 || i >= n {
			return fmt.Errorf("%w: entry %d of %d (%s)", ErrEntryOutOfRange, i, n, x.file.path)
		}
		e := x.parse(buf, i)
		timestamp, offset = e.Timestamp, e.Offset
		return nil
	})
	return timestamp, offset, err
}

// TruncateTo removes every entry with offset >= offset. Kafka binary-searches
// for an entry at exactly offset and may keep an earlier entry with the
// same offset; we cut at the first entry with offset >= offset, which is
// what Kafka's contract states.
func (x *TimeIndex) TruncateTo(offset int64) error {
	return x.file.write(func(buf []byte) error {
		n := len(buf) / TimeEntrySize
		keep := sort.Search(n, func(i int) bool { return x.parse(buf, i).Offset >= offset })
		return x.file.truncateLocked(keep)
	})
}

// SanityCheck reports ErrCorruptIndex when the entries cannot have been
// written by MaybeAppend. Beyond Kafka's checks (last timestamp below the
// first, last offset below the base offset) it requires every relative
// offset to be non-negative, timestamps to strictly increase and offsets
// not to decrease, which also catches a zero-filled tail left by a crash.
func (x *TimeIndex) SanityCheck() error {
	return x.file.read(func(buf []byte) error {
		n := len(buf) / TimeEntrySize
		var prev timestampOffset
		for i := range n {
			e := x.parse(buf, i)
			switch {
			case e.Offset < x.baseOffset:
				return x.corrupt("entry %d has offset %d below the base offset %d", i, e.Offset, x.baseOffset)
			case i > 0 && e.Timestamp <= prev.Timestamp:
				return x.corrupt("entry %d has timestamp %d, not above the previous %d", i, e.Timestamp, prev.Timestamp)
			case i > 0 && e.Offset < prev.Offset:
				return x.corrupt("entry %d has offset %d, below the previous %d", i, e.Offset, prev.Offset)
			}
			prev = e
		}
		return nil
	})
}

// corrupt builds a SanityCheck error; called inside read, so it reads path
// directly instead of re-taking the lock through Path.
func (x *TimeIndex) corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: time index %s: %s", ErrCorruptIndex, x.file.path, fmt.Sprintf(format, args...))
}

// Reset removes every entry.
func (x *TimeIndex) Reset() error { return x.file.Reset() }

// Flush fsyncs the file (and its directory after creating it).
func (x *TimeIndex) Flush() error { return x.file.Flush() }

// Close releases the file. The index is unusable afterwards.
func (x *TimeIndex) Close() error { return x.file.Close() }

// Discard closes the index without writing the entries not yet in its
// file; see entryFile.Discard.
func (x *TimeIndex) Discard() { x.file.Discard() }

// Rename moves the file to newPath.
func (x *TimeIndex) Rename(newPath string) error { return x.file.Rename(newPath) }

// Delete closes the index and removes its file if it exists.
func (x *TimeIndex) Delete() error { return x.file.Delete() }
