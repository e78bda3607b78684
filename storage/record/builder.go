package record

import (
	"encoding/binary"
	"fmt"
)

// BatchSpec is the header of a batch to build.
type BatchSpec struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	ProducerID           int64 // NoProducerID for a plain producer
	ProducerEpoch        int16
	BaseSequence         int32 // NoSequence for a plain producer
	Transactional        bool
	Control              bool
	Codec                Codec
	TimestampType        TimestampType
	BaseTimestamp        int64
}

// Build encodes records into one v2 batch with a valid CRC. Each record's
// TimestampDelta is relative to spec.BaseTimestamp; OffsetDelta is set to
// its index. KeyLen/ValueLen of -1 encode null. c may be nil for
// uncompressed batches. The broker uses Build for the control batches it
// writes; tests and benchmarks use it to produce like a client.
func Build(spec BatchSpec, records []Record, c *Compressor) (Batch, error) {
	if len(records) == 0 {
		return nil, fmt.Errorf("record: a batch needs at least one record")
	}
	var body []byte
	maxTs := spec.BaseTimestamp
	for i, r := range records {
		body = appendRecord(body, r, int32(i))
		maxTs = max(maxTs, spec.BaseTimestamp+r.TimestampDelta)
	}
	if spec.Codec != CodecNone {
		if c == nil {
			return nil, fmt.Errorf("record: compressing with %s needs a Compressor", spec.Codec)
		}
		var err error
		if body, err = c.Compress(spec.Codec, nil, body); err != nil {
			return nil, err
		}
	}
	b := make([]byte, HeaderSize, HeaderSize+len(body))
	binary.BigEndian.PutUint64(b[baseOffsetPos:], uint64(spec.BaseOffset))
	binary.BigEndian.PutUint32(b[lengthPos:], uint32(HeaderSize-LogOverhead+len(body)))
	binary.BigEndian.PutUint32(b[partitionLeaderEpochPos:], uint32(spec.PartitionLeaderEpoch))
	b[magicPos] = MagicV2
	attrs := uint16(spec.Codec) & compressionMask
	if spec.TimestampType == LogAppendTime {
		attrs |= timestampTypeBit
	}
	if spec.Transactional {
		attrs |= transactionalBit
	}
	if spec.Control {
		attrs |= controlBit
	}
	binary.BigEndian.PutUint16(b[attributesPos:], attrs)
	binary.BigEndian.PutUint32(b[lastOffsetDeltaPos:], uint32(len(records)-1))
	binary.BigEndian.PutUint64(b[baseTimestampPos:], uint64(spec.BaseTimestamp))
	binary.BigEndian.PutUint64(b[maxTimestampPos:], uint64(maxTs))
	binary.BigEndian.PutUint64(b[producerIDPos:], uint64(spec.ProducerID))
	binary.BigEndian.PutUint16(b[producerEpochPos:], uint16(spec.ProducerEpoch))
	binary.BigEndian.PutUint32(b[baseSequencePos:], uint32(spec.BaseSequence))
	binary.BigEndian.PutUint32(b[recordsCountPos:], uint32(len(records)))
	b = append(b, body...)
	Batch(b).SetCRC()
	return Batch(b), nil
}

func appendRecord(dst []byte, r Record, index int32) []byte {
	var body []byte
	body = append(body, byte(r.Attributes))
	body = binary.AppendVarint(body, r.TimestampDelta)
	body = binary.AppendVarint(body, int64(index))
	body = appendBytes(body, r.Key, r.KeyLen)
	body = appendBytes(body, r.Value, r.ValueLen)
	body = binary.AppendVarint(body, int64(len(r.Headers)))
	for _, h := range r.Headers {
		body = binary.AppendVarint(body, int64(len(h.Key)))
		body = append(body, h.Key...)
		body = appendBytes(body, h.Value, int32(len(h.Value)))
	}
	dst = binary.AppendVarint(dst, int64(len(body)))
	return append(dst, body...)
}

// appendBytes writes a varint-length-prefixed field; a negative declared
// length (or nil with length 0 and nil data) writes null only when n < 0.
func appendBytes(dst, b []byte, n int32) []byte {
	if n < 0 {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}
