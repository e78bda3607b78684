package validator

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/record"
)

// ValidateReplicated checks batches a follower or mirror fetched, which
// already carry their offsets, epochs and timestamps
// (analyzeAndValidateRecords for a non-leader append). Each batch must be
// whole, magic 2, with a valid CRC and a known codec, and cover offsets
// after the previous batch's. Records are not decoded, nothing is
// decompressed, and max.message.bytes does not apply (ignoreRecordSize).
// segment.bytes bounds each batch, not the whole set: a fetch returns up to
// replica.fetch.max.bytes (or the mirror's fetch size) per partition, which
// may exceed a small segment.bytes, and the log appends such a set over
// several segments (Info.Split). Kafka checks the whole set in
// UnifiedLog.append on every path and avoids the failure by configuration
// (segment.bytes at least 1 MiB since Kafka 4.0, KIP-1030, no less than the
// default per-partition fetch); Strait accepts segment.bytes down to 14, so
// only a batch that no segment can hold is refused. Batches are not
// modified.
//
// nextOffset is the log end offset. A first offset below it is not an error
// here: whether to truncate or fail is the log's decision (Kafka's
// UnexpectedAppendOffsetException), made from Info.FirstOffset. An empty buf
// is accepted with an empty Info (FirstOffset -1), as a fetch may return no
// records.
func (v *Validator) ValidateReplicated(buf []byte, cfg Config, nextOffset int64) (Info, error) {
	batches, err := splitBatches(buf, nil)
	if err != nil {
		return Info{}, err
	}
	info := emptyInfo()
	prevLast := int64(-1)
	for i, b := range batches {
		if err := checkReplicatedBatch(b, prevLast, i); err != nil {
			return Info{}, err
		}
		if int64(len(b)) > int64(cfg.SegmentBytes) {
			return Info{}, record.Errorf(kerr.RecordListTooLarge,
				"record batch at offsets [%d, %d] is %d bytes, which exceeds the maximum configured segment size of %d: no segment can hold it",
				b.BaseOffset(), b.LastOffset(), len(b), cfg.SegmentBytes)
		}
		prevLast = b.LastOffset()
		info.addBatch(b)
	}
	return info, nil
}

// checkReplicatedBatch checks one fetched batch. Every failure is
// CORRUPT_MESSAGE: the source sent something that is not a valid log.
func checkReplicatedBatch(b record.Batch, prevLast int64, index int) error {
	if err := checkCRC(b); err != nil {
		return err
	}
	if !b.Compression().Valid() {
		return record.Errorf(kerr.UnsupportedCompressionType, "unknown compression codec id %d", b.Compression())
	}
	base, delta := b.BaseOffset(), b.LastOffsetDelta()
	if base < 0 || delta < 0 || base > math.MaxInt64-int64(delta) {
		return corrupt("batch %d has an invalid offset range: base offset %d, last offset delta %d", index, base, delta)
	}
	// Compaction keeps a batch's offset range while removing records, and
	// keeps empty batches to preserve producer state, so a replicated batch
	// may hold fewer records than its range, even none.
	if count := b.RecordCount(); count < 0 || int64(count) > int64(delta)+1 {
		return corrupt("batch %d has %d records, outside [0, %d] for its offset range [%d, %d]", index, count, int64(delta)+1, base, b.LastOffset())
	}
	if base <= prevLast {
		return corrupt("out of order offsets: batch %d starts at %d, not after the previous batch's last offset %d", index, base, prevLast)
	}
	return nil
}
