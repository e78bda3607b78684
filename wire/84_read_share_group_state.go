package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ReadShareGroupState: v0
//
// Behavior:
// * Answered by the share coordinator of each share-partition (KIP-932):
//   its state epoch, start offset and state batches. A share-partition
//   leader reads when it becomes leader; its leader epoch is recorded,
//   fencing older leaders (FENCED_LEADER_EPOCH).
// * An inter-broker API (Kafka checks CLUSTER_ACTION); Strait enforces no
//   ACLs yet.

func init() {
	register(api{key: 84, throttleExempt: true, min: 0, max: 0, served: servesShareCoordinator, handle: (*Server).handleReadShareGroupState})
}

// ReadShareGroupState is an inter-broker RPC: it needs CLUSTER_ACTION, else every
// partition is CLUSTER_AUTHORIZATION_FAILED.
func (s *Server) handleReadShareGroupState(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ReadShareGroupStateRequest)
	if !s.auth(ctx).cluster(opClusterAction) {
		return deniedPartitions(req, errClusterAuth), nil
	}
	return s.svc.ShareCoordinator.ReadShareGroupState(ctx, req), nil
}
