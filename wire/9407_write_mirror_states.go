package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// WriteMirrorStates: v0 (KIP-1279, key 9407; types in raftmeta/mirrormsg)
//
// Behavior:
// * Records a mirror partition's state transition in __mirror_state,
//   fenced by the writer's leader epoch and the expected state epoch
//   (FENCED_LEADER_EPOCH, INVALID_CLUSTER_MIRROR_STATES per partition;
//   the new StateEpoch on success). Sent by partition leaders to the
//   coordinator; broker listeners only in the KIP.
// * Served only with a MirrorService (Services.Mirror); without one the key
//   is neither advertised nor accepted (mirror_api.go).
//
// Version notes:
// * v0: the only version; flexible (request header v2, response header v1).

func init() {
	register(api{key: mirrormsg.KeyWriteMirrorStates, min: 0, max: 0, served: servesMirror, handle: (*Server).handleWriteMirrorStates})
}

// WriteMirrorStates is an inter-broker RPC: it needs CLUSTER_ACTION, else the request
// and every partition are CLUSTER_AUTHORIZATION_FAILED.
func (s *Server) handleWriteMirrorStates(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*mirrormsg.WriteMirrorStatesRequest)
	if !s.auth(ctx).cluster(opClusterAction) {
		return deniedPartitions(req, errClusterAuth), nil
	}
	return mirrorAnswer(s.svc.Mirror.WriteMirrorStates(ctx, req))
}
