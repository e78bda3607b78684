package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// recordReader hands its stream out at most max bytes a Read, as
// crypto/tls hands out one record's plaintext at a time.
type recordReader struct {
	data []byte
	max  int
	err  error // returned once data is exhausted (io.EOF when nil)
}

func (r *recordReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.max)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// writeLog keeps every write the relay makes.
type writeLog struct {
	all    bytes.Buffer
	writes []int
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.writes = append(w.writes, len(p))
	return w.all.Write(p)
}

func frameOf(size int, fill byte) []byte {
	f := make([]byte, 4+size)
	binary.BigEndian.PutUint32(f, uint32(size))
	for i := 4; i < len(f); i++ {
		f[i] = fill + byte(i)
	}
	return f
}

// TestFrameRelayWritesWholeFrames: the relay passes the client's bytes on
// unchanged, and a write never ends inside a frame that fits what it may
// hold, however the TLS records cut the stream. Copying read by read (the
// io.Copy the relay replaced) writes 8 or more pieces of a 128 KiB
// produce request and fails here.
func TestFrameRelayWritesWholeFrames(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var stream bytes.Buffer
	var ends []int // offsets where frames end
	sizes := []int{0, 10, 16 << 10, 128 << 10, 3, relayHoldBytes - 4, 40 << 10}
	for range 30 {
		sizes = append(sizes, rng.IntN(200<<10))
	}
	for i, n := range sizes {
		stream.Write(frameOf(n, byte(i)))
		ends = append(ends, stream.Len())
	}
	for _, max := range []int{1, 7, 16 << 10, 16<<10 + 29, 1 << 20} {
		pool := &bufferPool{}
		var out writeLog
		src := &recordReader{data: bytes.Clone(stream.Bytes()), max: max}
		if err := newFrameRelay(&out, src, pool).run(); !errors.Is(err, io.EOF) {
			t.Fatalf("max %d: run = %v, want EOF", max, err)
		}
		if !bytes.Equal(out.all.Bytes(), stream.Bytes()) {
			t.Fatalf("max %d: relayed %d bytes differ from the %d sent", max, out.all.Len(), stream.Len())
		}
		isEnd := map[int]bool{}
		for _, e := range ends {
			isEnd[e] = true
		}
		at := 0
		for _, w := range out.writes {
			at += w
			if !isEnd[at] {
				t.Fatalf("max %d: a write of %d bytes ended at %d, inside a frame (writes %v)", max, w, at, out.writes)
			}
		}
		if len(out.writes) > len(sizes) {
			t.Fatalf("max %d: %d writes for %d frames", max, len(out.writes), len(sizes))
		}
		if n := pool.outstanding(); n != 0 {
			t.Fatalf("max %d: %d pooled buffers not given back", max, n)
		}
	}
}

// TestFrameRelayLargeFrame: a frame larger than relayHoldBytes goes on in
// pieces of relayHoldBytes as they fill, so a relay never holds more, and
// the frames after it are gathered whole again.
func TestFrameRelayLargeFrame(t *testing.T) {
	big := frameOf(3*relayHoldBytes+100, 1)
	small := frameOf(500, 2)
	stream := append(bytes.Clone(big), small...)
	pool := &bufferPool{}
	var out writeLog
	if err := newFrameRelay(&out, &recordReader{data: bytes.Clone(stream), max: 16 << 10}, pool).run(); !errors.Is(err, io.EOF) {
		t.Fatalf("run = %v", err)
	}
	if !bytes.Equal(out.all.Bytes(), stream) {
		t.Fatal("relayed bytes differ")
	}
	for i, w := range out.writes {
		if w > relayHoldBytes {
			t.Fatalf("write %d is %d bytes, more than relayHoldBytes", i, w)
		}
	}
	if last := out.writes[len(out.writes)-1]; last != len(small) && last != len(small)+len(big)%relayHoldBytes {
		t.Fatalf("the last write is %d bytes: the frame after the large one was not written whole (writes %v)", last, out.writes)
	}
	if n := pool.outstanding(); n != 0 {
		t.Fatalf("%d pooled buffers not given back", n)
	}
}

// TestFrameRelayPassesWhatIsNotAFrame: a negative size is no frame; the
// bytes go on as they come, so gnet's framing refuses them and closes the
// connection as it did before, and a stream cut mid-frame is written up
// to where it ended.
func TestFrameRelayPassesWhatIsNotAFrame(t *testing.T) {
	bad := append(frameOf(10, 1), 0xff, 0xff, 0xff, 0xf0, 1, 2, 3)
	pool := &bufferPool{}
	var out writeLog
	if err := newFrameRelay(&out, &recordReader{data: bytes.Clone(bad), max: 5}, pool).run(); !errors.Is(err, io.EOF) {
		t.Fatalf("run = %v", err)
	}
	if !bytes.Equal(out.all.Bytes(), bad) {
		t.Fatalf("relayed %x, want %x", out.all.Bytes(), bad)
	}

	cut := frameOf(100<<10, 3)[:70<<10]
	gone := errors.New("connection reset")
	out = writeLog{}
	if err := newFrameRelay(&out, &recordReader{data: bytes.Clone(cut), max: 16 << 10, err: gone}, pool).run(); !errors.Is(err, gone) {
		t.Fatalf("run = %v, want the read error", err)
	}
	if !bytes.Equal(out.all.Bytes(), cut) {
		t.Fatalf("relayed %d bytes of the %d before the client went", out.all.Len(), len(cut))
	}
	if n := pool.outstanding(); n != 0 {
		t.Fatalf("%d pooled buffers not given back", n)
	}
}
