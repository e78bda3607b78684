package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// ReadMirrorStates: v0 (KIP-1279, key 9406; types in raftmeta/mirrormsg)
//
// Behavior:
// * Reads the mirror state of partitions from the __mirror_state
//   coordinator: state, LME and (tags 0-5) what WriteMirrorStates stored,
//   so a new partition leader rebuilds it. Sent by partition leaders to
//   the coordinator, and to the source cluster in PREPARING for the LME
//   it recorded; a source that does not advertise this key has none
//   (hence no advertisement without a MirrorService).
// * NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS per partition when
//   this broker does not hold its __mirror_state partition.
// * Served only with a MirrorService (Services.Mirror); without one the key
//   is neither advertised nor accepted (mirror_api.go).
//
// Version notes:
// * v0: the only version; flexible (request header v2, response header v1).

func init() {
	register(api{key: mirrormsg.KeyReadMirrorStates, min: 0, max: 0, served: servesMirror, handle: (*Server).handleReadMirrorStates})
}

// ReadMirrorStates is an inter-broker RPC: it needs CLUSTER_ACTION, else the request
// and every partition are CLUSTER_AUTHORIZATION_FAILED.
func (s *Server) handleReadMirrorStates(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*mirrormsg.ReadMirrorStatesRequest)
	if !s.auth(ctx).cluster(opClusterAction) {
		return deniedPartitions(req, errClusterAuth), nil
	}
	return mirrorAnswer(s.svc.Mirror.ReadMirrorStates(ctx, req))
}
