// Package reqctx carries who sent a request through a context.Context, so
// services below the wire layer (groups, ACLs, quotas) can see the client
// without importing the wire package.
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
// finished. A connection's requests run one after another by default,
// which is Kafka's guarantee that requests on one connection are processed
// in order. A service whose request waits a long time after its
// order-sensitive step (acks=all after the append, a long-poll Fetch once
// it is parked, a JoinGroup once the member is added) calls Unmute after
// that step so the requests behind it need not wait; responses still leave
// in request order. Unmute is idempotent and does nothing for a context
// without the hook.
func Unmute(ctx context.Context) {
	if f, ok := ctx.Value(unmuteKey).(func()); ok {
		f()
	}
}
