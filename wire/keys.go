package wire

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// The KIP-1279 mirror RPCs (keys 9400-9414, raftmeta/mirrormsg) are not in
// kmsg. Every key lookup in this package asks mirrormsg first, as
// mirrormsg.RequestForKey's documentation requires of a server: for a
// mirror key, mirrormsg's type wins even if kmsg comes to know the number
// (as it came to know the old 94, UnregisterController, a KRaft
// controller RPC Strait does not serve and refuses as unknown).

// requestForKey returns a new request of key at version 0: mirrormsg's
// for a mirror key, else kmsg's; nil for a key neither knows.
func requestForKey(key int16) kmsg.Request {
	if req := mirrormsg.RequestForKey(key); req != nil {
		return req
	}
	return kmsg.RequestForKey(key)
}

// NameForKey names an API key as this broker serves it: "CreateMirror" for
// 9400, kmsg's name for the standard keys, "Unknown" for the rest (kmsg's
// convention). Logs and per-API metrics should use it rather than
// kmsg.NameForKey, which has no name for the mirror keys.
func NameForKey(key int16) string {
	if name := mirrormsg.NameForKey(key); name != "" {
		return name
	}
	return kmsg.NameForKey(key)
}

// requestFlexible reports whether key at version is sent with the
// flexible request header (v2, KIP-482); false for keys nobody knows, whose
// requests are refused once the header is read.
func requestFlexible(key, version int16) bool {
	req := requestForKey(key)
	if req == nil {
		return false
	}
	req.SetVersion(version)
	return req.IsFlexible()
}
