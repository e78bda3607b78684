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
	register(api{key: 83, throttleExempt: true, min: 0, max: 0, served: servesShareCoordinator, handle: (*Server).handleInitializeShareGroupState})
}

// InitializeShareGroupState is an inter-broker RPC: it needs CLUSTER_ACTION, else every
// partition is CLUSTER_AUTHORIZATION_FAILED.
func (s *Server) handleInitializeShareGroupState(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.InitializeShareGroupStateRequest)
	if !s.auth(ctx).cluster(opClusterAction) {
		return deniedPartitions(req, errClusterAuth), nil
	}
	return s.svc.ShareCoordinator.InitializeShareGroupState(ctx, req), nil
}
