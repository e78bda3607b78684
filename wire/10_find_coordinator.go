package wire

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FindCoordinator: v0-6
//
// Behavior:
// * Group keys map to a __consumer_offsets partition (Java String.hashCode of the group id, modulo the partition count); the answer is that partition's leader.
// * Transaction keys (type 1) are answered by the transaction coordinator,
//   share-partition keys (type 2, "groupId:topicId:partition") by the share
//   coordinator: the broker routes them (GroupService is its router).
//
// Version notes:
// * v1: KeyType, ErrorMessage
// * v2: same as v1
// * v3: flexible versions
// * v4: batched CoordinatorKeys (KIP-699)
// * v5: TRANSACTION_ABORTABLE (KIP-890)
// * v6: share group keys (KIP-932)

func init() { register(api{key: 10, min: 0, max: 6, handle: (*Server).handleFindCoordinator}) }

func (s *Server) handleFindCoordinator(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	return s.svc.Groups.FindCoordinator(ctx, kreq.(*kmsg.FindCoordinatorRequest)), nil
}
