package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ReadShareGroupStateSummary: v0-1
//
// Behavior:
// * Answered by the share coordinator of each share-partition (KIP-932):
//   its start offset, state epoch and leader epoch, for the group
//   coordinator's DescribeShareGroupOffsets. Fences nothing.
// * An inter-broker API (Kafka checks CLUSTER_ACTION); Strait enforces no
//   ACLs yet.
//
// Version notes:
// * v1: DeliveryCompleteCount in the response (KIP-1226)

func init() {
	register(api{key: 87, throttleExempt: true, min: 0, max: 1, served: servesShareCoordinator, handle: (*Server).handleReadShareGroupStateSummary})
}

// ReadShareGroupStateSummary is an inter-broker RPC: it needs CLUSTER_ACTION, else every
// partition is CLUSTER_AUTHORIZATION_FAILED.
func (s *Server) handleReadShareGroupStateSummary(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.ReadShareGroupStateSummaryRequest)
	if !s.auth(ctx).cluster(opClusterAction) {
		return deniedPartitions(req, errClusterAuth), nil
	}
	return s.svc.ShareCoordinator.ReadShareGroupStateSummary(ctx, req), nil
}
