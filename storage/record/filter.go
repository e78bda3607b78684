package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// The log cleaner rewrites batches keeping some of their records, the way
// Kafka's MemoryRecords.filterTo does: a retained batch keeps its base
// offset, last offset delta, producer fields, partition leader epoch,
// timestamp type and codec, and each kept record keeps its offset. Records
// are copied as encoded, not decoded and re-encoded, so a kept record's key,
// value and headers come out byte for byte.

// DeleteHorizonMs is the batch's delete horizon (KIP-534): when the
// attribute bit is set, the base timestamp holds the time after which the
// cleaner may drop the batch's tombstones and, for a transaction marker,
// the marker itself (DefaultRecordBatch.deleteHorizonMs).
func (b Batch) DeleteHorizonMs() (int64, bool) {
	if !b.HasDeleteHorizon() {
		return NoTimestamp, false
	}
	return b.BaseTimestamp(), true
}

// RecordsData returns the batch's record stream, decompressed into dst's
// memory when the batch is compressed (at most limit bytes). For an
// uncompressed batch it is the batch's own bytes.
func (d *Decompressor) RecordsData(b Batch, limit int64, dst []byte) ([]byte, error) {
	if b.Compression() == CodecNone {
		return b.Records(), nil
	}
	s, err := d.Open(b.Compression(), b.Records(), limit)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	buf := bytes.NewBuffer(dst[:0])
	if _, err := buf.ReadFrom(s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// RawRecord is one encoded record of a record stream, seen in place.
type RawRecord struct {
	// Raw is the whole encoded record, its length prefix included.
	Raw            []byte
	TimestampDelta int64
	OffsetDelta    int32
	// Key is nil for a null key (KeyNull); Value is only known to be null
	// or not.
	Key       []byte
	KeyNull   bool
	ValueNull bool
	// bodyRest is where the record's body continues after the timestamp
	// delta: the offset delta, key, value and headers, copied unchanged
	// when the timestamp delta is rewritten.
	bodyRest []byte
	attrs    byte
}

// HasKey and HasValue follow Kafka's Record.hasKey/hasValue.
func (r RawRecord) HasKey() bool   { return !r.KeyNull }
func (r RawRecord) HasValue() bool { return !r.ValueNull }

// ParseRawRecords walks count records of data, an uncompressed record
// stream, calling fn for each. Every length is checked against what is
// left, so corrupt data is an error, never a panic; bytes after the last
// record are an error too.
func ParseRawRecords(data []byte, count int32, fn func(RawRecord) error) error {
	pos := 0
	for i := int32(0); i < count; i++ {
		length, n := binary.Varint(data[pos:])
		if n <= 0 || length < 0 || int64(len(data)-pos-n) < length {
			return corruptf("record %d of %d: bad or truncated length", i, count)
		}
		body := data[pos+n : pos+n+int(length)]
		r, err := parseRecordBody(body)
		if err != nil {
			return corruptf("record %d of %d: %v", i, count, err)
		}
		r.Raw = data[pos : pos+n+int(length)]
		if err := fn(r); err != nil {
			return err
		}
		pos += n + int(length)
	}
	if pos != len(data) {
		return corruptf("%d bytes follow the last of %d records", len(data)-pos, count)
	}
	return nil
}

func parseRecordBody(body []byte) (RawRecord, error) {
	var r RawRecord
	if len(body) < 1 {
		return r, io.ErrUnexpectedEOF
	}
	r.attrs = body[0]
	p := 1
	v, n := binary.Varint(body[p:])
	if n <= 0 {
		return r, fmt.Errorf("bad timestamp delta")
	}
	r.TimestampDelta = v
	p += n
	r.bodyRest = body[p:]
	if v, n = binary.Varint(body[p:]); n <= 0 || v < -1<<31 || v > 1<<31-1 {
		return r, fmt.Errorf("bad offset delta")
	}
	r.OffsetDelta = int32(v)
	p += n
	field := func() ([]byte, bool, error) {
		l, n := binary.Varint(body[p:])
		if n <= 0 || l < -1 || l > int64(len(body)-p-n) {
			return nil, false, fmt.Errorf("bad field length")
		}
		p += n
		if l < 0 {
			return nil, true, nil
		}
		f := body[p : p+int(l)]
		p += int(l)
		return f, false, nil
	}
	var err error
	if r.Key, r.KeyNull, err = field(); err != nil {
		return r, err
	}
	if _, r.ValueNull, err = field(); err != nil {
		return r, err
	}
	hc, n := binary.Varint(body[p:])
	if n <= 0 || hc < 0 || hc*2 > int64(len(body)-p-n) {
		return r, fmt.Errorf("bad header count")
	}
	p += n
	for range hc {
		if _, null, err := field(); err != nil || null {
			return r, fmt.Errorf("bad header key")
		}
		if _, _, err := field(); err != nil {
			return r, err
		}
	}
	if p != len(body) {
		return r, fmt.Errorf("%d bytes left in the record body", len(body)-p)
	}
	return r, nil
}

// appendWithTimestampDelta encodes r with a new timestamp delta and the
// rest of its body unchanged.
func (r RawRecord) appendWithTimestampDelta(dst []byte, delta int64) []byte {
	var tmp [binary.MaxVarintLen64]byte
	tn := binary.PutVarint(tmp[:], delta)
	bodyLen := 1 + tn + len(r.bodyRest)
	dst = binary.AppendVarint(dst, int64(bodyLen))
	dst = append(dst, r.attrs)
	dst = append(dst, tmp[:tn]...)
	return append(dst, r.bodyRest...)
}

// BuildRetained builds the batch that replaces src after filtering: kept
// are src's records to keep, in order. The new batch has src's base
// offset, last offset delta (so the producer's last sequence survives,
// MemoryRecords.buildRetainedRecordsInto's overrideLastOffset), producer
// id, epoch and base sequence, partition leader epoch, transactional and
// control flags, timestamp type and codec; the records are compressed
// again with that codec. With deleteHorizonMs >= 0 the delete horizon
// attribute is set and the base timestamp becomes the horizon, each record's
// timestamp delta rewritten so its timestamp is unchanged; otherwise src's
// base timestamp (and horizon, if it had one) is kept and records are
// copied as they are. The max timestamp is the largest kept record's for
// CreateTime and src's for LogAppendTime, as MemoryRecordsBuilder computes
// it.
func BuildRetained(src Batch, kept []RawRecord, deleteHorizonMs int64, c *Compressor) (Batch, error) {
	if len(kept) == 0 {
		return nil, fmt.Errorf("record: a retained batch needs a record; use EmptyBatch")
	}
	baseTs := src.BaseTimestamp()
	horizon := src.HasDeleteHorizon()
	if deleteHorizonMs >= 0 {
		baseTs, horizon = deleteHorizonMs, true
	}
	var body []byte
	maxTs := NoTimestamp
	for _, r := range kept {
		ts := src.BaseTimestamp() + r.TimestampDelta
		if baseTs == src.BaseTimestamp() {
			body = append(body, r.Raw...)
		} else {
			body = r.appendWithTimestampDelta(body, ts-baseTs)
		}
		maxTs = max(maxTs, ts)
	}
	if src.TimestampType() == LogAppendTime {
		maxTs = src.MaxTimestamp()
	}
	codec := src.Compression()
	if codec != CodecNone {
		if c == nil {
			return nil, fmt.Errorf("record: compressing with %s needs a Compressor", codec)
		}
		var err error
		if body, err = c.Compress(codec, nil, body); err != nil {
			return nil, err
		}
	}
	b := make([]byte, HeaderSize, HeaderSize+len(body))
	copy(b, src[:HeaderSize])
	attrs := uint16(src.Attributes()) &^ deleteHorizonBit
	if horizon {
		attrs |= deleteHorizonBit
	}
	binary.BigEndian.PutUint32(b[lengthPos:], uint32(HeaderSize-LogOverhead+len(body)))
	binary.BigEndian.PutUint16(b[attributesPos:], attrs)
	binary.BigEndian.PutUint64(b[baseTimestampPos:], uint64(baseTs))
	binary.BigEndian.PutUint64(b[maxTimestampPos:], uint64(maxTs))
	binary.BigEndian.PutUint32(b[recordsCountPos:], uint32(len(kept)))
	b = append(b, body...)
	Batch(b).SetCRC()
	return Batch(b), nil
}

// EmptyBatch is src's header with no records: what the cleaner keeps of a
// batch whose records all went but whose header still matters, such as a
// producer's last batch, which carries its last sequence
// (DefaultRecordBatch.writeEmptyHeader: uncompressed, no base timestamp,
// src's max timestamp, no delete horizon).
func EmptyBatch(src Batch) Batch {
	b := make([]byte, HeaderSize)
	copy(b, src[:HeaderSize])
	attrs := uint16(src.Attributes()) &^ (compressionMask | deleteHorizonBit)
	binary.BigEndian.PutUint32(b[lengthPos:], uint32(HeaderSize-LogOverhead))
	binary.BigEndian.PutUint16(b[attributesPos:], attrs)
	binary.BigEndian.PutUint64(b[baseTimestampPos:], ^uint64(0)) // NoTimestamp
	binary.BigEndian.PutUint32(b[recordsCountPos:], 0)
	Batch(b).SetCRC()
	return Batch(b)
}
