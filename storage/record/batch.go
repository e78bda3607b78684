// Package record reads and edits Kafka v2 record batches in place.
//
// A Batch is a byte slice holding exactly one batch as it travels on the wire
// and sits in a segment file. The storage engine must assign offsets and
// leader epochs into client batches without copying them, and must read the
// header of every batch it scans during recovery, so the header is read at
// fixed positions instead of being decoded into a struct (kmsg.RecordBatch
// would copy). Records inside a batch are decoded by RecordReader, which
// streams so that a compressed batch never has to be fully expanded in memory.
//
// Layout (DefaultRecordBatch.java in Apache Kafka):
//
//	baseOffset            int64   0
//	batchLength           int32   8   (bytes after this field)
//	partitionLeaderEpoch  int32  12
//	magic                 int8   16
//	crc                   uint32 17   (CRC-32C of attributes..end)
//	attributes            int16  21
//	lastOffsetDelta       int32  23
//	baseTimestamp         int64  27
//	maxTimestamp          int64  35
//	producerId            int64  43
//	producerEpoch         int16  51
//	baseSequence          int32  53
//	recordsCount          int32  57
//	records               ...    61
package record

import (
	"encoding/binary"
	"hash/crc32"
)

// Field positions and sizes of the v2 batch header.
const (
	baseOffsetPos           = 0
	lengthPos               = 8
	partitionLeaderEpochPos = 12
	magicPos                = 16
	crcPos                  = 17
	attributesPos           = 21
	lastOffsetDeltaPos      = 23
	baseTimestampPos        = 27
	maxTimestampPos         = 35
	producerIDPos           = 43
	producerEpochPos        = 51
	baseSequencePos         = 53
	recordsCountPos         = 57

	// HeaderSize is the size of a v2 batch header (RECORD_BATCH_OVERHEAD).
	HeaderSize = 61
	// LogOverhead is the size of the baseOffset and batchLength fields that
	// precede what batchLength counts (Records.LOG_OVERHEAD).
	LogOverhead = 12
	// MagicV2 is the only record format this broker stores.
	MagicV2 = 2
)

// Attribute bits of a v2 batch.
const (
	compressionMask     = 0x07
	timestampTypeBit    = 0x08
	transactionalBit    = 0x10
	controlBit          = 0x20
	deleteHorizonBit    = 0x40
	knownAttributesMask = compressionMask | timestampTypeBit | transactionalBit | controlBit | deleteHorizonBit
)

// Sentinel values from RecordBatch.java.
const (
	NoProducerID           int64 = -1
	NoProducerEpoch        int16 = -1
	NoSequence             int32 = -1
	NoTimestamp            int64 = -1
	NoPartitionLeaderEpoch int32 = -1
)

// TimestampType is the batch's timestamp type bit.
type TimestampType int8

const (
	CreateTime    TimestampType = 0
	LogAppendTime TimestampType = 1
)

func (t TimestampType) String() string {
	if t == LogAppendTime {
		return "LogAppendTime"
	}
	return "CreateTime"
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Batch is one v2 record batch, header and records, exactly as stored.
// Methods read fixed header positions; callers must have checked the header
// with ParseHeader (or taken the batch from Batches) before using them.
type Batch []byte

func (b Batch) BaseOffset() int64 { return int64(binary.BigEndian.Uint64(b[baseOffsetPos:])) }

// BatchLength is the batchLength field: the size of everything after it.
func (b Batch) BatchLength() int32 { return int32(binary.BigEndian.Uint32(b[lengthPos:])) }

// Size is the whole batch's size in bytes (sizeInBytes in Kafka).
func (b Batch) Size() int { return LogOverhead + int(b.BatchLength()) }

func (b Batch) PartitionLeaderEpoch() int32 {
	return int32(binary.BigEndian.Uint32(b[partitionLeaderEpochPos:]))
}
func (b Batch) Magic() int8       { return int8(b[magicPos]) }
func (b Batch) CRC() uint32       { return binary.BigEndian.Uint32(b[crcPos:]) }
func (b Batch) Attributes() int16 { return int16(binary.BigEndian.Uint16(b[attributesPos:])) }
func (b Batch) LastOffsetDelta() int32 {
	return int32(binary.BigEndian.Uint32(b[lastOffsetDeltaPos:]))
}
func (b Batch) BaseTimestamp() int64 { return int64(binary.BigEndian.Uint64(b[baseTimestampPos:])) }
func (b Batch) MaxTimestamp() int64  { return int64(binary.BigEndian.Uint64(b[maxTimestampPos:])) }
func (b Batch) ProducerID() int64    { return int64(binary.BigEndian.Uint64(b[producerIDPos:])) }
func (b Batch) ProducerEpoch() int16 { return int16(binary.BigEndian.Uint16(b[producerEpochPos:])) }
func (b Batch) BaseSequence() int32  { return int32(binary.BigEndian.Uint32(b[baseSequencePos:])) }
func (b Batch) RecordCount() int32   { return int32(binary.BigEndian.Uint32(b[recordsCountPos:])) }

// LastOffset is the offset of the batch's last record.
func (b Batch) LastOffset() int64 { return b.BaseOffset() + int64(b.LastOffsetDelta()) }

// NextOffset is the offset after the batch.
func (b Batch) NextOffset() int64 { return b.LastOffset() + 1 }

// LastSequence is the sequence of the batch's last record, wrapping at
// MaxInt32 as Kafka's DefaultRecordBatch.incrementSequence does.
func (b Batch) LastSequence() int32 {
	base := b.BaseSequence()
	if base == NoSequence {
		return NoSequence
	}
	return IncrementSequence(base, b.LastOffsetDelta())
}

// IncrementSequence adds delta to seq, wrapping past MaxInt32 to 0.
func IncrementSequence(seq, delta int32) int32 {
	if seq > int32(^uint32(0)>>1)-delta {
		return delta - (int32(^uint32(0)>>1) - seq) - 1
	}
	return seq + delta
}

func (b Batch) Compression() Codec { return Codec(b.Attributes() & compressionMask) }
func (b Batch) TimestampType() TimestampType {
	return TimestampType((b.Attributes() & timestampTypeBit) >> 3)
}
func (b Batch) IsTransactional() bool  { return b.Attributes()&transactionalBit != 0 }
func (b Batch) IsControl() bool        { return b.Attributes()&controlBit != 0 }
func (b Batch) HasDeleteHorizon() bool { return b.Attributes()&deleteHorizonBit != 0 }

// HasProducerID reports whether the batch was written by an idempotent or
// transactional producer.
func (b Batch) HasProducerID() bool { return b.ProducerID() > NoProducerID }

// Records returns the bytes after the header: the records, compressed or not.
func (b Batch) Records() []byte { return b[HeaderSize:b.Size()] }

// ComputeCRC returns the CRC-32C of everything the crc field covers.
func (b Batch) ComputeCRC() uint32 { return crc32.Checksum(b[attributesPos:b.Size()], castagnoli) }

// ValidCRC reports whether the stored CRC matches the content.
func (b Batch) ValidCRC() bool { return b.CRC() == b.ComputeCRC() }

// SetBaseOffset writes the base offset. The field is outside the CRC, so the
// batch stays valid: this is how a leader assigns offsets in place.
func (b Batch) SetBaseOffset(off int64) { binary.BigEndian.PutUint64(b[baseOffsetPos:], uint64(off)) }

// SetPartitionLeaderEpoch writes the leader epoch, also outside the CRC.
func (b Batch) SetPartitionLeaderEpoch(epoch int32) {
	binary.BigEndian.PutUint32(b[partitionLeaderEpochPos:], uint32(epoch))
}

// SetMaxTimestamp sets the timestamp type and max timestamp and recomputes
// the CRC, as DefaultRecordBatch.setMaxTimestamp does. A no-op when both
// already hold, so a batch that needs no change keeps its bytes.
func (b Batch) SetMaxTimestamp(tt TimestampType, ts int64) {
	if b.TimestampType() == tt && b.MaxTimestamp() == ts {
		return
	}
	attrs := uint16(b.Attributes()) &^ timestampTypeBit
	if tt == LogAppendTime {
		attrs |= timestampTypeBit
	}
	binary.BigEndian.PutUint16(b[attributesPos:], attrs)
	binary.BigEndian.PutUint64(b[maxTimestampPos:], uint64(ts))
	b.SetCRC()
}

// SetCRC recomputes and stores the CRC.
func (b Batch) SetCRC() { binary.BigEndian.PutUint32(b[crcPos:], b.ComputeCRC()) }
