package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/wire/reqctx"
)

// Coordinator key types (CoordinatorType).
const (
	coordinatorTypeGroup       int8 = 0
	coordinatorTypeTransaction int8 = 1
)

// errTransactionsUnsupported is what FindCoordinator says for transaction
// coordinators. COORDINATOR_NOT_AVAILABLE would be retried forever by
// clients; INVALID_REQUEST makes a transactional producer fail fast.
const errTransactionsUnsupported = "transactions are not supported yet"

// FindCoordinator: v0-6
//
// Behavior:
//   - Group keys: if __consumer_offsets does not exist it is created first
//     (EnsureOffsetsTopic), then the leader of the group's partition is
//     answered with its endpoint for the listener the request came in on;
//     COORDINATOR_NOT_AVAILABLE while the partition has no live leader.
//     Kafka answers COORDINATOR_NOT_AVAILABLE while it creates the topic;
//     waiting for the creation saves clients a retry.
//   - Transaction keys answer INVALID_REQUEST: transactions are not
//     supported yet. Other key types (share, v6) answer INVALID_REQUEST.
//
// Version notes:
//   - v1: KeyType; ErrorMessage.
//   - v4: batched CoordinatorKeys (KIP-699).
func (c *GroupCoordinator) FindCoordinator(ctx context.Context, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	resp := kmsg.NewPtrFindCoordinatorResponse()
	resp.Version = req.Version
	keyType := req.CoordinatorType
	if req.Version < 1 {
		keyType = coordinatorTypeGroup
	}
	listener := reqctx.From(ctx).Listener
	ensured := false
	find := func(key string) (code int16, msg *string, node int32, host string, port int32) {
		node, port = -1, -1
		switch keyType {
		case coordinatorTypeGroup:
		case coordinatorTypeTransaction:
			return invalidRequest, kmsg.StringPtr(errTransactionsUnsupported), node, host, port
		default:
			return invalidRequest, kmsg.StringPtr("unsupported coordinator key type"), node, host, port
		}
		img := c.image()
		topic := img.Topics[OffsetsTopic]
		if topic == nil && !ensured && c.cfg.EnsureOffsetsTopic != nil {
			ensured = true
			if err := c.cfg.EnsureOffsetsTopic(ctx); err != nil {
				c.log.Warn("creating the offsets topic failed", "err", err)
			}
			img = c.image()
			topic = img.Topics[OffsetsTopic]
		}
		p := PartitionFor(key, c.cfg.NumPartitions)
		if topic == nil || int(p) >= len(topic.Partitions) || topic.Partitions[p].Leader < 0 {
			return coordinatorNotAvailable, nil, node, host, port
		}
		leader := topic.Partitions[p].Leader
		h, pt, ok := c.cfg.Endpoint(img, leader, listener)
		if !ok {
			return coordinatorNotAvailable, nil, node, host, port
		}
		return 0, nil, leader, h, pt
	}

	if req.Version >= 4 {
		for _, key := range req.CoordinatorKeys {
			rc := kmsg.NewFindCoordinatorResponseCoordinator()
			rc.Key = key
			rc.ErrorCode, rc.ErrorMessage, rc.NodeID, rc.Host, rc.Port = find(key)
			resp.Coordinators = append(resp.Coordinators, rc)
		}
		return resp
	}
	resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Host, resp.Port = find(req.CoordinatorKey)
	return resp
}
