package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteShareGroupState: v0
//
// Behavior:
// * Answered by the share coordinator of each share-partition (KIP-932):
//   its state is removed with a tombstone.
// * Sent by the group coordinator; an inter-broker API (Kafka checks
//   CLUSTER_ACTION), Strait enforces no ACLs yet.

func init() {
	register(api{key: 86, min: 0, max: 0, served: servesShareCoordinator, handle: (*Server).handleDeleteShareGroupState})
}

func (s *Server) handleDeleteShareGroupState(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.ShareCoordinator.DeleteShareGroupState(ctx, kreq.(*kmsg.DeleteShareGroupStateRequest)), nil
}
