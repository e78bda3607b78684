package wire

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// DescribeMirrors: v0 (KIP-1279, key 9405; types in raftmeta/mirrormsg)
//
// Behavior:
// * Per mirror, topic and partition: state, source high watermark,
//   destination log end, lag, Last Mirrored Epoch, the last error (tag 0)
//   and the offsets lost to the source's retention (tag 1). Null
//   MirrorNames describes every mirror; an unknown name gets
//   UNKNOWN_CLUSTER_MIRROR in its entry. Any broker answers; source
//   secrets are never returned.
// * The partitions live on the brokers leading them: the broker asked
//   gathers them with the same request, LocalOnly set (request tag 0, a
//   Strait extension), from every other live broker; a LocalOnly request
//   is answered with this broker's own partitions only.
// * Served only with a MirrorService (Services.Mirror); without one the key
//   is neither advertised nor accepted (mirror_api.go).
//
// Version notes:
// * v0: the only version; flexible (request header v2, response header v1).

func init() {
	register(api{key: mirrormsg.KeyDescribeMirrors, min: 0, max: 0, served: servesMirror, handle: (*Server).handleDescribeMirrors})
}

// DescribeMirrors needs DESCRIBE on each mirror: a named one is
// CLUSTER_MIRROR_AUTHORIZATION_FAILED, and describing every mirror leaves
// the others out; AuthorizedOperations are the client's (digest 2.4).
func (s *Server) handleDescribeMirrors(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*mirrormsg.DescribeMirrorsRequest)
	c := s.auth(ctx)
	if !c.on {
		return mirrorAnswer(s.svc.Mirror.DescribeMirrors(ctx, req))
	}
	all := req.MirrorNames == nil
	denied := splitAllowed(&req.MirrorNames, func(n *string) bool { return c.allowed(resMirror, *n, opDescribe) })
	resp := req.ResponseKind().(*mirrormsg.DescribeMirrorsResponse)
	if all || len(req.MirrorNames) > 0 {
		resp = s.svc.Mirror.DescribeMirrors(ctx, req)
		if resp == nil {
			return mirrorAnswer(resp)
		}
	}
	resp.Mirrors = slices.DeleteFunc(resp.Mirrors, func(m mirrormsg.DescribeMirrorsResponseDescribedMirror) bool {
		return !c.allowed(resMirror, m.MirrorName, opDescribe)
	})
	for i := range resp.Mirrors {
		if ops, ok := c.authorizedOps(resMirror, resp.Mirrors[i].MirrorName); ok && resp.Mirrors[i].ErrorCode == 0 {
			resp.Mirrors[i].AuthorizedOperations = ops
		}
	}
	for _, n := range denied {
		m := mirrormsg.DescribeMirrorsResponseDescribedMirror{MirrorName: n, ErrorCode: errMirrorAuth, AuthorizedOperations: -2147483648}
		resp.Mirrors = append(resp.Mirrors, m)
	}
	return mirrorAnswer(resp)
}
