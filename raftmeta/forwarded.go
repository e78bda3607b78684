package raftmeta

import (
	"fmt"
	"maps"
	"slices"

	"github.com/strait-io/strait/raftmeta/ctrlrpc"
)

// Forwarded requests (ctrlrpc.ForwardID) are written with their answer:
// the controller appends a ForwardedRequestRecord to the batch that
// carries a forwarded request out, so the answer commits exactly when the
// write does, and every replica (a controller elected later among them)
// can answer a retry of the request with it instead of applying it twice
// (controller_forwarded.go). Kafka's KRaft has no such record; it is
// Strait's, numbered with the mirror records above Kafka's apiKeys.

// maxForwardedAnswersPerNode bounds the answers the image keeps per
// forwarding broker, oldest dropped first. A broker retries a request only
// while it waits for it (forwardTimeout, 30 s): the window must hold what
// one broker forwards in that time, admin writes, a few a second at most.
const maxForwardedAnswersPerNode = 128

// ForwardedRequestRecord records that the forwarded request ID was
// carried out by the batch holding this record, and its answer: the
// response to a request of APIKey at APIVersion, encoded.
type ForwardedRequestRecord struct {
	ID         ctrlrpc.ForwardID
	APIKey     int16
	APIVersion int16
	Response   []byte
}

// ForwardedAnswer is a ForwardedRequestRecord in the image.
type ForwardedAnswer = ForwardedRequestRecord

func (*ForwardedRequestRecord) Type() RecordType { return ForwardedRequestRecordType }
func (*ForwardedRequestRecord) Version() int8    { return 0 }

func (r *ForwardedRequestRecord) appendTo(b []byte) []byte {
	b = appendInt(b, int64(r.ID.Node))
	b = appendInt(b, int64(r.ID.Session))
	b = appendInt(b, int64(r.ID.Seq))
	b = appendInt(b, int64(r.APIKey))
	b = appendInt(b, int64(r.APIVersion))
	return appendBytes(b, r.Response)
}

func decodeForwardedRequest(d *decoder) Record {
	r := &ForwardedRequestRecord{}
	r.ID.Node = d.int32()
	r.ID.Session = uint64(d.int64())
	r.ID.Seq = uint64(d.int64())
	r.APIKey = int16(d.int32())
	r.APIVersion = int16(d.int32())
	r.Response = d.byteSlice()
	return r
}

// ForwardedAnswer returns the answer the request id was given, if the
// image still holds it.
func (img *Image) ForwardedAnswer(id ctrlrpc.ForwardID) (*ForwardedAnswer, bool) {
	for _, a := range img.Forwarded[id.Node] {
		if a.ID == id {
			return a, true
		}
	}
	return nil, false
}

// putForwarded adds an answer to its broker's window. A request already
// answered is an error, which drops the batch: a forwarded write commits
// once, whichever controller proposes it again.
func (b *builder) putForwarded(r *ForwardedRequestRecord) error {
	if r.ID.IsZero() || r.ID.Node < 0 {
		return fmt.Errorf("invalid forwarded request id %+v", r.ID)
	}
	if _, ok := b.next.ForwardedAnswer(r.ID); ok {
		return fmt.Errorf("forwarded request %+v was already carried out", r.ID)
	}
	if !b.forwardedCopied {
		b.next.Forwarded = maps.Clone(b.next.Forwarded)
		if b.next.Forwarded == nil {
			b.next.Forwarded = map[int32][]*ForwardedAnswer{}
		}
		b.forwardedCopied = true
	}
	window := b.next.Forwarded[r.ID.Node]
	if len(window) >= maxForwardedAnswersPerNode {
		window = window[len(window)-maxForwardedAnswersPerNode+1:]
	}
	// Clip: append copies, leaving the published image's array alone.
	b.next.Forwarded[r.ID.Node] = append(slices.Clip(window), r)
	return nil
}

// appendForwardedRecords appends the answers of img, by broker, oldest
// first (a snapshot keeps them: a controller elected after restoring one
// still answers retries).
func appendForwardedRecords(out []Record, img *Image) []Record {
	for _, node := range slices.Sorted(maps.Keys(img.Forwarded)) {
		for _, a := range img.Forwarded[node] {
			out = append(out, a)
		}
	}
	return out
}
