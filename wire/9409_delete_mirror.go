package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// DeleteMirror: v0 (KIP-1279, key 9409; types in raftmeta/mirrormsg)
//
// Behavior:
// * Deletes a mirror and tombstones its __mirror_state records, only when
//   no topic is mirroring (CLUSTER_MIRROR_NOT_EMPTY otherwise;
//   UNKNOWN_CLUSTER_MIRROR for a name that does not exist). An admin
//   request, decided by the active controller.
// * Served only with a MirrorService (Services.Mirror); without one the key
//   is neither advertised nor accepted (mirror_api.go).
//
// Version notes:
// * v0: the only version; flexible (request header v2, response header v1).
// * Strait's schema: KIP-1279's DeleteClusterMirror was never recovered
//   (mirrormsg/doc.go).

func init() {
	register(api{key: mirrormsg.KeyDeleteMirror, min: 0, max: 0, served: servesMirror, handle: (*Server).handleDeleteMirror})
}

// DeleteMirror needs ALTER on the mirror (the KIP's choice; MM4 proposed
// DELETE), else CLUSTER_MIRROR_AUTHORIZATION_FAILED.
func (s *Server) handleDeleteMirror(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*mirrormsg.DeleteMirrorRequest)
	if !s.auth(ctx).allowed(resMirror, req.MirrorName, opAlter) {
		return deniedMirror(req), nil
	}
	return mirrorAnswer(s.svc.Mirror.DeleteMirror(ctx, req))
}
