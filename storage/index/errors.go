package index

import "errors"

// Sentinel errors. Operations wrap them with %w and the path involved.
var (
	// ErrOffsetOverflow follows Kafka's IndexOffsetOverflowException: the
	// offset is below the base offset or more than MaxInt32 above it, so it
	// cannot be stored as a 4-byte relative offset. The segment must roll.
	ErrOffsetOverflow = errors.New("index: offset does not fit a relative offset")
	// ErrInvalidOffset follows Kafka's InvalidOffsetException: an append
	// whose offset does not advance past the last entry's.
	ErrInvalidOffset = errors.New("index: offset is not larger than the last indexed offset")
	// ErrInvalidTimestamp is Kafka's IllegalStateException for a time index
	// append whose timestamp is below the last entry's.
	ErrInvalidTimestamp = errors.New("index: timestamp is smaller than the last indexed timestamp")
	// ErrIndexFull is returned by an append to an index holding maxEntries
	// entries (Kafka's "Attempt to append to a full index").
	ErrIndexFull = errors.New("index: index is full")
	// ErrInvalidMaxIndexSize rejects a maxIndexSize smaller than one entry.
	ErrInvalidMaxIndexSize = errors.New("index: max index size is smaller than one entry")
	// ErrCorruptIndex follows Kafka's CorruptIndexException: SanityCheck
	// found an index recovery must rebuild.
	ErrCorruptIndex = errors.New("index: corrupt index")
	// ErrUnknownTxnVersion is a transaction index entry whose version this
	// code does not know (Kafka: "Unexpected aborted transaction version").
	ErrUnknownTxnVersion = errors.New("index: unknown aborted transaction version")
	// ErrEntryOutOfRange is Entry(i) with i outside [0, Entries()).
	ErrEntryOutOfRange = errors.New("index: entry number out of range")
	// ErrClosed is any use of an index after Close or Delete.
	ErrClosed = errors.New("index: index is closed")
)
