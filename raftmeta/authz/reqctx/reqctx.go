// Package reqctx carries who sent a request through a context.Context, so
// services below the wire layer (groups, ACLs, quotas) can see the client
// without importing the wire package.
//
// It lives under raftmeta/authz, below wire, replication and the
// coordinators, because what the services read from it is the authorizer's
// view of the request (Kafka's AuthorizableRequestContext: principal,
// listener, client id and host, API key and version) and the read check
// wire's authorizer decided; the connection's Unmute and Draining hooks
// ride along with the same request. It imports only the standard library,
// so importing it adds no layer to anyone.
package reqctx

import "context"

// Info describes the request's connection and client.
type Info struct {
	ConnID     uint64
	ClientID   string
	ClientHost string // the remote IP, as Kafka reports it in group descriptions
	Listener   string // listener name, e.g. PLAINTEXT
	Principal  string // "User:ANONYMOUS" until authentication lands
	APIKey     int16
	APIVersion int16
}

type ctxKey struct{ name string }

var infoKey = &ctxKey{"reqctx.Info"}

// With returns ctx carrying info.
func With(ctx context.Context, info Info) context.Context {
	return context.WithValue(ctx, infoKey, info)
}

// From returns the Info in ctx, or a zero Info with the anonymous principal.
func From(ctx context.Context) Info {
	if info, ok := ctx.Value(infoKey).(Info); ok {
		return info
	}
	return Info{Principal: "User:ANONYMOUS"}
}

var unmuteKey = &ctxKey{"reqctx.unmute"}

// WithUnmute returns ctx carrying the function that lets the connection's
// next request start (the wire layer sets it).
func WithUnmute(ctx context.Context, unmute func()) context.Context {
	return context.WithValue(ctx, unmuteKey, unmute)
}

// Unmute lets the connection's next request start before this one has
// finished when it is of the same API key. A connection's requests run one
// after another by default, which is Kafka's guarantee that requests on
// one connection are processed in order. A service whose request waits a
// long time after its order-sensitive step (acks=all after the append, a
// long-poll Fetch once it is parked, a JoinGroup once the member is added)
// calls Unmute after that step so the next request of its kind need not
// wait; a request of another kind still waits for it, as in Kafka, and
// responses still leave in request order. Unmute is idempotent and does
// nothing for a context without the hook.
func Unmute(ctx context.Context) {
	if f, ok := ctx.Value(unmuteKey).(func()); ok {
		f()
	}
}

var drainingKey = &ctxKey{"reqctx.draining"}

// WithDraining returns ctx carrying the channel the server closes when a
// graceful shutdown begins (the wire layer sets it once per connection).
func WithDraining(ctx context.Context, draining <-chan struct{}) context.Context {
	return context.WithValue(ctx, drainingKey, draining)
}

// Draining returns a channel that is closed once the server that read the
// request begins a graceful shutdown. The server then reads no more
// requests and waits for those in flight, so a service parking a request
// (a long-poll Fetch, an acks=all Produce, a JoinGroup waiting for the
// rebalance) answers it at once with what it has, as an expired delayed
// operation does, instead of holding the shutdown for up to its timeout.
// Kafka drops such requests when its SocketServer stops; answering them
// lets the client retry at once. Nil (never closed) for a context without
// the channel.
func Draining(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(drainingKey).(<-chan struct{})
	return ch
}

var readAllowedKey = &ctxKey{"reqctx.readAllowed"}

// ReadCheck reports whether the client may read a topic, named by its
// name, or by its id when the name is "" (share fetches name only ids).
type ReadCheck func(topic string, topicID [16]byte) bool

// WithReadAllowed returns ctx carrying whether the client may read a
// topic, which wire's authorizer sets on Fetch and ShareFetch. The replica
// and share managers ask it for every partition of the request's session,
// named in the request or not, as Kafka authorizes the session's
// partitions on every request; those refused stay in the session.
func WithReadAllowed(ctx context.Context, allowed ReadCheck) context.Context {
	return context.WithValue(ctx, readAllowedKey, allowed)
}

// ReadAllowed returns the check WithReadAllowed set, nil when every topic
// may be read (no authorizer).
func ReadAllowed(ctx context.Context) ReadCheck {
	f, _ := ctx.Value(readAllowedKey).(ReadCheck)
	return f
}
