package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// memInbound is an in-memory inbound buffer with gnet.Conn's semantics.
type memInbound struct{ b []byte }

func (m *memInbound) InboundBuffered() int { return len(m.b) }

func (m *memInbound) Peek(n int) ([]byte, error) {
	if n > len(m.b) {
		return nil, io.ErrShortBuffer
	}
	return m.b[:n], nil
}

func (m *memInbound) Discard(n int) (int, error) {
	n = min(n, len(m.b))
	m.b = m.b[n:]
	return n, nil
}

func (m *memInbound) Read(p []byte) (int, error) {
	n := copy(p, m.b)
	m.b = m.b[n:]
	return n, nil
}

// FuzzFrame feeds arbitrary bytes to the frame splitter and the header
// parser, then resolves and decodes each frame's body as a server with a
// MirrorService does (so the mirror RPCs' decoders run too): no panic, no
// frame larger than the configured maximum, and an oversized or negative
// size is refused before its frame is read.
func FuzzFrame(f *testing.F) {
	const maxBytes = 1 << 16
	seed := func(req kmsg.Request) []byte { return encodeRequest(1, "fuzz", req) }
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "a", "1"
	f.Add(seed(av))
	f.Add(seed(heartbeat("g", "m")))
	for _, mc := range mirrorCases() {
		f.Add(seed(mc.req()))
	}
	f.Add(append(seed(kmsg.NewPtrApiVersionsRequest()), seed(av)...))
	produce := kmsg.NewPtrProduceRequest()
	produce.Version, produce.Acks = 9, -1
	f.Add(seed(produce)) // a pooled frame
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 8, 0, 18, 0, 3, 0, 0, 0, 1})
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	apis := newAPITable(Services{Mirror: &mirrorStandIn{}})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &memInbound{b: bytes.Clone(data)}
		pool := &bufferPool{scribble: true}
		for {
			before := in.InboundBuffered()
			frame, pooled, err := readFrame(in, maxBytes, pool, apis.poolsFrame)
			if err != nil {
				if !errors.Is(err, ErrFrameTooLarge) && !errors.Is(err, ErrInvalidFrameSize) {
					t.Fatalf("unexpected error %v", err)
				}
				if in.InboundBuffered() != before {
					t.Fatal("a refused frame consumed input")
				}
				size := int32(binary.BigEndian.Uint32(in.b))
				if size >= 0 && size <= maxBytes {
					t.Fatalf("refused a valid size %d", size)
				}
				return
			}
			if frame == nil {
				if in.InboundBuffered() != before {
					t.Fatal("an incomplete frame consumed input")
				}
				return
			}
			// A pooled frame's capacity is its size class's, at most 25%
			// above its size.
			if limit := maxBytes; len(frame) > limit || (!pooled && cap(frame) > limit) || cap(frame) > limit+limit/4 {
				t.Fatalf("frame of %d bytes (cap %d) above the maximum", len(frame), cap(frame))
			}
			if before-in.InboundBuffered() != len(frame)+4 {
				t.Fatalf("consumed %d bytes for a %d-byte frame", before-in.InboundBuffered(), len(frame))
			}
			h, err := parseHeader(frame, requestFlexible)
			if err == nil {
				r := &request{hdr: h}
				r.resolve(apis)
				if r.kreq != nil {
					_ = decodeBody(r.kreq, h.body)
				}
			}
			if pooled {
				pool.put(frame)
			}
		}
	})
}

// FuzzRequestDecode decodes arbitrary bodies as every request kmsg or
// mirrormsg knows (mirrormsg's for keys 94-105, as the server does), at
// every version its type defines, without recovering: a decoder must reject
// bad input with an error, never a panic. The first two bytes pick the key
// and version.
func FuzzRequestDecode(f *testing.F) {
	f.Add([]byte{18, 3, 0, 2, 'a', 2, '1', 0})
	f.Add([]byte{0, 9, 0xff, 0xff, 0, 1, 0, 0, 0x75, 0x30, 2})
	f.Add([]byte{3, 12, 2, 0x7f, 0xff, 0xff, 0xff})
	f.Add([]byte{1, 17, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{12, 4, 0x80, 0x80, 0x80, 0x80, 0x08})
	var keys []int16
	for k := int16(0); k < 200; k++ {
		if requestForKey(k) != nil {
			keys = append(keys, k)
		}
	}
	// The mirror seeds: the first byte is the key's index in keys.
	for _, mc := range mirrorCases() {
		req := mc.req()
		i := slices.Index(keys, req.Key())
		f.Add(append([]byte{byte(i), 0}, req.AppendTo(nil)...))
	}
	f.Add([]byte{byte(slices.Index(keys, 99)), 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0}) // DescribeMirrors, array bomb
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		kreq := requestForKey(keys[int(data[0])%len(keys)])
		kreq.SetVersion(int16(data[1]) % (kreq.MaxVersion() + 1))
		_ = kreq.ReadFrom(data[2:])
	})
}
