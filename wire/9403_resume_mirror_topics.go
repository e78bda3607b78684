package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// ResumeMirrorTopics: v0 (KIP-1279, key 9403; types in raftmeta/mirrormsg)
//
// Behavior:
// * PAUSED -> MIRRORING: fetching continues from the local log end, with
//   no truncation. An admin request, decided by the active controller.
// * One error code and message per topic (MIRROR_TOPIC_NOT_PAUSED,
//   TOPIC_NOT_IN_CLUSTER_MIRROR, ...).
// * Served only with a MirrorService (Services.Mirror); without one the key
//   is neither advertised nor accepted (mirror_api.go).
//
// Version notes:
// * v0: the only version; flexible (request header v2, response header v1).

func init() {
	register(api{key: mirrormsg.KeyResumeMirrorTopics, min: 0, max: 0, served: servesMirror, handle: (*Server).handleResumeMirrorTopics})
}

// ResumeMirrorTopics: ALTER on the mirror and READ on each named topic (mirrorTopicsRPC).
func (s *Server) handleResumeMirrorTopics(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*mirrormsg.ResumeMirrorTopicsRequest)
	return mirrorTopicsRPC(s, ctx, req, req.MirrorName, &req.Topics, false,
		func(t *mirrormsg.ResumeMirrorTopicsRequestTopicData) string { return t.TopicName }, s.svc.Mirror.ResumeMirrorTopics,
		func(r *mirrormsg.ResumeMirrorTopicsResponse) *[]mirrormsg.ResumeMirrorTopicsResponseTopicResult {
			return &r.Topics
		},
		func(n string) mirrormsg.ResumeMirrorTopicsResponseTopicResult {
			return mirrormsg.ResumeMirrorTopicsResponseTopicResult{Name: n, ErrorCode: errTopicAuth}
		})
}
