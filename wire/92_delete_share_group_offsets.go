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

func (s *Server) handleDeleteShareGroupOffsets(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.ShareGroups.DeleteShareGroupOffsets(ctx, kreq.(*kmsg.DeleteShareGroupOffsetsRequest)), nil
}
