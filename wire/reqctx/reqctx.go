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
