package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// CreateMirror: v0 (KIP-1279, key 9400; types in raftmeta/mirrormsg)
//
// Behavior:
// * Creates a named mirror with its source-connection configs, stored as
//   a MIRROR config resource in the metadata log (KIP-1279
//   CreateClusterMirror). An admin request: the active controller
//   decides, and the service forwards it there from any other broker.
// * Errors: CLUSTER_MIRROR_ALREADY_EXISTS; INVALID_CONFIG for unknown
//   keys, class names and file paths in the client settings.
// * Served only with a MirrorService (Services.Mirror); without one the key
//   is neither advertised nor accepted (mirror_api.go).
//
// Version notes:
// * v0: the only version; flexible (request header v2, response header v1).
// * Strait's key, 94 until issue 32 moved the block to 9400-9414
//   (raftmeta/mirrormsg/apis.go): upstream gave 94 to UnregisterController,
//   a controller-only API Strait does not serve, so 94 is refused as an
//   unknown key.

func init() {
	register(api{key: mirrormsg.KeyCreateMirror, min: 0, max: 0, served: servesMirror, handle: (*Server).handleCreateMirror})
}

// CreateMirror needs CREATE on the CLUSTER_MIRROR resource of its name,
// else CLUSTER_MIRROR_AUTHORIZATION_FAILED (KIP-1279 digest 2.4).
func (s *Server) handleCreateMirror(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*mirrormsg.CreateMirrorRequest)
	if !s.auth(ctx).allowed(resMirror, req.MirrorName, opCreate) {
		return deniedMirror(req), nil
	}
	return mirrorAnswer(s.svc.Mirror.CreateMirror(ctx, req))
}
