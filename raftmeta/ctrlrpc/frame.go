// Package ctrlrpc is the channel between brokers and the active controller
// (Kafka's CONTROLLER listener with its NodeToControllerChannelManager):
// Kafka-protocol requests over the port raft already binds. A connection
// that starts with the byte Magic carries controller requests, one Kafka
// frame each (size, request header, kmsg body); any other first byte is
// hashicorp/raft's own transport, whose RPC type byte is 0..4. StreamLayer
// splits the two on accept; Server answers the controller requests through
// a Handler; Client sends requests to whichever node is the active
// controller, following leadership changes.
//
// Unlike a Kafka listener, a controller connection may answer requests out
// of order: each response carries its request's correlation id, so a slow
// metadata write does not hold up a heartbeat behind it.
package ctrlrpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/kframe"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// Magic is the first byte of a controller RPC connection.
const Magic byte = 0xFE

// maxFrameBytes bounds a frame's size before it is allocated (Kafka's
// socket.request.max.bytes default).
const maxFrameBytes = 100 << 20

// errFrame marks a frame that cannot be parsed: the connection is closed.
var errFrame = errors.New("ctrlrpc: malformed frame")

// readFrame reads one size-prefixed frame.
func readFrame(r io.Reader) ([]byte, error) { return kframe.ReadFrame(r, maxFrameBytes) }

// requestHeader is the request header (v1, or v2 for flexible requests).
type requestHeader struct {
	key           int16
	version       int16
	correlationID int32
	clientID      string
}

// parseRequest decodes a request frame (without its size).
func parseRequest(b []byte) (requestHeader, kmsg.Request, error) {
	var h requestHeader
	if len(b) < 10 {
		return h, nil, fmt.Errorf("%w: %d byte header", errFrame, len(b))
	}
	h.key = int16(binary.BigEndian.Uint16(b))
	h.version = int16(binary.BigEndian.Uint16(b[2:]))
	h.correlationID = int32(binary.BigEndian.Uint32(b[4:]))
	idLen := int16(binary.BigEndian.Uint16(b[8:]))
	b = b[10:]
	if idLen > 0 {
		if int(idLen) > len(b) {
			return h, nil, fmt.Errorf("%w: client id length %d", errFrame, idLen)
		}
		h.clientID = string(b[:idLen])
		b = b[idLen:]
	}
	req := requestForKey(h.key)
	if req == nil {
		return h, nil, fmt.Errorf("%w: unknown api key %d", errFrame, h.key)
	}
	if h.version < 0 || h.version > req.MaxVersion() {
		return h, nil, fmt.Errorf("%w: %s v%d not supported", errFrame, apiName(h.key), h.version)
	}
	req.SetVersion(h.version)
	if req.IsFlexible() {
		var err error
		if b, err = kframe.SkipTags(b); err != nil {
			return h, nil, err
		}
	}
	if err := req.ReadFrom(b); err != nil {
		return h, nil, fmt.Errorf("%w: %s v%d: %v", errFrame, apiName(h.key), h.version, err)
	}
	return h, req, nil
}

// requestForKey returns a new request for an api key: a KIP-1279 mirror
// RPC's first (raftmeta/mirrormsg), so a mirror key stays Strait's even if
// kmsg comes to know the number (as it came to know the old 94,
// UnregisterController), then kmsg's.
func requestForKey(key int16) kmsg.Request {
	if req := mirrormsg.RequestForKey(key); req != nil {
		return req
	}
	return kmsg.RequestForKey(key)
}

// apiName names an api key for logs and errors, mirror RPCs first.
func apiName(key int16) string {
	if n := mirrormsg.NameForKey(key); n != "" {
		return n
	}
	return kmsg.NameForKey(key)
}

// appendResponse appends a response frame: size, correlation id, the
// header's tagged fields for a flexible response, the body.
func appendResponse(dst []byte, correlationID int32, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(correlationID))
	if resp.IsFlexible() {
		dst = append(dst, 0)
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// parseResponseID reads a response frame's correlation id.
func parseResponseID(b []byte) (int32, []byte, error) {
	if len(b) < 4 {
		return 0, nil, fmt.Errorf("%w: %d byte response", errFrame, len(b))
	}
	return int32(binary.BigEndian.Uint32(b)), b[4:], nil
}
