package ctrlrpc

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
)

// ForwardID names one request a broker forwards to the active controller,
// the same on every retry of it, so that a controller can answer a retry
// whose first attempt did commit (its answer was lost on the way back)
// with the first answer instead of applying the write again. Kafka's
// forwarding (KIP-590) has no such id; its producer ids and sequences play
// the same part for produce requests, and this borrows their shape: the
// sender, an incarnation of the sender, and a sequence within it.
type ForwardID struct {
	// Node is the forwarding broker's node id.
	Node int32
	// Session is random per broker process, so a restarted broker whose
	// sequence starts again never repeats an id.
	Session uint64
	// Seq counts the broker's forwarded requests from 1.
	Seq uint64
}

// IsZero reports whether id names no request.
func (id ForwardID) IsZero() bool { return id == ForwardID{} }

// forwardMarker separates a NodeClientID from the ForwardID appended to it
// in a forwarded request's client id.
const forwardMarker = ";fwd="

// clientID is the client id a request carrying id is sent with: the
// channel's own followed by the id. The request header is the one place a
// Kafka frame carries caller data for every api key and version.
func (id ForwardID) clientID(base string) string {
	return fmt.Sprintf("%s%s%x.%x", base, forwardMarker, id.Session, id.Seq)
}

// splitForwardID separates a forwarded request's client id into the
// channel's client id and the ForwardID (zero when there is none).
func splitForwardID(clientID string) (string, ForwardID) {
	base, tail, ok := strings.Cut(clientID, forwardMarker)
	if !ok {
		return clientID, ForwardID{}
	}
	node, isNode := ParseNodeClientID(base)
	var id ForwardID
	if n, err := fmt.Sscanf(tail, "%x.%x", &id.Session, &id.Seq); err != nil || n != 2 || !isNode || id.clientID(base) != clientID {
		return clientID, ForwardID{}
	}
	id.Node = node
	return base, id
}

type forwardIDKey struct{}

// WithForwardID returns ctx carrying id: Client.Send sends it with the
// request, and the Server hands it to the Handler (ForwardIDFrom).
func WithForwardID(ctx context.Context, id ForwardID) context.Context {
	return context.WithValue(ctx, forwardIDKey{}, id)
}

// ForwardIDFrom returns the ForwardID ctx carries.
func ForwardIDFrom(ctx context.Context) (ForwardID, bool) {
	id, ok := ctx.Value(forwardIDKey{}).(ForwardID)
	return id, ok && !id.IsZero()
}

// ForwardIDs hands out a broker's ForwardIDs. Safe for concurrent use.
type ForwardIDs struct {
	node    int32
	session uint64
	seq     atomic.Uint64
}

// NewForwardIDs returns the ids of node's process; session must differ
// between processes (a random number).
func NewForwardIDs(node int32, session uint64) *ForwardIDs {
	return &ForwardIDs{node: node, session: session}
}

// Next returns a new id.
func (g *ForwardIDs) Next() ForwardID {
	return ForwardID{Node: g.node, Session: g.session, Seq: g.seq.Add(1)}
}
