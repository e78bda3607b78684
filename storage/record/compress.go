package record

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Decompression never trusts a size the data declares. Every decompressor is
// read through a counter that fails once more than the caller's limit comes
// out, block formats (snappy) are checked against the limit before their
// output is allocated, and zstd runs with a bounded window. A 1 KiB batch
// that expands to a GiB is rejected after producing at most limit bytes,
// without holding them: records are decoded from the stream as they come
// (CVE-2023-34455 was snappy-java trusting a chunk length).
const (
	// zstdMaxWindow bounds the zstd history buffer. Producers use the
	// default window of at most 8 MiB for the levels they offer.
	zstdMaxWindow = 8 << 20
	// snappyMaxChunk bounds one xerial chunk's compressed size; snappy-java
	// writes 32 KiB chunks.
	snappyMaxChunk = 64 << 20
	// A snappy block starts with its decoded length and a decoder allocates
	// that much first. The format bounds the real expansion: the most
	// output per input byte is a 3-byte copy of 64 bytes, so no valid block
	// decodes to more than 64/3 of its size. A larger claim is a lie and is
	// refused before anything is allocated (CVE-2023-34455 and
	// CVE-2023-43642 were snappy-java trusting lengths). The slack covers
	// tiny blocks, where the length varint and a literal tag dominate.
	snappyMaxRatio = 22
	snappySlack    = 64
)

// xerialMagic opens a snappy stream framed the way snappy-java writes it;
// Kafka's Java producer uses that framing, others send a raw snappy block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderLen = 16 // magic, version int32, compatible version int32

// Decompressor opens compressed record streams. It pools decoders, is safe
// for concurrent use, and one is shared by every log of a broker.
type Decompressor struct {
	gzip  sync.Pool // *gzip.Reader
	zstd  sync.Pool // *zstd.Decoder
	lz4   sync.Pool // *lz4.Reader
	bufio sync.Pool // *bufio.Reader
}

// NewDecompressor returns a Decompressor with empty pools.
func NewDecompressor() *Decompressor { return &Decompressor{} }

// Stream is an open decompressed record stream. Close returns its decoders to
// the pool; the stream must not be used afterwards.
type Stream struct {
	*bufio.Reader
	d       *Decompressor
	limited *limitReader
	release func()
}

// Close releases the stream's decoders.
func (s *Stream) Close() {
	if s.release != nil {
		s.release()
		s.release = nil
	}
	if s.Reader != nil {
		s.Reader.Reset(nil)
		s.d.bufio.Put(s.Reader)
		s.Reader = nil
	}
}

// Produced is how many decompressed bytes were read so far.
func (s *Stream) Produced() int64 { return s.limited.n }

// Open decompresses src with codec c, failing with RECORD_TOO_LARGE once
// more than limit bytes come out and with CORRUPT_MESSAGE on bad data.
func (d *Decompressor) Open(c Codec, src []byte, limit int64) (*Stream, error) {
	var (
		r       io.Reader
		release func()
		err     error
	)
	switch c {
	case CodecGzip:
		r, release, err = d.openGzip(src)
	case CodecSnappy:
		r = newSnappyReader(src, limit)
	case CodecLZ4:
		lr, _ := d.lz4.Get().(*lz4.Reader)
		if lr == nil {
			lr = lz4.NewReader(nil)
		}
		lr.Reset(bytes.NewReader(src))
		r, release = lr, func() { lr.Reset(nil); d.lz4.Put(lr) }
	case CodecZstd:
		r, release, err = d.openZstd(src)
	case CodecNone:
		r = bytes.NewReader(src)
	default:
		return nil, Errorf(kerr.UnsupportedCompressionType, "unknown compression codec id %d", c)
	}
	if err != nil {
		return nil, corruptf("opening %s stream: %v", c, err)
	}
	lim := &limitReader{r: r, limit: limit, codec: c}
	br, _ := d.bufio.Get().(*bufio.Reader)
	if br == nil {
		br = bufio.NewReaderSize(lim, 4096)
	} else {
		br.Reset(lim)
	}
	return &Stream{Reader: br, d: d, limited: lim, release: release}, nil
}

func (d *Decompressor) openGzip(src []byte) (io.Reader, func(), error) {
	zr, _ := d.gzip.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(bytes.NewReader(src))
	} else {
		err = zr.Reset(bytes.NewReader(src))
	}
	if err != nil {
		return nil, nil, err
	}
	return zr, func() { d.gzip.Put(zr) }, nil
}

func (d *Decompressor) openZstd(src []byte) (io.Reader, func(), error) {
	zr, _ := d.zstd.Get().(*zstd.Decoder)
	if zr == nil {
		var err error
		// Concurrency 1 decodes synchronously, without goroutines; the
		// window bound caps the memory a hostile frame can ask for.
		zr, err = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(zstdMaxWindow),
			zstd.WithDecoderMaxMemory(zstdMaxWindow*2))
		if err != nil {
			return nil, nil, err
		}
	}
	if err := zr.Reset(bytes.NewReader(src)); err != nil {
		d.zstd.Put(zr)
		return nil, nil, err
	}
	return zr, func() { _ = zr.Reset(nil); d.zstd.Put(zr) }, nil
}

// limitReader counts what a decompressor produces and stops it at limit.
type limitReader struct {
	r     io.Reader
	n     int64
	limit int64
	codec Codec
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n > l.limit {
		return 0, l.tooLarge()
	}
	// Ask for one byte more than allowed so overflow is seen.
	if room := l.limit - l.n + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.limit {
		return 0, l.tooLarge()
	}
	if err != nil && !errors.Is(err, io.EOF) {
		var re *Error
		if errors.As(err, &re) {
			return n, err
		}
		return n, corruptf("%s decompression failed: %v", l.codec, err)
	}
	return n, err
}

func (l *limitReader) tooLarge() error {
	return Errorf(kerr.MessageTooLarge, "%s batch decompresses to more than %d bytes", l.codec, l.limit)
}

// snappyReader reads either a xerial-framed stream or one raw snappy block.
type snappyReader struct {
	src   []byte
	limit int64
	out   []byte // decoded bytes not yet read
	total int64
	err   error
	raw   bool
	init  bool
}

func newSnappyReader(src []byte, limit int64) *snappyReader {
	return &snappyReader{src: src, limit: limit}
}

func (s *snappyReader) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.err = s.fill()
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// fill decodes the next block into out, or returns io.EOF.
func (s *snappyReader) fill() error {
	if !s.init {
		s.init = true
		if len(s.src) >= xerialHeaderLen && bytes.Equal(s.src[:len(xerialMagic)], xerialMagic) {
			s.src = s.src[xerialHeaderLen:]
		} else {
			s.raw = true
			return s.decode(s.src, true)
		}
	}
	if s.raw || len(s.src) == 0 {
		return io.EOF
	}
	if len(s.src) < 4 {
		return corruptf("snappy: truncated xerial chunk header")
	}
	n := binary.BigEndian.Uint32(s.src)
	s.src = s.src[4:]
	if n > snappyMaxChunk || int64(n) > int64(len(s.src)) {
		return corruptf("snappy: xerial chunk of %d bytes exceeds the %d bytes left", n, len(s.src))
	}
	chunk := s.src[:n]
	s.src = s.src[n:]
	return s.decode(chunk, false)
}

func (s *snappyReader) decode(block []byte, last bool) error {
	dlen, err := s2.DecodedLen(block)
	if err != nil {
		return corruptf("snappy: %v", err)
	}
	if int64(dlen) > int64(len(block))*snappyMaxRatio+snappySlack && s.total+int64(dlen) <= s.limit {
		return corruptf("snappy block of %d bytes claims %d decompressed bytes, more than snappy can encode in it", len(block), dlen)
	}
	if s.total+int64(dlen) > s.limit {
		// Refuse before allocating what the block claims.
		return Errorf(kerr.MessageTooLarge, "snappy batch decompresses to more than %d bytes", s.limit)
	}
	out, err := s2.Decode(nil, block)
	if err != nil {
		return corruptf("snappy: %v", err)
	}
	s.total += int64(len(out))
	s.out = out
	if last && len(out) == 0 {
		return io.EOF
	}
	return nil
}

// Compressor compresses record data; it pools encoders and is safe for
// concurrent use. The broker uses it to build batches it writes itself and
// tests use it to build client-like batches of every codec.
type Compressor struct {
	zstd sync.Pool // *zstd.Encoder
	// gzip pools writers: each holds about a megabyte of deflate state,
	// too much to allocate per batch when the cleaner recompresses many.
	gzip sync.Pool // *gzip.Writer
}

// NewCompressor returns a Compressor.
func NewCompressor() *Compressor { return &Compressor{} }

// Compress appends the compressed form of src to dst. Snappy is written in
// xerial framing, as Kafka's Java producer writes it.
func (c *Compressor) Compress(codec Codec, dst, src []byte) ([]byte, error) {
	switch codec {
	case CodecNone:
		return append(dst, src...), nil
	case CodecGzip:
		buf := bytes.NewBuffer(dst)
		w, _ := c.gzip.Get().(*gzip.Writer)
		if w == nil {
			w = gzip.NewWriter(buf)
		} else {
			w.Reset(buf)
		}
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		c.gzip.Put(w)
		return buf.Bytes(), nil
	case CodecSnappy:
		dst = append(dst, xerialMagic...)
		dst = binary.BigEndian.AppendUint32(dst, 1)
		dst = binary.BigEndian.AppendUint32(dst, 1)
		const chunk = 32 << 10
		for len(src) > 0 {
			n := min(chunk, len(src))
			enc := s2.EncodeSnappy(nil, src[:n])
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(enc)))
			dst = append(dst, enc...)
			src = src[n:]
		}
		return dst, nil
	case CodecLZ4:
		buf := bytes.NewBuffer(dst)
		w := lz4.NewWriter(buf)
		// 64 KiB blocks, as Kafka's KafkaLZ4BlockOutputStream writes them:
		// the library's 4 MiB default makes every reader of the batch
		// allocate a 4 MiB block however small the batch is.
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
			return nil, err
		}
		if _, err := w.Write(src); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case CodecZstd:
		enc, _ := c.zstd.Get().(*zstd.Encoder)
		if enc == nil {
			var err error
			enc, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))
			if err != nil {
				return nil, err
			}
		}
		dst = enc.EncodeAll(src, dst)
		c.zstd.Put(enc)
		return dst, nil
	default:
		return nil, fmt.Errorf("record: unknown codec %d", codec)
	}
}
