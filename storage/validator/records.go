package validator

import (
	"github.com/strait-io/strait/storage/record"
)

// minRecordSize is the smallest encoded v2 record: one byte each for the
// length, attributes, timestamp delta, offset delta, key length, value
// length and header count.
const minRecordSize = 7

// checkRecords decodes every record of b and applies LogValidator's
// per-record checks (validateRecord: key on compacted topics, timestamps)
// plus the structural ones the v2 iterator makes (count, nothing left over)
// and in-order offset deltas. Structural problems reject the batch at once;
// record problems are collected for the whole batch. It returns the
// greatest record timestamp, or record.NoTimestamp.
func (v *Validator) checkRecords(b record.Batch, cfg Config, nowMs int64) (int64, error) {
	count := b.RecordCount()
	limit := cfg.decompressLimit()
	// Bound the work a declared count can ask for before reading anything:
	// each record takes at least minRecordSize bytes of the stream.
	room, what := int64(len(b.Records())), "bytes of records"
	if b.Compression() != record.CodecNone {
		room, what = limit, "bytes the batch may decompress to"
	}
	if int64(count)*minRecordSize > room {
		return 0, invalidRecord("record batch declares %d records, more than the %d %s can hold", count, room, what)
	}
	rr, done, err := v.d.OpenRecords(b, limit)
	if err != nil {
		return 0, err
	}
	defer done()

	var (
		errs  recordErrors
		maxTs = record.NoTimestamp
		lat   = b.TimestampType() == record.LogAppendTime
	)
	for i := int32(0); i < count; i++ {
		// Keys, values and headers are skipped, never held: only their
		// lengths matter here.
		rec, err := rr.Next(false)
		if err != nil {
			return 0, err
		}
		if rec.OffsetDelta != i {
			// Kafka rebuilds such a batch; we never re-encode, and every v2
			// client writes deltas 0..n-1, so it is rejected instead.
			errs.add(i, false, "record has offset delta %d, expected %d: inner offsets must be 0..%d in order", rec.OffsetDelta, i, count-1)
			continue
		}
		if cfg.Compacted && rec.KeyLen < 0 {
			errs.add(i, false, "compacted topic cannot accept message without key")
			continue
		}
		if lat {
			errs.add(i, true, "invalid timestamp type in message %d: producer should not set timestamp type to LogAppendTime", i)
			continue
		}
		ts := b.BaseTimestamp() + rec.TimestampDelta
		if cfg.TimestampType == record.CreateTime && ts != record.NoTimestamp {
			if lo, hi, ok := timestampInRange(ts, nowMs, cfg); !ok {
				errs.add(i, true, "timestamp %d of message with offset %d is out of range: the timestamp should be within [%d, %d]",
					ts, b.BaseOffset()+int64(rec.OffsetDelta), lo, hi)
				continue
			}
		}
		maxTs = max(maxTs, ts)
	}
	if err := rr.Finish(); err != nil {
		return 0, err
	}
	if err := errs.err(); err != nil {
		return 0, err
	}
	return maxTs, nil
}
