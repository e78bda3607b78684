package wire

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
)

// inbound is the part of gnet.Conn the frame reader reads; an interface
// so the fuzz target can drive it without a socket.
type inbound interface {
	InboundBuffered() int
	Peek(n int) ([]byte, error)
	Discard(n int) (int, error)
	Read(p []byte) (int, error)
}

// frameMemory reserves request memory (reqmem.go) for a frame of n bytes,
// or reports false when there is none to spare now.
type frameMemory interface {
	reserveFrame(n int) bool
}

// frameLimits are the server-wide inputs of frame reading.
type frameLimits struct {
	maxBytes int32            // socket.request.max.bytes
	bufs     *bufferPool      // where frames of pooled keys come from
	poolKey  func(int16) bool // whether a key's frames are pooled (api.poolFrame)
}

// frameState is what frameRead.next found.
type frameState int

const (
	frameIncomplete frameState = iota // more bytes are needed
	frameComplete                     // take the frame
	frameNoMemory                     // request memory is short: stop reading until woken
)

// frameRead is the request frame a connection is reading: a 4-byte
// big-endian size, then that many bytes. Once the size is known it is
// checked against socket.request.max.bytes, as Kafka's NetworkReceive
// does, and request memory is reserved for it, as Kafka's
// NetworkReceive.readFrom asks its MemoryPool, both before anything of that
// size is allocated; then the frame's buffer is allocated and every
// socket read is moved into it as it arrives. gnet's own inbound buffer
// therefore stays small (what one read brings in), a request exists in
// memory once, and a client that sends half a request holds only its
// reservation. Fields are the loop's, except progress.
type frameRead struct {
	active   bool   // the size has been read and buf allocated
	buf      []byte // the frame, len its size
	filled   int    // bytes of buf received
	pooled   bool   // buf is from the server's buffer pool
	reserved int    // request memory held for the frame
	// progress is the clock's UnixNano when bytes last arrived (or the
	// frame began); other loops read it to find stalled frames.
	progress atomic.Int64
}

// next moves what in holds into the frame and reports whether the frame
// is complete. An invalid size is an error, the caller closes the
// connection; nothing is consumed then, nor while memory is short.
func (fr *frameRead) next(in inbound, lim *frameLimits, mem frameMemory, now int64) (frameState, error) {
	if !fr.active {
		buffered := in.InboundBuffered()
		if buffered < 4 {
			return frameIncomplete, nil
		}
		// The size, and the key after it when buffered.
		prefix, err := in.Peek(min(buffered, 6))
		if err != nil {
			return frameIncomplete, fmt.Errorf("wire: peek size: %w", err)
		}
		size := int32(binary.BigEndian.Uint32(prefix))
		switch {
		case size < 0:
			return frameIncomplete, fmt.Errorf("%w: %d", ErrInvalidFrameSize, size)
		case size > lim.maxBytes:
			return frameIncomplete, fmt.Errorf("%w: %d > %d", ErrFrameTooLarge, size, lim.maxBytes)
		case size >= 2 && len(prefix) < 6:
			return frameIncomplete, nil // the key decides where the buffer comes from
		}
		if !mem.reserveFrame(int(size)) {
			return frameNoMemory, nil
		}
		fr.pooled = lim.bufs != nil && size >= 2 && lim.poolKey(int16(binary.BigEndian.Uint16(prefix[4:6])))
		if fr.pooled {
			fr.buf = lim.bufs.get(int(size))[:size]
		} else {
			fr.buf = make([]byte, size)
		}
		fr.active, fr.filled, fr.reserved = true, 0, int(size)
		fr.progress.Store(now)
		if _, err := in.Discard(4); err != nil {
			return frameIncomplete, fmt.Errorf("wire: discard size: %w", err)
		}
	}
	if fr.filled < len(fr.buf) && in.InboundBuffered() > 0 {
		n, err := in.Read(fr.buf[fr.filled:])
		if n > 0 {
			fr.filled += n
			fr.progress.Store(now)
		} else if err != nil {
			return frameIncomplete, fmt.Errorf("wire: read frame: %d of %d bytes: %w", fr.filled, len(fr.buf), err)
		}
	}
	if fr.filled < len(fr.buf) {
		return frameIncomplete, nil
	}
	return frameComplete, nil
}

// take hands the complete frame over: its buffer, whether it is pooled
// (the request gives it back when it ends) and the request memory it
// holds. fr is ready for the next frame.
func (fr *frameRead) take() (buf []byte, pooled bool, reserved int) {
	buf, pooled, reserved = fr.buf, fr.pooled, fr.reserved
	fr.reset()
	return buf, pooled, reserved
}

func (fr *frameRead) reset() {
	fr.active, fr.buf, fr.filled, fr.pooled, fr.reserved = false, nil, 0, false, 0
}
