package wire

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handlerFunc answers one decoded request (kfake's handler shape). kreq is
// the kmsg request type for the key, at the request's version; the
// returned response must be of the matching type, built with
// kreq.ResponseKind() (its version is forced to the request's). A nil
// response sends nothing (Produce with acks=0) while keeping the order of
// the responses after it. A non-nil error closes the connection once the
// responses before this one are written, as Kafka does for a request it
// cannot answer.
type handlerFunc func(s *Server, ctx context.Context, kreq kmsg.Request) (kmsg.Response, error)

// api is one registry entry: the versions a handler implements. The
// registry is what ApiVersions advertises, so the broker never claims a
// version it cannot serve (kfake's regKey).
type api struct {
	key, min, max int16
	handle        handlerFunc
	// served reports whether a server with these services can answer the
	// key; nil means always. A server whose services cannot leaves the
	// key out of its table: not advertised, and refused like a key it
	// does not know (the mirror RPCs without a MirrorService).
	served func(Services) bool
	// advertised reports whether a served key is listed in ApiVersions;
	// nil means whenever it is served. A served key that is not
	// advertised is still accepted from a client that sends it without
	// asking (the share keys before share groups are complete).
	advertised func(Services) bool
	// poolFrame reads the request into a buffer from the server's pool,
	// given back when the request ends. kmsg decodes byte fields as
	// slices of the frame, so only a handler done with every such slice
	// when it returns may set it (Produce: its records are copied into
	// the log). Others (a JoinGroup's metadata, kept by the group) leave
	// their frames to the garbage collector.
	poolFrame bool
	// throttleExempt answers the key without client quotas, as Kafka's
	// sendResponseExemptThrottle: the handshake before a client is known
	// (ApiVersions, SASL) and the inter-broker CLUSTER_ACTION APIs a
	// client listener serves (client_quota_throttle.go).
	throttleExempt bool
}

// registry holds every API, filled by the init functions of the handler
// files (one per key, 00_produce.go ...) and never changed afterwards.
var registry = map[int16]api{}

// register adds a to the registry; each handler file calls it from init.
func register(a api) { registerIn(registry, a) }

// registerIn panics on a key registered twice, an invalid version range,
// a key neither kmsg nor mirrormsg knows, or a max version its decoder
// cannot read: all programming errors caught when the package loads.
func registerIn(m map[int16]api, a api) {
	if a.key < 0 || a.min < 0 || a.max < a.min || a.handle == nil {
		panic(fmt.Sprintf("wire: invalid api registration: key %d, versions %d-%d, handler set %t", a.key, a.min, a.max, a.handle != nil))
	}
	kreq := requestForKey(a.key)
	if kreq == nil {
		panic(fmt.Sprintf("wire: api key %d is unknown to kmsg and mirrormsg", a.key))
	}
	if a.max > kreq.MaxVersion() {
		panic(fmt.Sprintf("wire: %s registered up to v%d, kmsg decodes up to v%d", NameForKey(a.key), a.max, kreq.MaxVersion()))
	}
	if _, dup := m[a.key]; dup {
		panic(fmt.Sprintf("wire: api key %d (%s) registered twice", a.key, NameForKey(a.key)))
	}
	m[a.key] = a
}

// apiTable is one server's immutable view of the registry: lookup by key
// and the ApiVersions list sorted by key.
type apiTable struct {
	byKey    map[int16]api
	versions []kmsg.ApiVersionsResponseApiKey
}

// newAPITable snapshots the registry entries svc can serve, plus extra
// entries: tests register stand-ins that replace handlers (see
// newTestServer); a stand-in is always served.
//
// An entry whose served(svc) is false is left out of the table, so
// ApiVersions does not list it and resolve refuses it as an unknown key:
// Kafka's ApiVersionManager likewise advertises and accepts only the APIs
// the node has enabled (SocketServer.parseRequestHeader, isApiEnabled).
// An entry served but not advertised(svc) is in the table, left out of
// the ApiVersions list only.
func newAPITable(svc Services, extra ...api) *apiTable {
	m := make(map[int16]api, len(registry)+len(extra))
	for k, a := range registry {
		if a.served == nil || a.served(svc) {
			m[k] = a
		}
	}
	for _, a := range extra {
		// A stand-in replaces the real handler of its key.
		delete(m, a.key)
		registerIn(m, a)
	}
	t := &apiTable{byKey: m}
	for _, a := range m {
		if a.advertised != nil && !a.advertised(svc) {
			continue
		}
		v := kmsg.NewApiVersionsResponseApiKey()
		v.ApiKey, v.MinVersion, v.MaxVersion = a.key, a.min, a.max
		t.versions = append(t.versions, v)
	}
	slices.SortFunc(t.versions, func(a, b kmsg.ApiVersionsResponseApiKey) int { return int(a.ApiKey) - int(b.ApiKey) })
	return t
}

func (t *apiTable) lookup(key int16) (api, bool) {
	a, ok := t.byKey[key]
	return a, ok
}

// poolsFrame reports whether key's requests are read into pooled buffers.
func (t *apiTable) poolsFrame(key int16) bool { return t.byKey[key].poolFrame }
