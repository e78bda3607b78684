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

func (s *Server) handleDescribeShareGroupOffsets(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.ShareGroups.DescribeShareGroupOffsets(ctx, kreq.(*kmsg.DescribeShareGroupOffsetsRequest)), nil
}
