package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// StopMirrorTopics: v0 (KIP-1279, key 9402; types in raftmeta/mirrormsg)
//
// Behavior:
// * Failover or migration cut-over: topics in PREPARING or MIRRORING go
//   through STOPPING (fetchers removed, leader epoch bumped, LME recorded,
//   the transactions left open aborted with markers, MIRROR_PID_RESET
//   appended) to STOPPED and
//   become writable. An admin request, decided by the active controller.
// * One error code and message per topic (TOPIC_NOT_IN_CLUSTER_MIRROR,
//   MIRROR_TOPIC_BEING_STOPPED, ...).
// * Served only with a MirrorService (Services.Mirror); without one the key
//   is neither advertised nor accepted (mirror_api.go).
//
// Version notes:
// * v0: the only version; flexible (request header v2, response header v1).

func init() {
	register(api{key: mirrormsg.KeyStopMirrorTopics, min: 0, max: 0, served: servesMirror, handle: (*Server).handleStopMirrorTopics})
}

// StopMirrorTopics: ALTER on the mirror and READ on each named topic (mirrorTopicsRPC).
func (s *Server) handleStopMirrorTopics(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*mirrormsg.StopMirrorTopicsRequest)
	return mirrorTopicsRPC(s, ctx, req, req.MirrorName, &req.Topics, len(req.Patterns) > 0,
		func(t *mirrormsg.StopMirrorTopicsRequestTopicMetadata) string { return t.TopicName }, s.svc.Mirror.StopMirrorTopics,
		func(r *mirrormsg.StopMirrorTopicsResponse) *[]mirrormsg.StopMirrorTopicsResponseTopicResult {
			return &r.Topics
		},
		func(n string) mirrormsg.StopMirrorTopicsResponseTopicResult {
			return mirrormsg.StopMirrorTopicsResponseTopicResult{Name: n, ErrorCode: errTopicAuth}
		})
}
