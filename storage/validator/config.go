package validator

import (
	"math"

	"github.com/strait-io/strait/storage/record"
)

// Defaults, as Kafka 4.x ships them (TopicConfig / ServerLogConfigs).
const (
	// DefaultTimestampAfterMaxMs is message.timestamp.after.max.ms: Kafka 4.0
	// lowered it from Long.MAX_VALUE to one hour.
	DefaultTimestampAfterMaxMs int64 = 3600000
	// DefaultMaxMessageBytes is max.message.bytes (1 MiB + LOG_OVERHEAD).
	DefaultMaxMessageBytes int32 = 1048588
	// DefaultSegmentBytes is segment.bytes.
	DefaultSegmentBytes int32 = 1 << 30
	// DefaultMaxDecompressedBytes bounds what one batch may decompress to.
	// Kafka has no such bound; see reliability spec §4.2 on decompression
	// bombs.
	DefaultMaxDecompressedBytes int64 = 256 << 20
)

// Config is the part of a topic's configuration validation depends on.
type Config struct {
	// TimestampType is message.timestamp.type.
	TimestampType record.TimestampType
	// TimestampBeforeMaxMs is message.timestamp.before.max.ms: how far in
	// the past a CreateTime timestamp may be.
	TimestampBeforeMaxMs int64
	// TimestampAfterMaxMs is message.timestamp.after.max.ms: how far in the
	// future a CreateTime timestamp may be.
	TimestampAfterMaxMs int64
	// Compacted is set when cleanup.policy contains compact: every record
	// then needs a key.
	Compacted bool
	// MaxMessageBytes is max.message.bytes, the largest batch accepted from
	// a producer.
	MaxMessageBytes int32
	// SegmentBytes is segment.bytes; one append may not exceed it.
	SegmentBytes int32
	// MaxDecompressedBytes bounds the decompressed size of one batch. It is
	// never taken below MaxMessageBytes, and a value <= 0 means the default.
	MaxDecompressedBytes int64
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		TimestampType:        record.CreateTime,
		TimestampBeforeMaxMs: math.MaxInt64,
		TimestampAfterMaxMs:  DefaultTimestampAfterMaxMs,
		MaxMessageBytes:      DefaultMaxMessageBytes,
		SegmentBytes:         DefaultSegmentBytes,
		MaxDecompressedBytes: DefaultMaxDecompressedBytes,
	}
}

// decompressLimit is the most bytes one batch's records may expand to.
func (c Config) decompressLimit() int64 {
	limit := c.MaxDecompressedBytes
	if limit <= 0 {
		limit = DefaultMaxDecompressedBytes
	}
	return max(limit, int64(c.MaxMessageBytes))
}
