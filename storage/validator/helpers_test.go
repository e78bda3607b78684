package validator

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/strait-io/strait/storage/record"
)

// Tests build batches byte by byte instead of with record.Build so they can
// write what no well-behaved producer would: wrong counts, offset deltas,
// header counts, CRCs. Positions follow the v2 layout in storage/record.
const (
	posLength     = 8
	posEpoch      = 12
	posMagic      = 16
	posCRC        = 17
	posAttrs      = 21
	posLOD        = 23
	posBaseTs     = 27
	posMaxTs      = 35
	posPID        = 43
	posPEpoch     = 51
	posSeq        = 53
	posCount      = 57
	headerSize    = 61
	attrLAT       = 0x08
	attrTxn       = 0x10
	attrControl   = 0x20
	attrCodecMask = 0x07
)

// testRec is one record to encode. A nil key or value is null.
type testRec struct {
	key, value  []byte
	tsDelta     int64
	offsetDelta int32
	headers     int   // empty headers actually written
	declHeaders int32 // header count written; -1 writes headers
}

func encodeRecord(dst []byte, r testRec) []byte {
	var body []byte
	body = append(body, 0) // attributes
	body = binary.AppendVarint(body, r.tsDelta)
	body = binary.AppendVarint(body, int64(r.offsetDelta))
	body = appendNullable(body, r.key)
	body = appendNullable(body, r.value)
	decl := int64(r.headers)
	if r.declHeaders >= 0 {
		decl = int64(r.declHeaders)
	}
	body = binary.AppendVarint(body, decl)
	for range r.headers {
		body = binary.AppendVarint(body, 0)  // empty key
		body = binary.AppendVarint(body, -1) // null value
	}
	dst = binary.AppendVarint(dst, int64(len(body)))
	return append(dst, body...)
}

func appendNullable(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

// testBatch is a batch header plus its (already compressed) record bytes.
type testBatch struct {
	baseOffset int64
	epoch      int32
	magic      int8
	attrs      int16
	lod        int32
	baseTs     int64
	maxTs      int64
	pid        int64
	pepoch     int16
	seq        int32
	count      int32
	body       []byte
}

func newTestBatch(codec record.Codec, n int, body []byte) testBatch {
	return testBatch{
		magic: 2, attrs: int16(codec), lod: int32(n - 1), pid: -1, pepoch: -1, seq: -1,
		count: int32(n), body: body, epoch: -1,
	}
}

func (tb testBatch) bytes() []byte {
	b := make([]byte, headerSize, headerSize+len(tb.body))
	binary.BigEndian.PutUint64(b, uint64(tb.baseOffset))
	binary.BigEndian.PutUint32(b[posLength:], uint32(headerSize-12+len(tb.body)))
	binary.BigEndian.PutUint32(b[posEpoch:], uint32(tb.epoch))
	b[posMagic] = byte(tb.magic)
	binary.BigEndian.PutUint16(b[posAttrs:], uint16(tb.attrs))
	binary.BigEndian.PutUint32(b[posLOD:], uint32(tb.lod))
	binary.BigEndian.PutUint64(b[posBaseTs:], uint64(tb.baseTs))
	binary.BigEndian.PutUint64(b[posMaxTs:], uint64(tb.maxTs))
	binary.BigEndian.PutUint64(b[posPID:], uint64(tb.pid))
	binary.BigEndian.PutUint16(b[posPEpoch:], uint16(tb.pepoch))
	binary.BigEndian.PutUint32(b[posSeq:], uint32(tb.seq))
	binary.BigEndian.PutUint32(b[posCount:], uint32(tb.count))
	b = append(b, tb.body...)
	binary.BigEndian.PutUint32(b[posCRC:], crc32.Checksum(b[posAttrs:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// compress compresses raw records with codec; snappyRaw writes one raw
// snappy block (as librdkafka and franz-go do) instead of xerial framing.
func compress(t testing.TB, codec record.Codec, snappyRaw bool, raw []byte) []byte {
	t.Helper()
	if codec == record.CodecSnappy && snappyRaw {
		return snappyLiteralBlock(raw)
	}
	out, err := record.NewCompressor().Compress(codec, nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// snappyLiteralBlock encodes src as one raw snappy block made of literals
// only: valid snappy, written without a snappy encoder.
func snappyLiteralBlock(src []byte) []byte {
	dst := binary.AppendUvarint(nil, uint64(len(src)))
	for len(src) > 0 {
		n := min(len(src), 1<<16)
		switch {
		case n <= 60:
			dst = append(dst, byte(n-1)<<2)
		case n <= 256:
			dst = append(dst, 60<<2, byte(n-1))
		default:
			dst = append(dst, 61<<2, byte(n-1), byte((n-1)>>8))
		}
		dst = append(dst, src[:n]...)
		src = src[n:]
	}
	return dst
}

// gzipZeros returns a gzip stream of n zero bytes made of repeated members,
// so a GiB of zeros costs one small compression.
func gzipZeros(t testing.TB, n int64) []byte {
	t.Helper()
	const member = 1 << 20
	var one bytes.Buffer
	w, _ := gzip.NewWriterLevel(&one, gzip.BestCompression)
	if _, err := w.Write(make([]byte, member)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var out []byte
	for ; n > 0; n -= member {
		out = append(out, one.Bytes()...)
	}
	return out
}

// zstdZeros returns a zstd frame of n zero bytes built from RLE blocks (four
// bytes for each 128 KiB).
func zstdZeros(n int64) []byte {
	out := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	out = append(out, 0x00) // descriptor: no content size, not single segment, no checksum
	out = append(out, 7<<3) // window descriptor: 2^(10+7) = 128 KiB
	const block = 128 << 10 // Block_Maximum_Size
	for ; n > 0; n -= block {
		size := min(n, block)
		hdr := uint32(size)<<3 | 1<<1 // RLE block
		if n <= block {
			hdr |= 1 // last block
		}
		out = append(out, byte(hdr), byte(hdr>>8), byte(hdr>>16), 0)
	}
	return out
}

// lz4Zeros returns an LZ4 frame of n zero bytes (n a multiple of 4 MiB),
// each 4 MiB block one literal, one long match and five closing literals.
func lz4Zeros(n int64) []byte {
	const blockMax = 4 << 20
	desc := []byte{0x60, 0x70} // version 1, independent blocks, no checksums; 4 MiB blocks
	out := binary.LittleEndian.AppendUint32(nil, 0x184D2204)
	out = append(out, desc...)
	out = append(out, byte(xxh32(desc)>>8))

	var blk []byte
	match := blockMax - 1 - 5
	blk = append(blk, 1<<4|15, 0, 1, 0) // token, literal 0, offset 1
	for rest := match - 4 - 15; ; rest -= 255 {
		if rest < 255 {
			blk = append(blk, byte(rest))
			break
		}
		blk = append(blk, 255)
	}
	blk = append(blk, 5<<4, 0, 0, 0, 0, 0)
	for ; n > 0; n -= blockMax {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(blk)))
		out = append(out, blk...)
	}
	return binary.LittleEndian.AppendUint32(out, 0) // end mark
}

// xxh32 is XXH32 with seed 0 for inputs shorter than 16 bytes: the LZ4
// frame header checksum.
func xxh32(b []byte) uint32 {
	const (
		p1 uint32 = 2654435761
		p2 uint32 = 2246822519
		p3 uint32 = 3266489917
		p4 uint32 = 668265263
		p5 uint32 = 374761393
	)
	rotl := func(x uint32, r uint) uint32 { return x<<r | x>>(32-r) }
	h := p5 + uint32(len(b))
	for ; len(b) >= 4; b = b[4:] {
		h += binary.LittleEndian.Uint32(b) * p3
		h = rotl(h, 17) * p4
	}
	for _, c := range b {
		h += uint32(c) * p5
		h = rotl(h, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
