package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// StartMirrorTopics: v0 (KIP-1279, key 9401; types in raftmeta/mirrormsg)
//
// Behavior:
// * Adds the topics matching IncludePatterns, minus ExcludePatterns (tag
//   0), to the mirror and starts them from UNKNOWN or STOPPED; missing
//   destination topics are created with the source's topic id and
//   partition count. Also the failback entry point. An admin request,
//   decided by the active controller.
// * One error code and message per topic (TOPIC_ALREADY_IN_CLUSTER_MIRROR,
//   MIRROR_TOPIC_NOT_STOPPED, ...); UNKNOWN_CLUSTER_MIRROR for the whole
//   request. TimeoutMs bounds the wait (kmsg.TimeoutRequest).
// * Served only with a MirrorService (Services.Mirror); without one the key
//   is neither advertised nor accepted (mirror_api.go).
//
// Version notes:
// * v0: the only version; flexible (request header v2, response header v1).

func init() {
	register(api{key: mirrormsg.KeyStartMirrorTopics, min: 0, max: 0, served: servesMirror, handle: (*Server).handleStartMirrorTopics})
}

// StartMirrorTopics: ALTER on the mirror and READ on each named topic (mirrorTopicsRPC).
func (s *Server) handleStartMirrorTopics(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*mirrormsg.StartMirrorTopicsRequest)
	return mirrorTopicsRPC(s, ctx, req, req.MirrorName, &req.Topics, len(req.IncludePatterns) > 0,
		func(t *mirrormsg.StartMirrorTopicsRequestSourceTopic) string { return t.Name }, s.svc.Mirror.StartMirrorTopics,
		func(r *mirrormsg.StartMirrorTopicsResponse) *[]mirrormsg.StartMirrorTopicsResponseTopicResult {
			return &r.Topics
		},
		func(n string) mirrormsg.StartMirrorTopicsResponseTopicResult {
			return mirrormsg.StartMirrorTopicsResponseTopicResult{Name: n, ErrorCode: errTopicAuth}
		})
}
