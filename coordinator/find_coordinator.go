package coordinator

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"

	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// Coordinator key types (CoordinatorType).
const (
	coordinatorTypeGroup       int8 = 0
	coordinatorTypeTransaction int8 = 1
)

// errTransactionKey is what the group coordinator says for a transaction
// key: the broker sends those to the transaction coordinator
// (coordinator/txn), so one reaching here has no coordinator to answer.
const errTransactionKey = "transactional ids are served by the transaction coordinator"

// FindCoordinator: v0-6
//
// Behavior:
//   - Group keys: if __consumer_offsets does not exist it is created first
//     (EnsureOffsetsTopic), then the leader of the group's partition is
//     answered with its endpoint for the listener the request came in on;
//     COORDINATOR_NOT_AVAILABLE while the partition has no live leader.
//     Kafka answers COORDINATOR_NOT_AVAILABLE while it creates the topic;
//     waiting for the creation saves clients a retry.
//   - Transaction keys are the transaction coordinator's (the broker routes
//     them there); one reaching the group coordinator answers
//     INVALID_REQUEST, as do other key types (share, v6).
//
// Version notes:
//   - v1: KeyType; ErrorMessage.
//   - v4: batched CoordinatorKeys (KIP-699).
func (c *GroupCoordinator) FindCoordinator(ctx context.Context, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	keyType := req.CoordinatorType
	if req.Version < 1 {
		keyType = coordinatorTypeGroup
	}
	listener := reqctx.From(ctx).Listener
	ensured := false
	return AnswerFindCoordinator(req, func(key string) CoordinatorLocation {
		switch keyType {
		case coordinatorTypeGroup:
		case coordinatorTypeTransaction:
			return CoordinatorLocation{Code: invalidRequest, Message: kmsg.StringPtr(errTransactionKey)}
		default:
			return CoordinatorLocation{Code: invalidRequest, Message: kmsg.StringPtr("unsupported coordinator key type")}
		}
		img := c.image()
		if _, ok := img.Topics[OffsetsTopic]; !ok && !ensured && c.cfg.EnsureOffsetsTopic != nil {
			ensured = true
			if err := c.cfg.EnsureOffsetsTopic(ctx); err != nil {
				c.log.Warn("creating the offsets topic failed", "err", err)
			}
			img = c.image()
		}
		return Locate(img, OffsetsTopic, PartitionFor(key, c.cfg.NumPartitions), c.cfg.Endpoint, listener)
	})
}

// CoordinatorLocation is one key's FindCoordinator answer.
type CoordinatorLocation struct {
	Code    int16
	Message *string
	NodeID  int32
	Host    string
	Port    int32
}

// Locate is where the coordinator of partition p of an internal topic is:
// the partition's leader, with its endpoint on the listener the request
// came in on; COORDINATOR_NOT_AVAILABLE while the topic or a live leader
// is missing (both coordinators' FindCoordinator).
func Locate(img *raftmeta.Image, topic string, p int32, endpoint EndpointFunc, listener string) CoordinatorLocation {
	t := img.Topics[topic]
	if t == nil || int(p) >= len(t.Partitions) || t.Partitions[p].Leader < 0 {
		return CoordinatorLocation{Code: coordinatorNotAvailable, NodeID: -1, Port: -1}
	}
	leader := t.Partitions[p].Leader
	h, pt, ok := endpoint(img, leader, listener)
	if !ok {
		return CoordinatorLocation{Code: coordinatorNotAvailable, NodeID: -1, Port: -1}
	}
	return CoordinatorLocation{NodeID: leader, Host: h, Port: pt}
}

// AnswerFindCoordinator builds a FindCoordinator response from each key's
// location: v4+ batches keys (KIP-699), older versions ask for one.
func AnswerFindCoordinator(req *kmsg.FindCoordinatorRequest, find func(key string) CoordinatorLocation) *kmsg.FindCoordinatorResponse {
	resp := kmsg.NewPtrFindCoordinatorResponse()
	resp.Version = req.Version
	located := func(key string) CoordinatorLocation {
		l := find(key)
		if l.Code != 0 {
			l.NodeID, l.Host, l.Port = -1, "", -1
		}
		return l
	}
	if req.Version >= 4 {
		for _, key := range req.CoordinatorKeys {
			rc := kmsg.NewFindCoordinatorResponseCoordinator()
			l := located(key)
			rc.Key, rc.ErrorCode, rc.ErrorMessage, rc.NodeID, rc.Host, rc.Port = key, l.Code, l.Message, l.NodeID, l.Host, l.Port
			resp.Coordinators = append(resp.Coordinators, rc)
		}
		return resp
	}
	l := located(req.CoordinatorKey)
	resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Host, resp.Port = l.Code, l.Message, l.NodeID, l.Host, l.Port
	return resp
}
