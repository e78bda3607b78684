// Package kframe reads Kafka protocol frames: the size prefix, a
// tagged-field section, a response body decoded for its request. The
// blocking client of the wire layer (wire/kclient) and the controller
// channel (raftmeta/ctrlrpc) share it; it is a leaf of raftmeta's, the
// lower of the two, importing only kmsg, so that the metadata layer does
// not import the wire layer above it (DESIGN.md §2).
package kframe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrFrame marks bytes that cannot be parsed as what the protocol says
// they are: the connection they came on is dropped.
var ErrFrame = errors.New("malformed Kafka frame")

// ReadFrame reads one size-prefixed frame of at most max bytes into a new
// buffer.
func ReadFrame(r io.Reader, max int32) ([]byte, error) { return ReadFrameInto(r, max, nil) }

// ReadFrameInto reads one size-prefixed frame of at most max bytes into
// buf when it has the room, else into a new buffer.
func ReadFrameInto(r io.Reader, max int32, buf []byte) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 0 || n > max {
		return nil, fmt.Errorf("%w: frame size %d (at most %d)", ErrFrame, n, max)
	}
	b := buf[:0]
	if cap(b) < int(n) {
		b = make([]byte, n)
	}
	b = b[:n]
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// DecodeResponse decodes an answer to req from the bytes after its
// correlation id: the header's tagged fields of a flexible response
// (ApiVersions always answers with header v0, KIP-511), then the body.
func DecodeResponse(req kmsg.Request, b []byte) (kmsg.Response, error) {
	resp := req.ResponseKind()
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		var err error
		if b, err = SkipTags(b); err != nil {
			return nil, err
		}
	}
	if err := resp.ReadFrom(b); err != nil {
		return nil, fmt.Errorf("%w: %s v%d: %v", ErrFrame, kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return resp, nil
}

// SkipTags skips a tagged-field section.
func SkipTags(b []byte) ([]byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, fmt.Errorf("%w: tag count", ErrFrame)
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		if _, k = binary.Uvarint(b); k <= 0 {
			return nil, fmt.Errorf("%w: tag key", ErrFrame)
		}
		b = b[k:]
		size, k := binary.Uvarint(b)
		if k <= 0 || size > uint64(len(b)-k) {
			return nil, fmt.Errorf("%w: tag size", ErrFrame)
		}
		b = b[k+int(size):]
	}
	return b, nil
}
