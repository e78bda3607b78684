package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// PauseMirrorTopics: v0 (KIP-1279, key 9408; types in raftmeta/mirrormsg)
//
// Behavior:
// * MIRRORING -> PAUSING -> PAUSED: fetchers removed, the topic stays
//   read-only. An admin request, decided by the active controller.
// * One error code and message per topic (MIRROR_TOPIC_ALREADY_PAUSED,
//   TOPIC_NOT_IN_CLUSTER_MIRROR, ...).
// * Served only with a MirrorService (Services.Mirror); without one the key
//   is neither advertised nor accepted (mirror_api.go).
//
// Version notes:
// * v0: the only version; flexible (request header v2, response header v1).

func init() {
	register(api{key: mirrormsg.KeyPauseMirrorTopics, min: 0, max: 0, served: servesMirror, handle: (*Server).handlePauseMirrorTopics})
}

// PauseMirrorTopics: ALTER on the mirror and READ on each named topic (mirrorTopicsRPC).
func (s *Server) handlePauseMirrorTopics(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*mirrormsg.PauseMirrorTopicsRequest)
	return mirrorTopicsRPC(s, ctx, req, req.MirrorName, &req.Topics, false,
		func(t *mirrormsg.PauseMirrorTopicsRequestTopicData) string { return t.TopicName }, s.svc.Mirror.PauseMirrorTopics,
		func(r *mirrormsg.PauseMirrorTopicsResponse) *[]mirrormsg.PauseMirrorTopicsResponseTopicResult {
			return &r.Topics
		},
		func(n string) mirrormsg.PauseMirrorTopicsResponseTopicResult {
			return mirrormsg.PauseMirrorTopicsResponseTopicResult{Name: n, ErrorCode: errTopicAuth}
		})
}
