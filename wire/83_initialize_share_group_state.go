package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// InitializeShareGroupState: v0
//
// Behavior:
// * Answered by the share coordinator of each share-partition (KIP-932):
//   a snapshot of its state at the given state epoch and start offset, in
//   __share_group_state (coordinator/share).
// * Sent by the group coordinator; an inter-broker API (Kafka checks
//   CLUSTER_ACTION), Strait enforces no ACLs yet.

func init() {
	register(api{key: 83, min: 0, max: 0, served: servesShareCoordinator, handle: (*Server).handleInitializeShareGroupState})
}

func (s *Server) handleInitializeShareGroupState(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.ShareCoordinator.InitializeShareGroupState(ctx, kreq.(*kmsg.InitializeShareGroupStateRequest)), nil
}
