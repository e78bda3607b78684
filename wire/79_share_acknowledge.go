package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// ShareAcknowledge: v1-2
//
// Behavior:
// * Served by the share service (replication/share's Manager): a share
//   consumer's acknowledgements of the records it acquired, answered once
//   the share coordinator stored them. Epoch -1 also closes the member's
//   share session.
// * Served only when the broker has a share service, and listed in
//   ApiVersions only once it has the rest of share groups
//   (Services.AdvertiseShare).
//
// Version notes:
// * v0: early access in Kafka 4.0, removed in 4.1; not served
// * v1: the first stable version (KIP-932)
// * v2: IsRenewAck and RENEW acknowledgements (KIP-1222)

func init() {
	register(api{key: 79, min: 1, max: 2, served: servesShare, advertised: advertisesShare, handle: (*Server).handleShareAcknowledge})
}

// ShareAcknowledge needs READ on the group (GROUP_AUTHORIZATION_FAILED for
// the request) and READ on each topic, else TOPIC_AUTHORIZATION_FAILED
// (KafkaApis.handleShareAcknowledgeRequest).
// ShareAcknowledge needs READ on the group (GROUP_AUTHORIZATION_FAILED for
// the request) and READ on each topic, whose acknowledgements the share
// manager otherwise refuses with TOPIC_AUTHORIZATION_FAILED
// (KafkaApis.handleShareAcknowledgeRequest).
func (s *Server) handleShareAcknowledge(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareAcknowledgeRequest)
	if c := s.auth(ctx); c.on {
		if req.GroupID == nil || !c.allowed(resGroup, *req.GroupID, opRead) {
			return deniedResponse(req, errGroupAuth), nil
		}
		ctx = reqctx.WithReadAllowed(ctx, s.readCheck(c, false))
	}
	return s.svc.Share.ShareAcknowledge(ctx, req), nil
}
