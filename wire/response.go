package wire

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// encodeResponse frames resp for correlation id corr into a buffer from
// pool (nil: a fresh one): the 4-byte size, the response header, the
// body. The header is v0 (correlation id) for non-flexible versions and
// v1 (plus an empty tagged-field section) for flexible ones, except
// ApiVersions, whose response header is always v0 so a client that sent a
// version the broker does not know can still read the answer
// (ApiVersionsResponse.json, KIP-511).
func encodeResponse(pool *bufferPool, corr int32, resp kmsg.Response) []byte {
	if fe, ok := resp.(*fetchResponse); ok {
		if buf, err := fe.encodeFramed(corr, pool); err == nil {
			return buf
		}
		// Unknown tagged fields: kmsg encodes them.
		fe.fillRecords()
		resp = fe.FetchResponse
	}
	var buf []byte
	if pool != nil {
		buf = pool.get(1 << minBufShift)
	}
	buf = append(buf, 0, 0, 0, 0)
	buf = binary.BigEndian.AppendUint32(buf, uint32(corr))
	if resp.IsFlexible() && resp.Key() != int16(kmsg.ApiVersions) {
		buf = append(buf, 0)
	}
	buf = resp.AppendTo(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	return buf
}
