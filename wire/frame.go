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
// buffers once the callback returns.
func readFrame(in inbound, maxBytes int32) ([]byte, error) {
	buffered := in.InboundBuffered()
	if buffered < 4 {
		return nil, nil
	}
	prefix, err := in.Peek(4)
	if err != nil {
		return nil, fmt.Errorf("wire: peek size: %w", err)
	}
	size := int32(binary.BigEndian.Uint32(prefix))
	switch {
	case size < 0:
		return nil, fmt.Errorf("%w: %d", ErrInvalidFrameSize, size)
	case size > maxBytes:
		return nil, fmt.Errorf("%w: %d > %d", ErrFrameTooLarge, size, maxBytes)
	case buffered-4 < int(size):
		return nil, nil
	}
	if _, err := in.Discard(4); err != nil {
		return nil, fmt.Errorf("wire: discard size: %w", err)
	}
	frame := make([]byte, size)
	if n, err := in.Read(frame); err != nil || n != len(frame) {
		return nil, fmt.Errorf("wire: read frame: %d of %d bytes: %v", n, len(frame), err)
	}
	return frame, nil
}
