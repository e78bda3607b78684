// Package validator checks record batches before anything reaches a log and
// assigns offsets to them in place. It plays the role of Kafka's
// LogValidator together with the batch checks of
// UnifiedLog.analyzeAndValidateRecords and UnifiedLog.append.
//
// Validation is two-phase: every check runs first, reading the buffer only,
// and the header fields a leader owns (base offset, partition leader epoch,
// max timestamp and timestamp type) are written only once the whole buffer
// has passed. A rejected buffer is therefore byte-for-byte what the client
// sent, and an accepted one differs only in those header fields and the CRC
// that covers them: records are never re-encoded or recompressed, which is
// what lets a mirror store batches byte-identical to its source.
//
// Records are decoded as a stream (record.RecordReader) without keeping
// keys, values or headers, and compressed batches are decompressed through a
// bounded reader, so a small batch that expands to gigabytes costs at most
// Config.MaxDecompressedBytes of decompression work and almost no memory.
package validator
