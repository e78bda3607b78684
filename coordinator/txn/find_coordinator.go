package txn

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
)

// FindCoordinator answers FindCoordinator for transactional ids (key type
// 1; the broker sends the other types to the group coordinator): the
// leader of the id's __transaction_state partition, created first when it
// does not exist (Kafka creates it on the first such request and answers
// COORDINATOR_NOT_AVAILABLE meanwhile; waiting for it saves the client a
// retry).
func (c *Coordinator) FindCoordinator(ctx context.Context, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	listener := reqctx.From(ctx).Listener
	ensured := false
	return coordinator.AnswerFindCoordinator(req, func(key string) coordinator.CoordinatorLocation {
		if key == "" {
			return coordinator.CoordinatorLocation{Code: kerr.InvalidRequest.Code, Message: kmsg.StringPtr("empty transactional id")}
		}
		img := c.cfg.Image()
		if _, ok := img.Topics[Topic]; !ok && !ensured && c.cfg.EnsureTopic != nil {
			ensured = true
			if err := c.cfg.EnsureTopic(ctx); err != nil {
				c.log.Warn("creating the transaction state topic failed", "err", err)
			}
			img = c.cfg.Image()
		}
		return coordinator.Locate(img, Topic, c.PartitionFor(key), c.cfg.Endpoint, listener)
	})
}
