package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// SyncMirrorGroupOffsets: v0 (Strait's own, issue 27, key 9414; types in
// raftmeta/mirrormsg)
//
// Behavior:
// * The promotion barrier (`strait mirror stop`) asks for one consumer
//   group offset round of the mirror's syncer now, between "every
//   partition at rest" and StopMirrorTopics, so the offsets committed on
//   the source since the last periodic round reach the destination.
// * Any broker takes it; the broker running the mirror's syncer (the
//   leader of the mirror's __mirror_state partition) answers, the others
//   forward it there with LocalOnly set. Per group: the partitions synced,
//   unchanged, skipped (destination-ahead; group-active for a whole group)
//   or failed. Errors: UNKNOWN_CLUSTER_MIRROR, TOPIC_NOT_IN_CLUSTER_MIRROR,
//   COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR (retriable: the syncer is
//   moving), INVALID_CONFIG, and the source's failure to list its groups
//   (NETWORK_EXCEPTION when it did not answer).
// * Served only with a MirrorService (Services.Mirror); without one the key
//   is neither advertised nor accepted (mirror_api.go).
//
// Version notes:
// * v0: the only version; flexible (request header v2, response header v1).

func init() {
	register(api{key: mirrormsg.KeySyncMirrorGroupOffsets, min: 0, max: 0, served: servesMirror, handle: (*Server).handleSyncMirrorGroupOffsets})
}

// SyncMirrorGroupOffsets changes the destination's group offsets on the
// mirror's behalf: ALTER on the mirror, as the RPCs that change a
// mirror's topics, else CLUSTER_MIRROR_AUTHORIZATION_FAILED. A forwarded
// request (LocalOnly) from a broker's inter-broker principal, which was
// checked by the broker that took it, passes with CLUSTER_ACTION.
func (s *Server) handleSyncMirrorGroupOffsets(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*mirrormsg.SyncMirrorGroupOffsetsRequest)
	c := s.auth(ctx)
	if !c.allowed(resMirror, req.MirrorName, opAlter) && !(req.LocalOnly && c.cluster(opClusterAction)) {
		return deniedMirror(req), nil
	}
	return mirrorAnswer(s.svc.Mirror.SyncMirrorGroupOffsets(ctx, req))
}
