package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// ShareFetch: v1-2
//
// Behavior:
// * Served by the share service (replication/share's Manager) for KIP-932
//   share groups: share sessions, piggybacked acknowledgements answered in
//   AcknowledgeErrorCode, records acquired for the member under
//   acquisition locks, and a long poll up to MaxWaitMs.
// * Served only when the broker has a share service, and listed in
//   ApiVersions only once it has the rest of share groups
//   (Services.AdvertiseShare).
// * Record data is never null: an empty slice when a partition has none
//   (librdkafka rejects null records, as for Fetch).
//
// Version notes:
// * v0: early access in Kafka 4.0, removed in 4.1; not served
// * v1: the first stable version (KIP-932)
// * v2: ShareAcquireMode (KIP-1206), IsRenewAck and RENEW acknowledgements
//   (KIP-1222)

func init() {
	register(api{key: 78, min: 1, max: 2, served: servesShare, advertised: advertisesShare, handle: (*Server).handleShareFetch})
}

// ShareFetch needs READ on the group (GROUP_AUTHORIZATION_FAILED for the
// request) and READ on each topic, else its partitions, named or in the
// share session, are TOPIC_AUTHORIZATION_FAILED (KafkaApis.handleShareFetchRequest).
// ShareFetch needs READ on the group (GROUP_AUTHORIZATION_FAILED for the
// request) and READ on each topic: the share manager answers the
// partitions refused, named or in the share session,
// TOPIC_AUTHORIZATION_FAILED (KafkaApis.handleShareFetchRequest).
func (s *Server) handleShareFetch(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareFetchRequest)
	if c := s.auth(ctx); c.on {
		if req.GroupID == nil || !c.allowed(resGroup, *req.GroupID, opRead) {
			return deniedResponse(req, errGroupAuth), nil
		}
		ctx = reqctx.WithReadAllowed(ctx, s.readCheck(c, false))
	}
	resp := s.svc.Share.ShareFetch(ctx, req)
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			if resp.Topics[i].Partitions[j].Records == nil {
				resp.Topics[i].Partitions[j].Records = []byte{}
			}
		}
	}
	return resp, nil
}
