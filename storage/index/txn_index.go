package index

import (
	"fmt"

	"github.com/strait-io/strait/storage/vfs"
)

// TxnIndex lists the transactions aborted by markers in one segment, for
// READ_COMMITTED fetches (Kafka's TransactionIndex). Entries are ordered by
// LastOffset (the abort marker's offset). A transaction may start in an
// earlier segment, so FirstOffset can be below the segment's start offset.
type TxnIndex struct {
	startOffset int64
	file        *entryFile
}

// OpenTxnIndex records the index at path. As in Kafka the file is created
// only by the first Append, so segments without aborted transactions have
// no .txnindex; a missing file reads as empty.
func OpenTxnIndex(fsys vfs.FS, path string, startOffset int64) (*TxnIndex, error) {
	return &TxnIndex{
		startOffset: startOffset,
		file:        newEntryFile(fsys, path, AbortedTxnEntrySize, false),
	}, nil
}

// StartOffset is the segment's base offset.
func (x *TxnIndex) StartOffset() int64 { return x.startOffset }

// Path is the file's current path.
func (x *TxnIndex) Path() string { return x.file.Path() }

// Load reads the file (if it exists) now instead of on first use,
// returning any IO error.
func (x *TxnIndex) Load() error { return x.file.Load() }

// Entries is the number of entries.
func (x *TxnIndex) Entries() int { return x.file.Entries() }

// Append adds t. Its LastOffset must exceed the last entry's, as Kafka
// requires. Kafka checks that only against entries appended since the
// index was opened; we also check against entries already in the file.
func (x *TxnIndex) Append(t AbortedTxn) error {
	return x.file.write(func(buf []byte) error {
		if n := len(buf) / AbortedTxnEntrySize; n > 0 {
			last, err := decodeAbortedTxn(buf, n-1)
			if err != nil {
				return x.wrap(err)
			}
			if t.LastOffset <= last.LastOffset {
				return fmt.Errorf("%w: aborted transaction last offset %d, not above the last indexed %d (%s)",
					ErrInvalidOffset, t.LastOffset, last.LastOffset, x.file.path)
			}
		}
		return x.file.appendLocked(t.encode())
	})
}

// wrap names the file in a decoding error; called with the lock held.
func (x *TxnIndex) wrap(err error) error {
	return fmt.Errorf("transaction index %s: %w", x.file.path, err)
}

// each decodes entries in order until fn returns false.
func (x *TxnIndex) each(buf []byte, fn func(i int, t AbortedTxn) bool) error {
	for i := range len(buf) / AbortedTxnEntrySize {
		t, err := decodeAbortedTxn(buf, i)
		if err != nil {
			return x.wrap(err)
		}
		if !fn(i, t) {
			return nil
		}
	}
	return nil
}

// All returns every entry.
func (x *TxnIndex) All() ([]AbortedTxn, error) {
	var out []AbortedTxn
	err := x.file.read(func(buf []byte) error {
		return x.each(buf, func(_ int, t AbortedTxn) bool {
			out = append(out, t)
			return true
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CollectAbortedTxns returns the transactions overlapping the fetch range
// [fetchOffset, upperBoundOffset): LastOffset >= fetchOffset and
// FirstOffset < upperBoundOffset. complete is true once an entry's
// LastStableOffset reaches upperBoundOffset: no later segment can hold a
// transaction aborted within the range, so the caller stops searching
// (Kafka's collectAbortedTxns). Unlike the offset and time index lookups
// it returns errors: answering "no aborted transactions" for an index that
// cannot be read would show aborted records to READ_COMMITTED consumers.
// Kafka likewise fails the fetch.
func (x *TxnIndex) CollectAbortedTxns(fetchOffset, upperBoundOffset int64) (txns []AbortedTxn, complete bool, err error) {
	err = x.file.read(func(buf []byte) error {
		return x.each(buf, func(_ int, t AbortedTxn) bool {
			if t.LastOffset >= fetchOffset && t.FirstOffset < upperBoundOffset {
				txns = append(txns, t)
			}
			if t.LastStableOffset >= upperBoundOffset {
				complete = true
				return false
			}
			return true
		})
	})
	if err != nil {
		return nil, false, err
	}
	return txns, complete, nil
}

// TruncateTo removes the first entry with LastOffset >= offset and every
// entry after it (Kafka's truncateTo).
func (x *TxnIndex) TruncateTo(offset int64) error {
	return x.file.write(func(buf []byte) error {
		keep := len(buf) / AbortedTxnEntrySize
		err := x.each(buf, func(i int, t AbortedTxn) bool {
			if t.LastOffset >= offset {
				keep = i
				return false
			}
			return true
		})
		if err != nil {
			return err
		}
		return x.file.truncateLocked(keep)
	})
}

// SanityCheck reports ErrCorruptIndex when an entry's LastOffset is below
// the segment's start offset (Kafka's check: the marker must lie in this
// segment), when LastOffsets do not increase or FirstOffset exceeds
// LastOffset (our additions: Append never writes those), and returns
// ErrUnknownTxnVersion for an entry of an unknown version.
func (x *TxnIndex) SanityCheck() error {
	return x.file.read(func(buf []byte) error {
		var prev AbortedTxn
		var bad error
		err := x.each(buf, func(i int, t AbortedTxn) bool {
			switch {
			case t.LastOffset < x.startOffset:
				bad = x.corrupt("entry %d: %v has last offset below the start offset %d", i, t, x.startOffset)
			case t.FirstOffset > t.LastOffset:
				bad = x.corrupt("entry %d: %v has first offset above its last offset", i, t)
			case i > 0 && t.LastOffset <= prev.LastOffset:
				bad = x.corrupt("entry %d: %v has last offset not above the previous %d", i, t, prev.LastOffset)
			}
			prev = t
			return bad == nil
		})
		if err != nil {
			return err
		}
		return bad
	})
}

// corrupt builds a SanityCheck error; called with the lock held.
func (x *TxnIndex) corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: transaction index %s: %s", ErrCorruptIndex, x.file.path, fmt.Sprintf(format, args...))
}

// Reset removes every entry; an existing file is truncated to 0, a missing
// one stays missing.
func (x *TxnIndex) Reset() error { return x.file.Reset() }

// Flush fsyncs the file if it exists (and its directory after creating it).
func (x *TxnIndex) Flush() error { return x.file.Flush() }

// Close releases the file. The index is unusable afterwards.
func (x *TxnIndex) Close() error { return x.file.Close() }

// Discard closes the index without writing the entries not yet in its
// file; see entryFile.Discard.
func (x *TxnIndex) Discard() { x.file.Discard() }

// Rename moves the file to newPath; a file never created is not an error.
func (x *TxnIndex) Rename(newPath string) error { return x.file.Rename(newPath) }

// Delete closes the index and removes its file if it exists.
func (x *TxnIndex) Delete() error { return x.file.Delete() }
