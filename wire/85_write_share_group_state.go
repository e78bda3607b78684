package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// WriteShareGroupState: v0-1
//
// Behavior:
// * Answered by the share coordinator of each share-partition (KIP-932)
//   once the change (start offset, state batches) is in __share_group_state
//   with acks=all. Older leader or state epochs are fenced.
// * An inter-broker API (Kafka checks CLUSTER_ACTION); Strait enforces no
//   ACLs yet.
//
// Version notes:
// * v1: DeliveryCompleteCount (KIP-1226)

func init() {
	register(api{key: 85, throttleExempt: true, min: 0, max: 1, served: servesShareCoordinator, handle: (*Server).handleWriteShareGroupState})
}

// WriteShareGroupState is an inter-broker RPC: it needs CLUSTER_ACTION, else every
// partition is CLUSTER_AUTHORIZATION_FAILED.
func (s *Server) handleWriteShareGroupState(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.WriteShareGroupStateRequest)
	if !s.auth(ctx).cluster(opClusterAction) {
		return deniedPartitions(req, errClusterAuth), nil
	}
	return s.svc.ShareCoordinator.WriteShareGroupState(ctx, req), nil
}
