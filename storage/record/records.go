package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
)

// ByteSource is what RecordReader reads: a bytes.Reader for an uncompressed
// batch, a bufio.Reader over a bounded decompressor for a compressed one.
type ByteSource interface {
	io.Reader
	io.ByteReader
}

// Record is one record of a batch (DefaultRecord.java). Key, Value and
// Headers are filled only by a full read; KeyLen and ValueLen are always set
// (-1 means null).
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	KeyLen         int32
	ValueLen       int32
	HeaderCount    int32
	Key            []byte
	Value          []byte
	Headers        []Header
	// Size is the record's encoded size, including its length prefix.
	Size int
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

// RecordReader decodes the records of one batch, one at a time, bounding
// every length by what the record declared so a hostile length cannot make
// it allocate more than the record could hold.
type RecordReader struct {
	src   ByteSource
	count int32
	read  int32
	n     int64 // bytes consumed from src
	// data is set for an uncompressed batch: the records are decoded from
	// the slice directly, without a method call per byte (the produce
	// path validates every record of every batch).
	data []byte
}

// NewRecordReader reads count records from src.
func NewRecordReader(src ByteSource, count int32) *RecordReader {
	return &RecordReader{src: src, count: count}
}

// NewUncompressedReader reads the records of an uncompressed batch.
//
// It has no ByteSource: every read of an uncompressed batch is from data
// (a bytes.Reader over it was an allocation per produced batch in issue
// 29's profile, never read). data must then be non-nil.
func NewUncompressedReader(b Batch) *RecordReader {
	data := b.Records()
	if data == nil {
		data = []byte{}
	}
	return &RecordReader{count: b.RecordCount(), data: data}
}

// Remaining is the number of records not yet read.
func (r *RecordReader) Remaining() int32 { return r.count - r.read }

// BytesRead is how many bytes of the (decompressed) record stream were read.
func (r *RecordReader) BytesRead() int64 { return r.n }

var errRecordStructure = invalidf("found invalid record structure")

func (r *RecordReader) readByte() (byte, error) {
	if r.data != nil {
		if r.n >= int64(len(r.data)) {
			return 0, io.EOF
		}
		c := r.data[r.n]
		r.n++
		return c, nil
	}
	c, err := r.src.ReadByte()
	if err != nil {
		return 0, err
	}
	r.n++
	return c, nil
}

func (r *RecordReader) varlong() (int64, error) {
	var ux uint64
	var s uint
	for i := 0; i < binary.MaxVarintLen64; i++ {
		c, err := r.readByte()
		if err != nil {
			return 0, err
		}
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				return 0, invalidf("varlong overflows 64 bits")
			}
			ux |= uint64(c) << s
			x := int64(ux >> 1)
			if ux&1 != 0 {
				x = ^x
			}
			return x, nil
		}
		ux |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, invalidf("varlong is longer than 10 bytes")
}

func (r *RecordReader) varint() (int32, error) {
	v, err := r.varlong()
	if err != nil {
		return 0, err
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, invalidf("varint %d does not fit in 32 bits", v)
	}
	return int32(v), nil
}

func (r *RecordReader) skip(n int64) error {
	if n == 0 {
		return nil
	}
	if r.data != nil {
		if rem := int64(len(r.data)) - r.n; rem < n {
			r.n = int64(len(r.data))
			return io.ErrUnexpectedEOF
		}
		r.n += n
		return nil
	}
	type discarder interface{ Discard(int) (int, error) }
	var got int64
	var err error
	switch s := r.src.(type) {
	case *bytes.Reader:
		if int64(s.Len()) < n {
			got = int64(s.Len())
			_, _ = s.Seek(0, io.SeekEnd)
			err = io.ErrUnexpectedEOF
		} else {
			_, _ = s.Seek(n, io.SeekCurrent)
			got = n
		}
	case discarder:
		var g int
		g, err = s.Discard(int(n))
		got = int64(g)
	default:
		got, err = io.CopyN(io.Discard, s, n)
	}
	r.n += got
	return err
}

func (r *RecordReader) bytes(n int32, keep bool) ([]byte, error) {
	if n < 0 {
		return nil, nil
	}
	if !keep {
		return nil, r.skip(int64(n))
	}
	if r.data != nil {
		if int64(len(r.data))-r.n < int64(n) {
			r.n = int64(len(r.data))
			return nil, io.ErrUnexpectedEOF
		}
		buf := append([]byte(nil), r.data[r.n:r.n+int64(n)]...)
		r.n += int64(n)
		return buf, nil
	}
	buf := make([]byte, n)
	got, err := io.ReadFull(r.src, buf)
	r.n += int64(got)
	return buf, err
}

// Next decodes the next record. With full set it returns the key, value and
// headers; otherwise it only checks their lengths and skips their bytes. It
// returns io.EOF after the last declared record.
func (r *RecordReader) Next(full bool) (Record, error) {
	if r.read >= r.count {
		return Record{}, io.EOF
	}
	rec, err := r.next(full)
	if err != nil {
		var re *Error
		if errors.As(err, &re) {
			return Record{}, err
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return Record{}, invalidf("record %d of %d ends before its declared size: the batch holds fewer records than its count", r.read, r.count)
		}
		return Record{}, err // a decompressor error, already typed
	}
	r.read++
	return rec, nil
}

func (r *RecordReader) next(full bool) (Record, error) {
	var rec Record
	start := r.n
	length, err := r.varint()
	if err != nil {
		return rec, err
	}
	if length < 0 {
		return rec, invalidf("record %d has negative size %d", r.read, length)
	}
	bodyStart := r.n
	// remaining reports how much of the declared body is left, so no inner
	// length may claim more than the record holds.
	remaining := func() int64 { return int64(length) - (r.n - bodyStart) }
	attr, err := r.readByte()
	if err != nil {
		return rec, err
	}
	rec.Attributes = int8(attr)
	if rec.TimestampDelta, err = r.varlong(); err != nil {
		return rec, err
	}
	if rec.OffsetDelta, err = r.varint(); err != nil {
		return rec, err
	}
	if rec.KeyLen, err = r.varint(); err != nil {
		return rec, err
	}
	if rec.KeyLen < -1 || int64(rec.KeyLen) > remaining() {
		return rec, invalidf("record %d has invalid key size %d", r.read, rec.KeyLen)
	}
	if rec.Key, err = r.bytes(rec.KeyLen, full); err != nil {
		return rec, err
	}
	if rec.ValueLen, err = r.varint(); err != nil {
		return rec, err
	}
	if rec.ValueLen < -1 || int64(rec.ValueLen) > remaining() {
		return rec, invalidf("record %d has invalid value size %d", r.read, rec.ValueLen)
	}
	if rec.Value, err = r.bytes(rec.ValueLen, full); err != nil {
		return rec, err
	}
	if rec.HeaderCount, err = r.varint(); err != nil {
		return rec, err
	}
	// Each header takes at least two bytes (two one-byte varint lengths), so
	// the count is bounded by what is left before anything is allocated.
	if rec.HeaderCount < 0 || int64(rec.HeaderCount)*2 > remaining() {
		return rec, invalidf("record %d has invalid number of record headers %d", r.read, rec.HeaderCount)
	}
	if full && rec.HeaderCount > 0 {
		rec.Headers = make([]Header, 0, rec.HeaderCount)
	}
	for i := int32(0); i < rec.HeaderCount; i++ {
		klen, err := r.varint()
		if err != nil {
			return rec, err
		}
		if klen < 0 || int64(klen) > remaining() {
			return rec, invalidf("record %d header %d has invalid key size %d", r.read, i, klen)
		}
		k, err := r.bytes(klen, full)
		if err != nil {
			return rec, err
		}
		vlen, err := r.varint()
		if err != nil {
			return rec, err
		}
		if vlen < -1 || int64(vlen) > remaining() {
			return rec, invalidf("record %d header %d has invalid value size %d", r.read, i, vlen)
		}
		v, err := r.bytes(vlen, full)
		if err != nil {
			return rec, err
		}
		if full {
			rec.Headers = append(rec.Headers, Header{Key: string(k), Value: v})
		}
	}
	if rem := remaining(); rem != 0 {
		return rec, invalidf("invalid record size: expected to read %d bytes in record payload, but instead read %d", length, int64(length)-rem)
	}
	rec.Size = int(r.n - start)
	return rec, nil
}

// Finish checks that the record stream holds nothing after the declared
// records (Kafka: "Incorrect declared batch size, records still remaining").
func (r *RecordReader) Finish() error {
	if r.read < r.count {
		return invalidf("only %d of %d declared records were read", r.read, r.count)
	}
	if r.data != nil {
		if r.n < int64(len(r.data)) {
			return invalidf("incorrect declared batch size, records still remaining in the batch after %d records", r.count)
		}
		return nil
	}
	if _, err := r.src.ReadByte(); err == nil {
		return invalidf("incorrect declared batch size, records still remaining in the batch after %d records", r.count)
	} else if !errors.Is(err, io.EOF) {
		var re *Error
		if errors.As(err, &re) {
			return err
		}
		return invalidf("reading past the last record: %v", err)
	}
	return nil
}
