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

// ShareAcknowledge needs READ on the group (GROUP_AUTHORIZATION_FAILED for
// the request) and READ on each topic, else TOPIC_AUTHORIZATION_FAILED
// (KafkaApis.handleShareAcknowledgeRequest).
func (s *Server) handleShareAcknowledge(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ShareAcknowledgeRequest)
	c := s.auth(ctx)
	if !c.on {
		return s.svc.Share.ShareAcknowledge(ctx, req), nil
	}
	if req.GroupID == nil || !c.allowed(resGroup, *req.GroupID, opRead) {
		return deniedResponse(req, errGroupAuth), nil
	}
	img := s.svc.Cluster.Image()
	denied := splitAllowed(&req.Topics, func(t *kmsg.ShareAcknowledgeRequestTopic) bool { return topicIDAllowed(c, img, t.TopicID, opRead) })
	resp := s.svc.Share.ShareAcknowledge(ctx, req)
	for _, t := range denied {
		rt := kmsg.NewShareAcknowledgeResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, errTopicAuth
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
