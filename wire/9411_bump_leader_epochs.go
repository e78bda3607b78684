package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// BumpLeaderEpochs: v0 (KIP-1279, key 9411; types in raftmeta/mirrormsg)
//
// Behavior:
// * Raises each partition's leader epoch to at least MinLeaderEpoch
//   (PartitionChangeRecord.MinLeaderEpoch), so a destination leader's
//   epoch stays >= the epoch of every batch it mirrors. Sent by a mirror
//   partition's leader; the active controller decides.
// * Served only with a MirrorService (Services.Mirror); without one the key
//   is neither advertised nor accepted (mirror_api.go).
//
// Version notes:
// * v0: the only version; flexible (request header v2, response header v1).

func init() {
	register(api{key: mirrormsg.KeyBumpLeaderEpochs, min: 0, max: 0, served: servesMirror, handle: (*Server).handleBumpLeaderEpochs})
}

// BumpLeaderEpochs is an inter-broker RPC: it needs CLUSTER_ACTION, else the request
// and every partition are CLUSTER_AUTHORIZATION_FAILED.
func (s *Server) handleBumpLeaderEpochs(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*mirrormsg.BumpLeaderEpochsRequest)
	if !s.auth(ctx).cluster(opClusterAction) {
		return deniedPartitions(req, errClusterAuth), nil
	}
	return mirrorAnswer(s.svc.Mirror.BumpLeaderEpochs(ctx, req))
}
