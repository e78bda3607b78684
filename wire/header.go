package wire

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// requestHeader is Kafka's RequestHeader. Its version follows from the
// key and version: v0 (key, version, correlation id) only for
// ControlledShutdown v0, v1 adds the nullable client id, v2 adds tagged
// fields for flexible request versions (KIP-482). The client id keeps its
// int16 length in v2 too (RequestHeader.json: ClientId flexibleVersions
// "none").
type requestHeader struct {
	key, version  int16
	correlationID int32
	clientID      string // a null client id reads as "", as in Kafka
	body          []byte // the request body after the header
}

// parseHeader reads the header at the start of frame. flexible reports
// whether key/version uses the flexible header (v2); it is only consulted
// once key and version are known.
func parseHeader(frame []byte, flexible func(key, version int16) bool) (requestHeader, error) {
	var h requestHeader
	if len(frame) < 8 {
		return h, fmt.Errorf("%w: %d bytes", ErrInvalidHeader, len(frame))
	}
	r := kbin.Reader{Src: frame}
	h.key = r.Int16()
	h.version = r.Int16()
	h.correlationID = r.Int32()
	if h.key != int16(kmsg.ControlledShutdown) || h.version != 0 {
		if id := r.NullableString(); id != nil {
			h.clientID = *id
		}
	}
	if flexible(h.key, h.version) {
		kmsg.SkipTags(&r)
	}
	if !r.Ok() {
		return h, fmt.Errorf("%w: key %d version %d: truncated", ErrInvalidHeader, h.key, h.version)
	}
	h.body = r.Src
	return h, nil
}
