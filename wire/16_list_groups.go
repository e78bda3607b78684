package wire

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListGroups: v0-5
//
// Behavior:
// * Answered by the groups service; this file only routes and gates versions.
//
// Version notes:
// * v1: ThrottleMillis
// * v3: flexible versions
// * v4: StatesFilter (KIP-518)
// * v5: TypesFilter (KIP-848)

func init() { register(api{key: 16, min: 0, max: 5, handle: (*Server).handleListGroups}) }

// ListGroups lists every group to a client with DESCRIBE on the cluster,
// else only the groups it may describe (KafkaApis.handleListGroupsRequest).
func (s *Server) handleListGroups(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	resp := s.svc.Groups.ListGroups(ctx, kreq.(*kmsg.ListGroupsRequest))
	if c := s.auth(ctx); !c.cluster(opDescribe) {
		resp.Groups = slices.DeleteFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool {
			return !c.allowed(resGroup, g.Group, opDescribe)
		})
	}
	return resp, nil
}
