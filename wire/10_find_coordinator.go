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

// FindCoordinator needs DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED)
// or the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), and
// CLUSTER_ACTION for a share-state key, which only brokers look up
// (CLUSTER_AUTHORIZATION_FAILED) (KafkaApis.handleFindCoordinatorRequest).
func (s *Server) handleFindCoordinator(ctx context.Context, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.FindCoordinatorRequest)
	c := s.auth(ctx)
	deniedCode := func(key string) int16 {
		switch req.CoordinatorType {
		case 0:
			if !c.allowed(resGroup, key, opDescribe) {
				return errGroupAuth
			}
		case 1:
			if !c.allowed(resTxnID, key, opDescribe) {
				return errTxnAuth
			}
		case 2:
			if !c.cluster(opClusterAction) {
				return errClusterAuth
			}
		}
		return 0
	}
	if !c.on {
		return s.svc.Groups.FindCoordinator(ctx, req), nil
	}
	if req.Version < 4 {
		if code := deniedCode(req.CoordinatorKey); code != 0 {
			resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
			resp.ErrorCode, resp.NodeID, resp.Port = code, -1, -1
			return resp, nil
		}
		return s.svc.Groups.FindCoordinator(ctx, req), nil
	}
	denied := splitAllowed(&req.CoordinatorKeys, func(k *string) bool { return deniedCode(*k) == 0 })
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	if len(req.CoordinatorKeys) > 0 || len(denied) == 0 {
		resp = s.svc.Groups.FindCoordinator(ctx, req)
	}
	for _, k := range denied {
		rc := kmsg.NewFindCoordinatorResponseCoordinator()
		rc.Key, rc.NodeID, rc.Port, rc.ErrorCode = k, -1, -1, deniedCode(k)
		resp.Coordinators = append(resp.Coordinators, rc)
	}
	return resp, nil
}
