// Package index holds a log segment's three indexes, in Apache Kafka's
// on-disk layouts so Kafka's DumpLogSegments reads our files:
//
//   - OffsetIndex (.index): 8-byte entries, relative offset int32 and file
//     position int32, big-endian (Kafka's OffsetIndex).
//   - TimeIndex (.timeindex): 12-byte entries, timestamp int64 and relative
//     offset int32 (Kafka's TimeIndex).
//   - TxnIndex (.txnindex): 34-byte AbortedTxn entries (Kafka's
//     TransactionIndex).
//
// Unlike Kafka we do not mmap a preallocated file. Each index keeps its raw
// entry bytes in memory and writes every new entry through to the end of the
// file, so the file is always exactly entries*entrySize bytes and never needs
// Kafka's trimToValidSize on close. Loading is lazy, after Kafka's LazyIndex:
// Open only records the path and the file is read on first use, so opening
// the thousands of inactive segments of a broker is cheap.
//
// Because loading is lazy, any first use may hit an IO error. Calls with an
// error result (appends, TruncateTo, Reset, Flush, SanityCheck, Load, Entry,
// and the transaction index's reads) return it. The offset and time index
// lookups (Lookup, LastOffset, LastEntry, FetchUpperBoundOffset, Entries,
// IsFull) keep Kafka's error-free shape: until a load succeeds they answer
// as for an empty index, which is safe for a reader (it scans the segment
// from its start), and every later call retries the load. Callers that
// must see the error call Load first.
//
// Each index allows one writer and many concurrent readers. Readers take a
// read lock on the in-memory entries only; file IO (write, truncate, fsync)
// runs under a separate writer mutex, so a lookup never waits for an fsync.
package index
