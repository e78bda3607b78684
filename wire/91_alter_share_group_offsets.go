package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterShareGroupOffsets: v0
//
// Behavior:
// * Sets the share-partition start offsets of an empty share group
//   (KIP-932). Served only with a ShareGroupService.

func init() {
	register(api{key: 91, min: 0, max: 0, served: servesShareGroups, handle: (*Server).handleAlterShareGroupOffsets})
}

// AlterShareGroupOffsets needs READ on the group (GROUP_AUTHORIZATION_FAILED
// for the request) and READ on each topic, else its partitions are
// TOPIC_AUTHORIZATION_FAILED.
func (s *Server) handleAlterShareGroupOffsets(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterShareGroupOffsetsRequest)
	c := s.auth(ctx)
	if !c.allowed(resGroup, req.GroupID, opRead) {
		return deniedResponse(req, errGroupAuth), nil
	}
	denied := splitAllowed(&req.Topics, func(t *kmsg.AlterShareGroupOffsetsRequestTopic) bool { return c.allowed(resTopic, t.Topic, opRead) })
	resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	if len(req.Topics) > 0 || len(denied) == 0 {
		resp = s.svc.ShareGroups.AlterShareGroupOffsets(ctx, req)
	}
	for _, t := range denied {
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, errTopicAuth
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
