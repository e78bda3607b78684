package broker

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/mirror/manager"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/storage"
)

// mirrorController is the mirror manager's Controller: BumpLeaderEpochs
// forwarded to the active controller as this broker, with its id and
// broker epoch, and the leader epoch it holds the partition at (the Strait
// tags of the request), so the controller fences a stale leader as
// AlterPartition does.
type mirrorController struct{ n *Node }

var _ manager.Controller = mirrorController{}

func (c mirrorController) BumpLeaderEpoch(ctx context.Context, tp storage.TopicPartition, leaderEpoch, minEpoch int32) error {
	t, ok := c.n.quorum.Image().Topics[tp.Topic]
	if !ok {
		return fmt.Errorf("BumpLeaderEpochs %s: %w", tp, kerr.UnknownTopicOrPartition)
	}
	req := mirrormsg.NewPtrBumpLeaderEpochsRequest()
	req.BrokerID, req.BrokerEpoch = c.n.cfg.NodeID, c.n.brokerEpoch()
	rt := mirrormsg.NewBumpLeaderEpochsRequestTopicState()
	rt.TopicID = t.ID
	rp := mirrormsg.NewBumpLeaderEpochsRequestLeaderEpochState()
	rp.PartitionIndex, rp.MinLeaderEpoch, rp.LeaderEpoch = tp.Partition, minEpoch, leaderEpoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := c.n.forward(ctx, req).(*mirrormsg.BumpLeaderEpochsResponse)
	if err := mirrormsg.ErrorForCode(resp.ErrorCode); err != nil {
		return fmt.Errorf("BumpLeaderEpochs %s to %d: %w", tp, minEpoch, err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return fmt.Errorf("BumpLeaderEpochs %s: %d topics in the answer: %w", tp, len(resp.Topics), kerr.UnknownServerError)
	}
	if err := mirrormsg.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode); err != nil {
		return fmt.Errorf("BumpLeaderEpochs %s to %d at leader epoch %d: %w", tp, minEpoch, leaderEpoch, err)
	}
	return nil
}
