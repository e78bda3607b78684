package validator

import (
	"fmt"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/record"
)

// ValidateAndAssignOffsets validates buf as a leader appends it and, only if
// every check passes, rewrites the batch headers in place: base offsets
// consecutive from nextOffset, the partition leader epoch, and the max
// timestamp (nowMs and the LogAppendTime bit on LogAppendTime topics, the
// computed maximum on CreateTime topics). On error buf is unchanged and the
// error is a *record.Error carrying the Kafka error code for the client,
// except ErrBadNextOffset for a bad nextOffset and ErrWrongOrigin.
//
// origin must be record.OriginClient or record.OriginCoordinator; followers
// use ValidateReplicated.
func (v *Validator) ValidateAndAssignOffsets(buf []byte, origin record.AppendOrigin, cfg Config,
	nowMs int64, nextOffset int64, leaderEpoch int32) (Info, error) {
	if origin == record.OriginReplication {
		return Info{}, ErrWrongOrigin
	}
	if nextOffset < 0 {
		return Info{}, fmt.Errorf("%w: next offset %d is negative", ErrBadNextOffset, nextOffset)
	}
	var one [1]record.Batch
	batches, err := splitBatches(buf, one[:0])
	if err != nil {
		return Info{}, err
	}
	if len(batches) == 0 {
		return Info{}, invalidRecord("record batch has no batches at all")
	}
	// Produce v3+ carries exactly one v2 batch per partition
	// (ProduceRequest.validateRecords). The broker's own appends may carry
	// several, e.g. markers for many producers at once.
	if origin == record.OriginClient && len(batches) > 1 {
		return Info{}, invalidRecord("produce requests may contain exactly one record batch per partition, got %d", len(batches))
	}

	// Header checks first, for every batch, as
	// UnifiedLog.analyzeAndValidateRecords does before LogValidator runs.
	total := 0
	for _, b := range batches {
		if err := checkHeader(b, origin, cfg); err != nil {
			return Info{}, err
		}
		total += len(b)
	}
	// UnifiedLog.append: one append must fit in a segment.
	if int64(total) > int64(cfg.SegmentBytes) {
		return Info{}, record.Errorf(kerr.RecordListTooLarge,
			"message batch size is %d bytes in append, which exceeds the maximum configured segment size of %d", total, cfg.SegmentBytes)
	}

	maxTimestamps := make([]int64, len(batches))
	var records int64
	for i, b := range batches {
		if err := checkBatch(b, origin); err != nil {
			return Info{}, err
		}
		if maxTimestamps[i], err = v.checkRecords(b, cfg, nowMs); err != nil {
			return Info{}, err
		}
		records += int64(b.RecordCount())
	}
	if nextOffset > math.MaxInt64-records {
		return Info{}, fmt.Errorf("%w: %d records from offset %d overflow", ErrBadNextOffset, records, nextOffset)
	}

	// Everything passed: only now is the buffer written.
	info := emptyInfo()
	offset := nextOffset
	for i, b := range batches {
		b.SetBaseOffset(offset)
		offset += int64(b.RecordCount())
		b.SetPartitionLeaderEpoch(leaderEpoch)
		if cfg.TimestampType == record.LogAppendTime {
			b.SetMaxTimestamp(record.LogAppendTime, nowMs)
		} else {
			b.SetMaxTimestamp(record.CreateTime, maxTimestamps[i])
		}
		info.addBatch(b)
	}
	return info, nil
}

// checkHeader holds the checks of UnifiedLog.analyzeAndValidateRecords, in
// its order, plus the codec check.
func checkHeader(b record.Batch, origin record.AppendOrigin, cfg Config) error {
	// Clients send offset 0; anything else is a client bug or an attempt to
	// pick offsets.
	if origin == record.OriginClient && b.BaseOffset() != 0 {
		return invalidRecord("the baseOffset of the record batch in the append should be 0, but it is %d", b.BaseOffset())
	}
	if b.Size() > int(cfg.MaxMessageBytes) {
		return record.Errorf(kerr.MessageTooLarge,
			"the record batch size in the append is %d bytes which exceeds the maximum configured value of %d", b.Size(), cfg.MaxMessageBytes)
	}
	if err := checkCRC(b); err != nil {
		return err
	}
	if !b.Compression().Valid() {
		return record.Errorf(kerr.UnsupportedCompressionType, "unknown compression codec id %d", b.Compression())
	}
	return nil
}

func checkCRC(b record.Batch) error {
	if stored, computed := b.CRC(), b.ComputeCRC(); stored != computed {
		return corrupt("record is corrupt (stored crc = %d, computed crc = %d)", stored, computed)
	}
	return nil
}

// checkBatch is LogValidator.validateBatch for v2. The offset range and
// count rules apply to the broker's own batches too: offsets are assigned
// from the count, so a batch whose lastOffsetDelta disagreed with it would
// claim offsets it does not own.
func checkBatch(b record.Batch, origin record.AppendOrigin) error {
	span := int64(b.LastOffsetDelta()) + 1
	if span <= 0 {
		return invalidRecord("batch has an invalid offset range: [%d, %d]", b.BaseOffset(), b.LastOffset())
	}
	count := b.RecordCount()
	if count <= 0 {
		return invalidRecord("invalid reported count for record batch: %d", count)
	}
	if span != int64(count) {
		return invalidRecord("inconsistent batch offset range [%d, %d] and count of records %d", b.BaseOffset(), b.LastOffset(), count)
	}
	if origin != record.OriginClient {
		return nil
	}
	if b.IsControl() {
		return invalidRecord("clients are not allowed to write control records")
	}
	if b.HasProducerID() && b.BaseSequence() < 0 {
		return invalidRecord("invalid sequence number %d in record batch with producerId %d", b.BaseSequence(), b.ProducerID())
	}
	return nil
}
