package wire

import (
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

// fuzzMemory is request memory for the fuzz target: it refuses every
// other reservation when refuse is set, as a pool short of memory would
// until woken.
type fuzzMemory struct {
	refuse   bool
	refused  bool
	reserved int
}

func (m *fuzzMemory) reserveFrame(n int) bool {
	if m.refuse && !m.refused {
		m.refused = true
		return false
	}
	m.refused = false
	m.reserved += n
	return true
}

// FuzzFrame feeds arbitrary bytes, in pieces of a fuzzed size as socket
// reads would bring them, to the frame reader and the header parser, then
// resolves and decodes each frame's body as a server with a MirrorService
// does (so the mirror RPCs' decoders run too): no panic, no frame larger
// than the configured maximum, request memory reserved for exactly each
// frame's size, nothing consumed while memory is short, and an oversized
// or negative size refused before its frame is read. The first byte picks
// the piece size and whether memory is short.
func FuzzFrame(f *testing.F) {
	const maxBytes = 1 << 16
	seed := func(req kmsg.Request) []byte { return append([]byte{0}, encodeRequest(1, "fuzz", req)...) }
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "a", "1"
	f.Add(seed(av))
	f.Add(seed(heartbeat("g", "m")))
	for _, mc := range mirrorCases() {
		f.Add(seed(mc.req()))
	}
	f.Add(append(seed(kmsg.NewPtrApiVersionsRequest()), encodeRequest(2, "fuzz", av)...))
	produce := kmsg.NewPtrProduceRequest()
	produce.Version, produce.Acks = 9, -1
	f.Add(seed(produce)) // a pooled frame
	two := append(seed(produce), encodeRequest(2, "fuzz", av)...)
	two[0] = 0x83 // three bytes at a time, memory short
	f.Add(two)
	f.Add([]byte{0, 0x7f, 0xff, 0xff, 0xff, 0})
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{1, 0, 0, 0, 8, 0, 18, 0, 3, 0, 0, 0, 1})
	f.Add([]byte{0x80, 0, 0, 0, 0})
	f.Add([]byte("\x00GET / HTTP/1.1\r\n\r\n"))
	apis := newAPITable(Services{Mirror: &mirrorStandIn{}})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		piece := int(data[0]&0x7f)%16 + 1 // 0 means all at once
		if data[0]&0x7f == 0 {
			piece = len(data)
		}
		input := data[1:]
		pool := &bufferPool{scribble: true}
		lim := &frameLimits{maxBytes: maxBytes, bufs: pool, poolKey: apis.poolsFrame}
		mem := &fuzzMemory{refuse: data[0]&0x80 != 0}
		in := &memInbound{}
		var fr frameRead
		consumed := 0 // input bytes the reader took, frames before this one included
		frameStart := 0
		for fed := 0; ; {
			if fed < len(input) {
				n := min(piece, len(input)-fed)
				in.b = append(in.b, input[fed:fed+n]...)
				fed += n
			}
			for {
				before := in.InboundBuffered()
				reservedBefore := mem.reserved
				st, err := fr.next(in, lim, mem, 0)
				consumed += before - in.InboundBuffered()
				if err != nil {
					if !errors.Is(err, ErrFrameTooLarge) && !errors.Is(err, ErrInvalidFrameSize) {
						t.Fatalf("unexpected error %v", err)
					}
					if in.InboundBuffered() != before || consumed != frameStart {
						t.Fatal("a refused frame consumed input")
					}
					size := int32(binary.BigEndian.Uint32(in.b))
					if size >= 0 && size <= maxBytes {
						t.Fatalf("refused a valid size %d", size)
					}
					return
				}
				if st == frameNoMemory {
					if in.InboundBuffered() != before || fr.active || mem.reserved != reservedBefore {
						t.Fatal("a frame waiting for memory consumed input or memory")
					}
					continue // woken: try again
				}
				if st == frameIncomplete {
					want := 0 // request memory held: the begun frame's size
					if fr.active {
						want = len(fr.buf)
					}
					if mem.reserved != want || fr.reserved != want {
						t.Fatalf("%d bytes of request memory held (%d by the frame) for a %d-byte frame begun", mem.reserved, fr.reserved, want)
					}
					break
				}
				frame, pooled, reserved := fr.take()
				mem.reserved -= reserved
				if reserved != len(frame) || mem.reserved != 0 {
					t.Fatalf("a %d-byte frame held %d bytes of request memory (%d left over)", len(frame), reserved, mem.reserved)
				}
				// A pooled frame's capacity is its size class's, at
				// most 25% above its size.
				if limit := maxBytes; len(frame) > limit || (!pooled && cap(frame) > limit) || cap(frame) > limit+limit/4 {
					t.Fatalf("frame of %d bytes (cap %d) above the maximum", len(frame), cap(frame))
				}
				if consumed-frameStart != len(frame)+4 {
					t.Fatalf("consumed %d bytes for a %d-byte frame", consumed-frameStart, len(frame))
				}
				frameStart = consumed
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
			if fed == len(input) {
				break
			}
		}
		// Whatever is left is an incomplete frame: its prefix, or its
		// buffer with the rest not yet arrived.
		if fr.active {
			if fr.filled >= len(fr.buf) {
				t.Fatal("a complete frame was not handed over")
			}
			if fr.pooled {
				pool.put(fr.buf)
			}
		} else if in.InboundBuffered() >= 6 || (in.InboundBuffered() >= 4 && binary.BigEndian.Uint32(in.b) < 2) {
			t.Fatalf("%d bytes left unread with no frame begun", in.InboundBuffered())
		}
	})
}

// FuzzRequestDecode decodes arbitrary bodies as every request kmsg or
// mirrormsg knows (mirrormsg's for keys 9400-9414, as the server does), at
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
