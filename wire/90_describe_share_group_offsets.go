package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeShareGroupOffsets: v0-1
//
// Behavior:
// * The share-partition start offsets of share groups (KIP-932), read
//   from the share coordinator. Served only with a ShareGroupService.
//
// Version notes:
// * v1: Lag (KIP-1226, Kafka 4.2)

func init() {
	register(api{key: 90, min: 0, max: 1, served: servesShareGroups, handle: (*Server).handleDescribeShareGroupOffsets})
}

// DescribeShareGroupOffsets needs DESCRIBE on each group, else the group
// is GROUP_AUTHORIZATION_FAILED, and DESCRIBE on each topic, else its
// partitions are TOPIC_AUTHORIZATION_FAILED.
func (s *Server) handleDescribeShareGroupOffsets(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeShareGroupOffsetsRequest)
	c := s.auth(ctx)
	denied := splitAllowed(&req.Groups, func(g *kmsg.DescribeShareGroupOffsetsRequestGroup) bool {
		return c.allowed(resGroup, g.GroupID, opDescribe)
	})
	resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	if len(req.Groups) > 0 || len(denied) == 0 {
		resp = s.svc.ShareGroups.DescribeShareGroupOffsets(ctx, req)
	}
	if c.on {
		for i := range resp.Groups {
			for _, t := range resp.Groups[i].Topics {
				if c.allowed(resTopic, t.Topic, opDescribe) {
					continue
				}
				for j := range t.Partitions {
					p := &t.Partitions[j]
					p.StartOffset, p.LeaderEpoch, p.Lag, p.ErrorCode = -1, -1, -1, errTopicAuth
				}
			}
		}
	}
	for _, g := range denied {
		rg := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
		rg.GroupID, rg.ErrorCode = g.GroupID, errGroupAuth
		resp.Groups = append(resp.Groups, rg)
	}
	return resp, nil
}
