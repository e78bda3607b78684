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
	register(api{key: 86, throttleExempt: true, min: 0, max: 0, served: servesShareCoordinator, handle: (*Server).handleDeleteShareGroupState})
}

// DeleteShareGroupState is an inter-broker RPC: it needs CLUSTER_ACTION, else every
// partition is CLUSTER_AUTHORIZATION_FAILED.
func (s *Server) handleDeleteShareGroupState(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DeleteShareGroupStateRequest)
	if !s.auth(ctx).cluster(opClusterAction) {
		return deniedPartitions(req, errClusterAuth), nil
	}
	return s.svc.ShareCoordinator.DeleteShareGroupState(ctx, req), nil
}
