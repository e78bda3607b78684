package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
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

func (s *Server) handleShareAcknowledge(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Share.ShareAcknowledge(ctx, kreq.(*kmsg.ShareAcknowledgeRequest)), nil
}
