package index

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/strait-io/strait/storage/vfs"
)

// OffsetEntrySize is the size of one .index entry: relative offset int32
// and position int32, big-endian (Kafka's OffsetIndex.ENTRY_SIZE).
const OffsetEntrySize = 8

// offsetPosition is one decoded entry (Kafka's OffsetPosition).
type offsetPosition struct {
	Offset   int64
	Position int32
}

// OffsetIndex maps offsets to positions in a segment's .log file. It is
// sparse: the segment adds an entry every index.interval.bytes. It follows
// Kafka's OffsetIndex; see the package comment for how storage differs.
type OffsetIndex struct {
	baseOffset int64
	maxEntries int
	file       *entryFile
}

// OpenOffsetIndex records the index at path; the file is read (or created)
// on first use. maxIndexSize is segment.index.bytes.
func OpenOffsetIndex(fsys vfs.FS, path string, baseOffset int64, maxIndexSize int) (*OffsetIndex, error) {
	maxEntries, err := maxEntriesFor(maxIndexSize, OffsetEntrySize)
	if err != nil {
		return nil, fmt.Errorf("open offset index %s: %w", path, err)
	}
	return &OffsetIndex{
		baseOffset: baseOffset,
		maxEntries: maxEntries,
		file:       newEntryFile(fsys, path, OffsetEntrySize, true),
	}, nil
}

// BaseOffset is the segment's base offset, the origin of relative offsets.
func (x *OffsetIndex) BaseOffset() int64 { return x.baseOffset }

// MaxEntries is maxIndexSize / 8.
func (x *OffsetIndex) MaxEntries() int { return x.maxEntries }

// Path is the file's current path.
func (x *OffsetIndex) Path() string { return x.file.Path() }

// Load reads the file now instead of on first use, returning any IO error.
func (x *OffsetIndex) Load() error { return x.file.Load() }

// Entries is the number of entries.
func (x *OffsetIndex) Entries() int { return x.file.Entries() }

// IsFull reports whether no entry can be appended; the segment then rolls.
func (x *OffsetIndex) IsFull() bool { return x.Entries() >= x.maxEntries }

func (x *OffsetIndex) parse(buf []byte, i int) offsetPosition {
	e := buf[i*OffsetEntrySize:]
	return offsetPosition{
		Offset:   x.baseOffset + int64(int32(binary.BigEndian.Uint32(e))),
		Position: int32(binary.BigEndian.Uint32(e[4:])),
	}
}

func (x *OffsetIndex) last(buf []byte) offsetPosition {
	n := len(buf) / OffsetEntrySize
	if n == 0 {
		return offsetPosition{Offset: x.baseOffset}
	}
	return x.parse(buf, n-1)
}

// Append adds an entry. The offset must exceed the last entry's
// (ErrInvalidOffset) and fit a relative offset (ErrOffsetOverflow), and the
// index must not be full (ErrIndexFull); the checks run in Kafka's order.
func (x *OffsetIndex) Append(offset int64, position int32) error {
	return x.file.write(func(buf []byte) error {
		n := len(buf) / OffsetEntrySize
		if n >= x.maxEntries {
			return fmt.Errorf("%w: %d entries (%s)", ErrIndexFull, n, x.file.path)
		}
		if last := x.last(buf); n > 0 && offset <= last.Offset {
			return fmt.Errorf("%w: offset %d at entry %d, last offset %d (%s)",
				ErrInvalidOffset, offset, n, last.Offset, x.file.path)
		}
		rel, err := relativeOffset(x.baseOffset, offset, x.file.path)
		if err != nil {
			return err
		}
		var e [OffsetEntrySize]byte
		binary.BigEndian.PutUint32(e[:], uint32(rel))
		binary.BigEndian.PutUint32(e[4:], uint32(position))
		return x.file.appendLocked(e[:])
	})
}

// Lookup returns the entry with the largest offset <= target, or
// (baseOffset, 0) when there is none. The segment reads forward from that
// position to find target.
func (x *OffsetIndex) Lookup(target int64) (offset int64, position int32) {
	out := offsetPosition{Offset: x.baseOffset}
	_ = x.file.read(func(buf []byte) error {
		n := len(buf) / OffsetEntrySize
		i := sort.Search(n, func(i int) bool { return x.parse(buf, i).Offset > target }) - 1
		if i >= 0 {
			out = x.parse(buf, i)
		}
		return nil
	})
	return out.Offset, out.Position
}

// FetchUpperBoundOffset returns the offset of the first entry whose
// position is at or beyond fetchPosition+fetchSize: an offset certainly
// outside a fetch of fetchSize bytes from fetchPosition (Kafka's
// fetchUpperBoundOffset). ok is false when no entry lies that far.
func (x *OffsetIndex) FetchUpperBoundOffset(fetchPosition, fetchSize int32) (offset int64, ok bool) {
	// int64, unlike Kafka's int sum, so a large fetch cannot wrap negative.
	target := int64(fetchPosition) + int64(fetchSize)
	_ = x.file.read(func(buf []byte) error {
		n := len(buf) / OffsetEntrySize
		i := sort.Search(n, func(i int) bool { return int64(x.parse(buf, i).Position) >= target })
		if i < n {
			offset, ok = x.parse(buf, i).Offset, true
		}
		return nil
	})
	return offset, ok
}

// Entry returns the i-th entry. Unlike the lookups it reports errors: an
// i outside [0, Entries()) is ErrEntryOutOfRange (Kafka throws), and a
// failed load is returned.
func (x *OffsetIndex) Entry(i int) (offset int64, position int32, err error) {
	err = x.file.read(func(buf []byte) error {
		if n := len(buf) / OffsetEntrySize; i < 0 || i >= n {
			return fmt.Errorf("%w: entry %d of %d (%s)", ErrEntryOutOfRange, i, n, x.file.path)
		}
		e := x.parse(buf, i)
		offset, position = e.Offset, e.Position
		return nil
	})
	return offset, position, err
}

// LastOffset is the last entry's offset, or the base offset when empty.
func (x *OffsetIndex) LastOffset() int64 {
	out := x.baseOffset
	_ = x.file.read(func(buf []byte) error {
		out = x.last(buf).Offset
		return nil
	})
	return out
}

// TruncateTo removes every entry with offset >= offset; truncating past the
// last entry does nothing.
func (x *OffsetIndex) TruncateTo(offset int64) error {
	return x.file.write(func(buf []byte) error {
		n := len(buf) / OffsetEntrySize
		keep := sort.Search(n, func(i int) bool { return x.parse(buf, i).Offset >= offset })
		return x.file.truncateLocked(keep)
	})
}

// SanityCheck reports ErrCorruptIndex when the entries cannot have been
// written by Append. It checks more than Kafka's sanityCheck (last offset
// below the base offset): every relative offset must be non-negative,
// offsets strictly increasing and positions non-negative and
// non-decreasing, which also catches a zero-filled tail left by a crash.
func (x *OffsetIndex) SanityCheck() error {
	return x.file.read(func(buf []byte) error {
		n := len(buf) / OffsetEntrySize
		var prev offsetPosition
		for i := range n {
			e := x.parse(buf, i)
			switch {
			case e.Offset < x.baseOffset:
				return x.corrupt("entry %d has offset %d below the base offset %d", i, e.Offset, x.baseOffset)
			case e.Position < 0:
				return x.corrupt("entry %d has negative position %d", i, e.Position)
			case i > 0 && e.Offset <= prev.Offset:
				return x.corrupt("entry %d has offset %d, not above the previous %d", i, e.Offset, prev.Offset)
			case i > 0 && e.Position < prev.Position:
				return x.corrupt("entry %d has position %d, below the previous %d", i, e.Position, prev.Position)
			}
			prev = e
		}
		return nil
	})
}

// corrupt builds a SanityCheck error; called inside read, so it reads path
// directly instead of re-taking the lock through Path.
func (x *OffsetIndex) corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: offset index %s: %s", ErrCorruptIndex, x.file.path, fmt.Sprintf(format, args...))
}

// Reset removes every entry.
func (x *OffsetIndex) Reset() error { return x.file.Reset() }

// Flush fsyncs the file (and its directory after creating it).
func (x *OffsetIndex) Flush() error { return x.file.Flush() }

// Close releases the file. The index is unusable afterwards.
func (x *OffsetIndex) Close() error { return x.file.Close() }

// Discard closes the index without writing the entries not yet in its
// file; see entryFile.Discard.
func (x *OffsetIndex) Discard() { x.file.Discard() }

// Rename moves the file to newPath.
func (x *OffsetIndex) Rename(newPath string) error { return x.file.Rename(newPath) }

// Delete closes the index and removes its file if it exists.
func (x *OffsetIndex) Delete() error { return x.file.Delete() }
