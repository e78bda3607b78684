package wire

import (
	"encoding/binary"
	"fmt"
)

// inbound is the part of gnet.Conn the frame splitter reads; an interface
// so the fuzz target can drive the splitter without a socket.
type inbound interface {
	InboundBuffered() int
	Peek(n int) ([]byte, error)
	Discard(n int) (int, error)
	Read(p []byte) (int, error)
}

// readFrame takes the next complete request off in: a 4-byte big-endian
// size, then that many bytes. It returns nil while the frame is incomplete
// (the bytes stay buffered). The size is checked against maxBytes before
// anything is allocated for it, as Kafka's NetworkReceive checks
// socket.request.max.bytes; an invalid size is an error and the caller
// closes the connection. The frame is copied out because gnet reuses its
// buffers once the callback returns: into a buffer from pool when
// poolKey reports the request's key pools its frames (pooled is then true
// and the caller gives it back), else into a new one.
func readFrame(in inbound, maxBytes int32, pool *bufferPool, poolKey func(int16) bool) (frame []byte, pooled bool, err error) {
	buffered := in.InboundBuffered()
	if buffered < 4 {
		return nil, false, nil
	}
	// The size, and the key after it when buffered.
	prefix, err := in.Peek(min(buffered, 6))
	if err != nil {
		return nil, false, fmt.Errorf("wire: peek size: %w", err)
	}
	size := int32(binary.BigEndian.Uint32(prefix))
	switch {
	case size < 0:
		return nil, false, fmt.Errorf("%w: %d", ErrInvalidFrameSize, size)
	case size > maxBytes:
		return nil, false, fmt.Errorf("%w: %d > %d", ErrFrameTooLarge, size, maxBytes)
	case buffered-4 < int(size):
		return nil, false, nil
	}
	if pool != nil && size >= 2 && poolKey(int16(binary.BigEndian.Uint16(prefix[4:6]))) {
		frame, pooled = pool.get(int(size))[:size], true
	}
	if frame == nil {
		frame = make([]byte, size)
	}
	if _, err := in.Discard(4); err != nil {
		return nil, false, fmt.Errorf("wire: discard size: %w", err)
	}
	if n, err := in.Read(frame); err != nil || n != len(frame) {
		if pooled {
			pool.put(frame)
		}
		return nil, false, fmt.Errorf("wire: read frame: %d of %d bytes: %v", n, len(frame), err)
	}
	return frame, pooled, nil
}
