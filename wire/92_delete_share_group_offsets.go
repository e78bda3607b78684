package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteShareGroupOffsets: v0
//
// Behavior:
// * Deletes the share-group state of topics of an empty share group
//   (KIP-932). Served only with a ShareGroupService.

func init() {
	register(api{key: 92, min: 0, max: 0, served: servesShareGroups, handle: (*Server).handleDeleteShareGroupOffsets})
}

// DeleteShareGroupOffsets needs DELETE on the group (GROUP_AUTHORIZATION_FAILED
// for the request) and READ on each topic, else TOPIC_AUTHORIZATION_FAILED.
func (s *Server) handleDeleteShareGroupOffsets(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteShareGroupOffsetsRequest)
	c := s.auth(ctx)
	if !c.allowed(resGroup, req.GroupID, opDelete) {
		return deniedResponse(req, errGroupAuth), nil
	}
	denied := splitAllowed(&req.Topics, func(t *kmsg.DeleteShareGroupOffsetsRequestTopic) bool { return c.allowed(resTopic, t.Topic, opRead) })
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	if len(req.Topics) > 0 || len(denied) == 0 {
		resp = s.svc.ShareGroups.DeleteShareGroupOffsets(ctx, req)
	}
	for _, t := range denied {
		rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		rt.Topic, rt.ErrorCode = t.Topic, errTopicAuth
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
