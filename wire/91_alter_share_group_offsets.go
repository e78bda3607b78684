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

func (s *Server) handleAlterShareGroupOffsets(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.ShareGroups.AlterShareGroupOffsets(ctx, kreq.(*kmsg.AlterShareGroupOffsetsRequest)), nil
}
