package wire

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// ListMirrors: v0 (KIP-1279, key 9404; types in raftmeta/mirrormsg)
//
// Behavior:
// * Lists every mirror with its source bootstrap, source cluster id and
//   topic count. Any broker answers from its metadata image; the request
//   is not forwarded.
// * Served only with a MirrorService (Services.Mirror); without one the key
//   is neither advertised nor accepted (mirror_api.go).
//
// Version notes:
// * v0: the only version; flexible (request header v2, response header v1).

func init() {
	register(api{key: mirrormsg.KeyListMirrors, min: 0, max: 0, served: servesMirror, handle: (*Server).handleListMirrors})
}

// ListMirrors lists the mirrors the client may DESCRIBE (digest 2.4).
func (s *Server) handleListMirrors(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	resp := s.svc.Mirror.ListMirrors(ctx, kreq.(*mirrormsg.ListMirrorsRequest))
	if c := s.auth(ctx); c.on && resp != nil {
		resp.Mirrors = slices.DeleteFunc(resp.Mirrors, func(m mirrormsg.ListMirrorsResponseListedMirror) bool {
			return !c.allowed(resMirror, m.MirrorName, opDescribe)
		})
	}
	return mirrorAnswer(resp)
}
