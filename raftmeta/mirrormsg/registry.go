package mirrormsg

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// API is one mirror RPC of the table APIs (apis.go, generated from the
// schemas so that keys and versions live in one place).
type API struct {
	Key  int16
	Name string // e.g. "CreateMirror", as in the schema without "Request"
	// Min and Max are the versions the schemas define. The wire registry
	// advertises what its handler implements, within these.
	Min, Max int16
	// Admin is set for requests an admin client sends to the active
	// controller (they implement kmsg.AdminRequest).
	Admin bool
	// Internal is set for requests only a Strait node sends to the active
	// controller (raftmeta/ctrlrpc); the wire server does not serve them.
	Internal bool
	// NewRequest and NewResponse return new messages with their defaults
	// set and Version 0; set the version before decoding.
	NewRequest  func() kmsg.Request
	NewResponse func() kmsg.Response
}

// Lookup returns the mirror RPC of key.
func Lookup(key int16) (API, bool) {
	for _, a := range APIs {
		if a.Key == key {
			return a, true
		}
	}
	return API{}, false
}

// RequestForKey returns a new request for a mirror RPC key, or nil, like
// kmsg.RequestForKey for the standard keys. A server looks its mirror keys
// up here first, so that a key kmsg comes to know as well (as it came to
// know the old 94, UnregisterController) still decodes as Strait's.
func RequestForKey(key int16) kmsg.Request {
	if a, ok := Lookup(key); ok {
		return a.NewRequest()
	}
	return nil
}

// ResponseForKey returns a new response for a mirror RPC key, or nil.
func ResponseForKey(key int16) kmsg.Response {
	if a, ok := Lookup(key); ok {
		return a.NewResponse()
	}
	return nil
}

// NameForKey returns the name of a mirror RPC key, or "" if key is not one.
func NameForKey(key int16) string {
	a, _ := Lookup(key)
	return a.Name
}

// MaxVersions sets the max version of each mirror RPC in vs and returns it;
// a nil vs starts from kversion.Stable(). A kgo client must be built with
//
//	kgo.MaxVersions(mirrormsg.MaxVersions(nil))
//
// to send mirror requests: kgo fails a request whose key its max versions
// lack ("request key is unknown") and caps the version of a key they have,
// and its default, kversion.Stable(), has no mirror key.
func MaxVersions(vs *kversion.Versions) *kversion.Versions {
	if vs == nil {
		vs = kversion.Stable()
	}
	for _, a := range APIs {
		vs.SetMaxKeyVersion(a.Key, a.Max)
	}
	return vs
}
