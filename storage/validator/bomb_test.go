package validator

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/storage/record"
)

const (
	gib = int64(1) << 30
	// heapBudget is what validating one hostile batch may allocate in
	// total (reliability spec §6, unit/decompression-bomb).
	heapBudget = 64 << 20
)

// bombPrefix is the start of a record stream holding one record whose value
// is valueLen zero bytes: everything before the zeros. The zeros that follow
// end with the record's header count, itself a zero byte.
func bombPrefix(valueLen int64) []byte {
	var body []byte
	body = append(body, 0)                     // attributes
	body = binary.AppendVarint(body, 0)        // timestamp delta
	body = binary.AppendVarint(body, 0)        // offset delta
	body = binary.AppendVarint(body, 1)        // key length
	body = append(body, 'k')                   // key
	body = binary.AppendVarint(body, valueLen) // value length
	length := int64(len(body)) + valueLen + 1  // value and header count
	return append(binary.AppendVarint(nil, length), body...)
}

// measure runs f and returns how much it allocated and how long it took.
func measure(f func()) (allocated uint64, heapGrowth int64, took time.Duration) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	f()
	took = time.Since(start)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, int64(after.HeapAlloc) - int64(before.HeapAlloc), took
}

func bombBatch(codec record.Codec, body []byte) []byte {
	return newTestBatch(codec, 1, body).bytes()
}

// TestDecompressionBombs feeds, for every codec, a batch whose single record
// expands to at least 1 GiB. Each must be rejected with RECORD_TOO_LARGE
// (or CORRUPT_MESSAGE for a snappy block lying about its size) while
// allocating less than 64 MiB: the stream is decoded without keeping the
// value, and stopped at the decompression limit.
func TestDecompressionBombs(t *testing.T) {
	prefix := bombPrefix(gib)

	// gzip: a member with the record prefix, then members of zeros.
	gz := append(gzipBytes(t, prefix), gzipZeros(t, gib+1)...)

	// zstd: a raw block with the prefix, then RLE blocks of zeros.
	zs := zstdZeros(gib + 1)
	rawHdr := uint32(len(prefix)) << 3 // raw block, not last
	zsBody := append([]byte{}, zs[:6]...)
	zsBody = append(zsBody, byte(rawHdr), byte(rawHdr>>8), byte(rawHdr>>16))
	zsBody = append(zsBody, prefix...)
	zsBody = append(zsBody, zs[6:]...)

	// lz4: an uncompressed block with the prefix, then 4 MiB blocks of
	// zeros.
	lz := lz4Zeros(gib + 4<<20)
	lzBody := append([]byte{}, lz[:7]...)
	lzBody = binary.LittleEndian.AppendUint32(lzBody, uint32(len(prefix))|1<<31)
	lzBody = append(lzBody, prefix...)
	lzBody = append(lzBody, lz[7:]...)

	// snappy: a block claiming 1 GiB, raw and in xerial framing.
	snap := binary.AppendUvarint(nil, uint64(gib))
	snap = append(snap, byte(len(prefix)-1)<<2)
	snap = append(snap, prefix...)
	xerial := []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0} // snappy-java's xerial magic
	xerial = binary.BigEndian.AppendUint32(xerial, 1)
	xerial = binary.BigEndian.AppendUint32(xerial, 1)
	xerial = binary.BigEndian.AppendUint32(xerial, uint32(len(snap)))
	xerial = append(xerial, snap...)

	// snappy under the limit: a 200 MiB claim no block this small can hold.
	// Without the ratio check the decoder would allocate the 200 MiB.
	under := binary.AppendUvarint(nil, 200<<20)
	under = append(under, byte(len(prefix)-1)<<2)
	under = append(under, prefix...)

	cases := []struct {
		name  string
		codec record.Codec
		body  []byte
		code  *kerr.Error
	}{
		{"gzip", record.CodecGzip, gz, kerr.MessageTooLarge},
		{"zstd", record.CodecZstd, zsBody, kerr.MessageTooLarge},
		{"lz4", record.CodecLZ4, lzBody, kerr.MessageTooLarge},
		{"snappy-raw", record.CodecSnappy, snap, kerr.MessageTooLarge},
		{"snappy-xerial", record.CodecSnappy, xerial, kerr.MessageTooLarge},
		{"snappy-lying-block", record.CodecSnappy, under, kerr.CorruptMessage},
	}
	v := New(record.NewDecompressor())
	cfg := DefaultConfig()
	// A GiB of deflate or LZ4 cannot fit in 1 MiB (their best ratios are
	// about 1032:1 and 255:1), so let the batch in: the decompression limit
	// is what is under test.
	cfg.MaxMessageBytes = 8 << 20
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			buf := bombBatch(c.codec, c.body)
			orig := append([]byte(nil), buf...)
			var err error
			alloc, growth, took := measure(func() {
				_, err = v.ValidateAndAssignOffsets(buf, record.OriginClient, cfg, 1000, 0, 1)
			})
			t.Logf("%d-byte batch: %v after %v, allocated %d KiB, heap growth %d KiB", len(buf), err, took, alloc>>10, growth>>10)
			var re *record.Error
			if !errors.As(err, &re) || re.Code != c.code {
				t.Fatalf("got %v, want %s", err, c.code.Message)
			}
			if alloc >= heapBudget || growth >= heapBudget {
				t.Fatalf("allocated %d bytes (heap growth %d), budget %d", alloc, growth, heapBudget)
			}
			if string(buf) != string(orig) {
				t.Fatal("rejected batch was modified")
			}
		})
	}
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	out, err := record.NewCompressor().Compress(record.CodecGzip, nil, b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBombHelpers checks the hand-made streams decode to what they claim,
// on a size small enough to decode in full.
func TestBombHelpers(t *testing.T) {
	const n = 8 << 20 // a multiple of every helper's unit
	d := record.NewDecompressor()
	for _, c := range []struct {
		codec record.Codec
		body  []byte
	}{
		{record.CodecGzip, gzipZeros(t, n)},
		{record.CodecZstd, zstdZeros(n)},
		{record.CodecLZ4, lz4Zeros(n)},
	} {
		s, err := d.Open(c.codec, c.body, 1<<30)
		if err != nil {
			t.Fatalf("%s: %v", c.codec, err)
		}
		buf := make([]byte, 1<<20)
		var total int64
		for {
			m, err := s.Read(buf)
			for _, b := range buf[:m] {
				if b != 0 {
					t.Fatalf("%s: non-zero byte", c.codec)
				}
			}
			total += int64(m)
			if err != nil {
				break
			}
		}
		s.Close()
		if total != n {
			t.Fatalf("%s: decoded %d bytes, want %d", c.codec, total, n)
		}
	}
}

// TestManyHeaders: a small record declaring a million headers is refused
// before any is read; a record really holding a million empty headers (2 MB,
// compressed to a few KiB) is accepted, skipped over without allocating per
// header.
func TestManyHeaders(t *testing.T) {
	v := New(record.NewDecompressor())
	cfg := DefaultConfig()

	declared := newTestBatch(record.CodecNone, 1, encodeRecord(nil, testRec{key: []byte("k"), declHeaders: 1_000_000})).bytes()
	var err error
	alloc, _, took := measure(func() {
		_, err = v.ValidateAndAssignOffsets(declared, record.OriginClient, cfg, 1000, 0, 1)
	})
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("declared headers: got %v, want INVALID_RECORD", err)
	}
	if took > time.Second || alloc > 1<<20 {
		t.Fatalf("declared headers: took %v and allocated %d bytes", took, alloc)
	}

	raw := encodeRecord(nil, testRec{key: []byte("k"), headers: 1_000_000, declHeaders: -1})
	real := newTestBatch(record.CodecGzip, 1, compress(t, record.CodecGzip, false, raw)).bytes()
	var info Info
	alloc, _, took = measure(func() {
		info, err = v.ValidateAndAssignOffsets(real, record.OriginClient, cfg, 1000, 0, 1)
	})
	t.Logf("%d-byte batch with %d bytes of headers: %v, allocated %d KiB", len(real), len(raw), took, alloc>>10)
	if err != nil || info.NumRecords != 1 {
		t.Fatalf("real headers: got %+v, %v", info, err)
	}
	if alloc >= heapBudget {
		t.Fatalf("real headers: allocated %d bytes", alloc)
	}
}
