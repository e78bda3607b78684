package wire

import (
	"encoding/binary"
	"io"
)

// The relay of a TLS connection (tls.go) passes the client's decrypted
// bytes to gnet's end of the socketpair a whole request frame at a time.
//
// crypto/tls hands over at most one TLS record, 16 KiB of plaintext, per
// Read. Copied on as they came (io.Copy), a produce request of 8 batches
// of 16 KiB reached the socketpair in 8 or more writes, and each write
// woke the event loop, which read a piece, found the frame incomplete and
// slept again: issue 29 measured TLS produce at 1.5x the CPU per GiB of
// plaintext. Gathering the records of a frame first costs no latency (gnet
// can do nothing with part of a frame) and leaves one write, and one
// loop wake-up, per request, or per pipelined burst of them.
//
// What is held is bounded: a frame larger than relayHoldBytes goes on in
// pieces of that size as they fill, so memory stays that per busy
// connection whatever socket.request.max.bytes allows, and an idle
// connection holds only its relayReadBytes read buffer (what io.Copy's
// buffer cost before). A size that is not a frame size (negative) ends
// the gathering: everything passes through as it comes and gnet's framing
// rejects it as before, naming the problem.
const (
	relayReadBytes = 16 << 10  // one TLS record of plaintext
	relayHoldBytes = 256 << 10 // the most a relay holds back before writing
)

// frameRelay copies src to dst frame by frame; see above.
type frameRelay struct {
	dst  io.Writer
	src  io.Reader
	pool *bufferPool // where a buffer larger than small comes from

	small []byte
	buf   []byte // small, or a pooled buffer while a large frame gathers
	n     int    // bytes of buf held, not yet written
	// rest is how much of a frame already partly written is still to
	// come (a frame larger than relayHoldBytes).
	rest int64
	raw  bool // a bad size was seen: pass everything through
}

func newFrameRelay(dst io.Writer, src io.Reader, pool *bufferPool) *frameRelay {
	small := make([]byte, relayReadBytes)
	return &frameRelay{dst: dst, src: src, pool: pool, small: small, buf: small}
}

// run copies until src or dst fails; what src gave before its error is
// written first, so a client's last bytes before it closed reach gnet,
// which sees them end mid-frame just as it would have before.
func (fr *frameRelay) run() error {
	defer fr.release()
	for {
		m, err := fr.src.Read(fr.buf[fr.n:])
		fr.n += m
		if err != nil {
			if fr.n > 0 {
				if werr := fr.write(fr.n); werr != nil {
					return werr
				}
			}
			return err
		}
		if werr := fr.flush(); werr != nil {
			return werr
		}
	}
}

// flush writes the complete frames held, and makes room when a frame
// fills the buffer: a larger buffer, or the piece held passed on.
func (fr *frameRelay) flush() error {
	done := fr.complete()
	if done == 0 && fr.n == len(fr.buf) {
		if len(fr.buf) < relayHoldBytes {
			fr.grow()
			return nil
		}
		// A frame larger than relayHoldBytes: pass on what is held.
		if fr.rest == 0 {
			fr.rest = 4 + int64(binary.BigEndian.Uint32(fr.buf))
		}
		fr.rest -= int64(fr.n)
		return fr.write(fr.n)
	}
	if done == 0 {
		return nil
	}
	return fr.write(done)
}

// complete returns how many of the bytes held end on a frame boundary:
// the rest of a frame passing through, then every whole frame after it.
func (fr *frameRelay) complete() int {
	if fr.raw {
		return fr.n
	}
	i := 0
	if fr.rest > 0 {
		if int64(fr.n) < fr.rest {
			return 0
		}
		i, fr.rest = int(fr.rest), 0
	}
	for i+4 <= fr.n {
		size := int32(binary.BigEndian.Uint32(fr.buf[i:]))
		if size < 0 {
			fr.raw = true
			return fr.n
		}
		end := int64(i) + 4 + int64(size)
		if end > int64(fr.n) {
			break
		}
		i = int(end)
	}
	return i
}

// write passes on the first k bytes held and keeps the rest at the front.
func (fr *frameRelay) write(k int) error {
	if _, err := fr.dst.Write(fr.buf[:k]); err != nil {
		return err
	}
	fr.n = copy(fr.buf, fr.buf[k:fr.n])
	if fr.n == 0 && fr.rest == 0 && len(fr.buf) > len(fr.small) {
		fr.release()
	}
	return nil
}

// grow moves what is held into a pooled buffer of relayHoldBytes.
func (fr *frameRelay) grow() {
	b := fr.pool.get(relayHoldBytes)
	b = b[:relayHoldBytes] // the pool may hand out a larger buffer; hold no more
	fr.n = copy(b, fr.buf[:fr.n])
	fr.buf = b
}

// release gives a pooled buffer back (nothing may be held in it).
func (fr *frameRelay) release() {
	if len(fr.buf) > len(fr.small) {
		fr.pool.put(fr.buf[:0])
		fr.buf = fr.small
	}
}
