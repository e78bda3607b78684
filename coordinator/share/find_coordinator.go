package share

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// CoordinatorTypeShare is FindCoordinator's key type of a share-partition
// key (CoordinatorType.SHARE, KIP-932).
const CoordinatorTypeShare int8 = 2

// FindCoordinator answers FindCoordinator for share-partition keys, key
// type 2, which the broker sends here (KafkaApis.getCoordinator): a
// request before v6 is INVALID_REQUEST, as is a key that is not
// "groupId:topicId:partition"; otherwise the leader of the key's
// __share_group_state partition, created first when it does not exist
// (Kafka creates it and answers COORDINATOR_NOT_AVAILABLE meanwhile;
// waiting for it saves the caller a retry).
func (c *Coordinator) FindCoordinator(ctx context.Context, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	listener := reqctx.From(ctx).Listener
	ensured := false
	return coordinator.AnswerFindCoordinator(req, func(key string) coordinator.CoordinatorLocation {
		if req.Version < 6 {
			return coordinator.CoordinatorLocation{Code: kerr.InvalidRequest.Code,
				Message: kmsg.StringPtr("share-partition keys need FindCoordinator v6")}
		}
		k, err := ParseKey(key)
		if err != nil {
			return coordinator.CoordinatorLocation{Code: kerr.InvalidRequest.Code, Message: kmsg.StringPtr(err.Error())}
		}
		img := c.image()
		if _, ok := img.Topics[Topic]; !ok && !ensured && c.cfg.EnsureTopic != nil {
			ensured = true
			if err := c.cfg.EnsureTopic(ctx); err != nil {
				c.log.Warn("creating the share-group state topic failed", "err", err)
			}
			img = c.image()
		}
		return coordinator.Locate(img, Topic, c.PartitionFor(k), c.cfg.Endpoint, listener)
	})
}
