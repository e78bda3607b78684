package wire

import (
	"context"
	"fmt"
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// The mirror RPCs (94_create_mirror.go ... 105_bump_leader_epochs.go) are
// registered like every other key, with servesMirror as their served
// condition: a server built without a MirrorService leaves them out of its
// API table, so ApiVersions never lists a mirror key that would not work
// and a request for one is refused as for any unknown key. A source
// cluster that does not advertise ReadMirrorStates is read as having no
// Last Mirrored Epoch record (KIP-1279, PREPARING), which is only true if
// it really cannot answer.

// servesMirror reports whether svc has a MirrorService.
func servesMirror(svc Services) bool { return svc.Mirror != nil }

// mirrorAnswer passes a MirrorService response on. A nil one fails the
// request, which closes the connection and is logged, rather than
// panicking in the encoder and taking the broker down with it.
func mirrorAnswer[R interface {
	comparable
	kmsg.Response
}](resp R) (kmsg.Response, error) {
	var none R
	if resp == none {
		// Key needs no receiver: the generated method ignores it.
		return nil, fmt.Errorf("wire: the mirror service returned no %s response", NameForKey(none.Key()))
	}
	return resp, nil
}

// deniedMirror is a mirror request's answer when the client may not act on
// the mirror: CLUSTER_MIRROR_AUTHORIZATION_FAILED (digest 2.4), naming the
// mirror in the responses that carry its name.
func deniedMirror(req kmsg.Request) kmsg.Response {
	resp := deniedResponse(req, errMirrorAuth)
	msg := reflect.ValueOf(kmsg.StringPtr(mirrormsg.ClusterMirrorAuthorizationFailed.Description))
	if f := reflect.ValueOf(resp).Elem().FieldByName("ErrorMessage"); f.IsValid() && f.CanSet() && f.Type() == msg.Type() {
		f.Set(msg)
	}
	copySameFields(reflect.ValueOf(resp).Elem(), reflect.ValueOf(req).Elem(), "MirrorName")
	return resp
}

// mirrorTopicsRPC answers a mirror's topic RPC (Start, Stop, Pause,
// Resume): ALTER on the mirror, else CLUSTER_MIRROR_AUTHORIZATION_FAILED,
// and READ on each topic it names, else that topic's result is
// TOPIC_AUTHORIZATION_FAILED, so that rights on a mirror do not reach
// topics the client has none on (digest 2.4, AS6/7). Topics a pattern
// matches are not checked one by one. morePatterns says the request has
// patterns to serve even when no named topic is left.
func mirrorTopicsRPC[Req kmsg.Request, Resp interface {
	comparable
	kmsg.Response
}, T, R any](s *Server, ctx context.Context, req Req, mirror string, topics *[]T, morePatterns bool,
	name func(*T) string, call func(context.Context, Req) Resp, results func(Resp) *[]R, result func(string) R,
) (kmsg.Response, error) {
	c := s.auth(ctx)
	if !c.allowed(resMirror, mirror, opAlter) {
		return deniedMirror(req), nil
	}
	denied := splitAllowed(topics, func(t *T) bool { return c.allowed(resTopic, name(t), opRead) })
	var resp Resp
	if len(*topics) > 0 || morePatterns || len(denied) == 0 {
		resp = call(ctx, req)
		var none Resp
		if resp == none {
			return mirrorAnswer(resp)
		}
	} else {
		resp = req.ResponseKind().(Resp)
		copySameFields(reflect.ValueOf(resp).Elem(), reflect.ValueOf(req).Elem(), "MirrorName")
	}
	for _, t := range denied {
		*results(resp) = append(*results(resp), result(name(&t)))
	}
	return resp, nil
}
