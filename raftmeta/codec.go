package raftmeta

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// The metadata log's wire format. A raft entry is one batch:
//
//	batch  = batchVersion:int8 count:uvarint record*
//	record = length:uvarint type:uint8 version:int8 fields
//
// Integers in fields are zig-zag varints, strings are a uvarint length and
// bytes, nullable strings and arrays a varint length with -1 for null, and
// uuids 16 raw bytes. The encoding is a pure function of the records (no
// maps are iterated), so every replica writes and reads the same bytes.
// Decoding is strict: an unknown type or version, a truncated field or
// trailing bytes are errors, never guesses.

// batchVersion is the version of the batch framing.
const batchVersion int8 = 0

// ErrCorruptBatch marks a batch that cannot be decoded.
var ErrCorruptBatch = errors.New("raftmeta: corrupt record batch")

// EncodeBatch encodes records as one batch (one raft log entry).
func EncodeBatch(records []Record) []byte {
	b := make([]byte, 0, 16+32*len(records))
	b = append(b, byte(batchVersion))
	b = binary.AppendUvarint(b, uint64(len(records)))
	var scratch []byte
	for _, r := range records {
		scratch = EncodeRecord(scratch[:0], r)
		b = binary.AppendUvarint(b, uint64(len(scratch)))
		b = append(b, scratch...)
	}
	return b
}

// EncodeRecord appends one record (type, version, fields) to b.
func EncodeRecord(b []byte, r Record) []byte {
	b = append(b, byte(r.Type()), byte(r.Version()))
	return r.appendTo(b)
}

// DecodeBatch decodes a batch written by EncodeBatch.
func DecodeBatch(b []byte) ([]Record, error) {
	d := decoder{b: b}
	v := d.int8raw()
	if d.err == nil && v != batchVersion {
		return nil, fmt.Errorf("%w: batch version %d not supported (max %d)", ErrCorruptBatch, v, batchVersion)
	}
	n := d.uvarint()
	if d.err != nil {
		return nil, d.err
	}
	// Every record takes at least three bytes: a bound on n that keeps a
	// corrupt count from allocating.
	if n > uint64(len(d.b))/3 {
		return nil, fmt.Errorf("%w: %d records cannot fit in %d bytes", ErrCorruptBatch, n, len(d.b))
	}
	records := make([]Record, 0, n)
	for i := uint64(0); i < n; i++ {
		l := d.uvarint()
		if d.err != nil {
			return nil, d.err
		}
		if l > uint64(len(d.b)) {
			return nil, fmt.Errorf("%w: record %d length %d exceeds the %d bytes left", ErrCorruptBatch, i, l, len(d.b))
		}
		r, err := DecodeRecord(d.b[:l])
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		d.b = d.b[l:]
		records = append(records, r)
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrCorruptBatch, len(d.b))
	}
	return records, nil
}

// DecodeRecord decodes one record written by EncodeRecord; it must use all
// of b.
func DecodeRecord(b []byte) (Record, error) {
	d := decoder{b: b}
	t := RecordType(d.uint8())
	v := d.int8raw()
	if d.err != nil {
		return nil, d.err
	}
	maxV, ok := maxRecordVersion[t]
	if !ok {
		return nil, fmt.Errorf("%w: unknown record type %d", ErrCorruptBatch, uint8(t))
	}
	if v < 0 || v > maxV {
		return nil, fmt.Errorf("%w: %s version %d not supported (max %d)", ErrCorruptBatch, t, v, maxV)
	}
	r := decodeFields(t, v, &d)
	if d.err != nil {
		return nil, fmt.Errorf("%s: %w", t, d.err)
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %s has %d trailing bytes", ErrCorruptBatch, t, len(d.b))
	}
	return r, nil
}

// --- primitives ---

func appendInt(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendNullableString(b []byte, s *string) []byte {
	if s == nil {
		return binary.AppendVarint(b, -1)
	}
	b = binary.AppendVarint(b, int64(len(*s)))
	return append(b, *s...)
}

func appendBytes(b []byte, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendUuid(b []byte, u Uuid) []byte { return append(b, u[:]...) }

// appendInt32s encodes a nullable int32 array: nil and empty differ.
func appendInt32s(b []byte, vs []int32) []byte {
	if vs == nil {
		return binary.AppendVarint(b, -1)
	}
	b = binary.AppendVarint(b, int64(len(vs)))
	for _, v := range vs {
		b = binary.AppendVarint(b, int64(v))
	}
	return b
}

// decoder reads fields, remembering the first error; after an error every
// read returns a zero value, so record decoders read straight through and
// check once.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrCorruptBatch}, args...)...)
	}
	d.b = nil
}

func (d *decoder) uint8() uint8 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 1 {
		d.fail("truncated")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) int8raw() int8 { return int8(d.uint8()) }

func (d *decoder) bool() bool {
	switch v := d.uint8(); v {
	case 0:
		return false
	case 1:
		return true
	default:
		d.fail("bool byte %d", v)
		return false
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int64() int64 { return d.varint() }

func (d *decoder) int32() int32 {
	v := d.varint()
	if v < -1<<31 || v > 1<<31-1 {
		d.fail("int32 out of range: %d", v)
		return 0
	}
	return int32(v)
}

func (d *decoder) int8() int8 {
	v := d.varint()
	if v < -128 || v > 127 {
		d.fail("int8 out of range: %d", v)
		return 0
	}
	return int8(v)
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("length %d exceeds the %d bytes left", n, len(d.b))
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

// byteSlice reads what appendBytes wrote, copied out of the batch.
func (d *decoder) byteSlice() []byte { return bytes.Clone(d.bytes(d.uvarint())) }

func (d *decoder) string() string { return string(d.bytes(d.uvarint())) }

func (d *decoder) nullableString() *string {
	n := d.varint()
	if d.err != nil {
		return nil
	}
	if n == -1 {
		return nil
	}
	if n < 0 {
		d.fail("string length %d", n)
		return nil
	}
	s := string(d.bytes(uint64(n)))
	if d.err != nil {
		return nil
	}
	return &s
}

func (d *decoder) uuid() Uuid {
	var u Uuid
	copy(u[:], d.bytes(16))
	return u
}

func (d *decoder) int32s() []int32 {
	n := d.varint()
	if d.err != nil {
		return nil
	}
	if n == -1 {
		return nil
	}
	// Each element takes at least one byte.
	if n < 0 || n > int64(len(d.b)) {
		d.fail("array length %d with %d bytes left", n, len(d.b))
		return nil
	}
	vs := make([]int32, n)
	for i := range vs {
		vs[i] = d.int32()
	}
	if d.err != nil {
		return nil
	}
	return vs
}
