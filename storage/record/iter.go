package record

import (
	"encoding/binary"
	"io"
)

// minBatchLength is the smallest legal batchLength: a header with no records.
const minBatchLength = HeaderSize - LogOverhead

// ReadBatch checks that buf starts with a whole v2 batch and returns it.
//
// It returns io.ErrUnexpectedEOF (unwrapped) when buf ends before the batch
// does — during recovery that is a torn tail, not corruption. A batch length
// below the header size or a magic other than 2 is an *Error. The CRC is not
// checked here; see Batch.ValidCRC.
func ReadBatch(buf []byte) (Batch, error) {
	if len(buf) < LogOverhead {
		return nil, io.ErrUnexpectedEOF
	}
	length := int32(binary.BigEndian.Uint32(buf[lengthPos:]))
	if length < minBatchLength {
		return nil, corruptf("record batch size %d is less than the minimum record batch overhead %d", length, minBatchLength)
	}
	if len(buf) <= magicPos {
		return nil, io.ErrUnexpectedEOF
	}
	if magic := int8(buf[magicPos]); magic != MagicV2 {
		if magic < MagicV2 {
			return nil, invalidf("record batch has magic %d: only magic v2 batches are accepted", magic)
		}
		return nil, corruptf("record batch has unknown magic %d", magic)
	}
	size := int64(LogOverhead) + int64(length)
	if int64(len(buf)) < size {
		return nil, io.ErrUnexpectedEOF
	}
	return Batch(buf[:size]), nil
}

// Iter walks the batches in a buffer holding zero or more whole batches.
//
//	it := record.NewIter(buf)
//	for b, ok := it.Next(); ok; b, ok = it.Next() { ... }
//	if err := it.Err(); err != nil { ... }
type Iter struct {
	buf []byte
	pos int
	err error
}

// NewIter returns an iterator over buf.
func NewIter(buf []byte) *Iter { return &Iter{buf: buf} }

// Next returns the next batch, or false at the end or on an error.
func (it *Iter) Next() (Batch, bool) {
	if it.err != nil || it.pos >= len(it.buf) {
		return nil, false
	}
	b, err := ReadBatch(it.buf[it.pos:])
	if err != nil {
		if err == io.ErrUnexpectedEOF {
			err = corruptf("record batch at byte %d is truncated: %d bytes remain", it.pos, len(it.buf)-it.pos)
		}
		it.err = err
		return nil, false
	}
	it.pos += len(b)
	return b, true
}

// Err is the error that stopped iteration, if any.
func (it *Iter) Err() error { return it.err }

// Pos is the byte position of the next batch.
func (it *Iter) Pos() int { return it.pos }
