package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/strait-io/strait/coordinator/share"
)

// shareStateTopic is KIP-932's share-group state topic.
const shareStateTopic = share.Topic

// startShareCoordinator builds the share coordinator (coordinator/share)
// over __share_group_state and hands it the partitions this broker leads,
// as startTransactions does for the transaction coordinator. Kafka's
// BrokerServer starts its ShareCoordinatorService the same way, with
// every broker.
func (n *Node) startShareCoordinator() error {
	sc := n.cfg.Share
	numPartitions := sc.StateTopicNumPartitions
	if t, ok := n.quorum.Image().Topics[shareStateTopic]; ok {
		// The partition count of an existing topic wins: share-partitions
		// must keep mapping to the partitions holding their state.
		numPartitions = int32(len(t.Partitions))
	}
	c, err := share.New(share.Config{
		Log:                              shareStateLog{coordinatorLog{rm: n.replicas, topic: shareStateTopic}},
		Image:                            n.quorum.Image,
		EnsureTopic:                      n.ensureShareStateTopic,
		NumPartitions:                    numPartitions,
		SnapshotUpdateRecordsPerSnapshot: sc.SnapshotUpdateRecordsPerSnapshot,
		WriteTimeout:                     time.Duration(sc.WriteTimeoutMs) * time.Millisecond,
		LoadBufferSize:                   sc.LoadBufferSize,
		PruneInterval:                    time.Duration(sc.StateTopicPruneIntervalMs) * time.Millisecond,
		ColdPartitionSnapshotInterval:    time.Duration(sc.ColdPartitionSnapshotIntervalMs) * time.Millisecond,
		Clock:                            n.clock,
		Logger:                           n.logger,
	})
	if err != nil {
		return err
	}
	n.shares = c
	n.deltaShares.Store(c)
	n.followLeadership(shareStateTopic, c)
	return nil
}

// ensureShareStateTopic creates __share_group_state the way Kafka's
// AutoTopicCreationManager asks for it (ShareCoordinatorService's
// shareGroupStateTopicConfigs): share.coordinator.state.topic.num.partitions
// partitions, the delete cleanup policy (KIP-932: an update record means
// nothing without the snapshot before it, so compaction would lose state)
// with no retention (the coordinator prunes what later snapshots made
// redundant), share.coordinator.state.topic.segment.bytes segments,
// min.insync.replicas share.coordinator.state.topic.min.isr, and a
// replication factor of share.coordinator.state.topic.replication.factor,
// lowered only where fewer brokers are registered.
func (n *Node) ensureShareStateTopic(ctx context.Context) error {
	sc := n.cfg.Share
	return n.ensureInternalTopic(ctx, shareStateTopic, sc.StateTopicNumPartitions, sc.StateTopicReplicationFactor,
		"share.coordinator.state.topic.replication.factor", map[string]string{
			"cleanup.policy":      "delete",
			"compression.type":    "producer",
			"min.insync.replicas": fmt.Sprint(sc.StateTopicMinISR),
			"retention.ms":        "-1",
			"segment.bytes":       fmt.Sprint(sc.StateTopicSegmentBytes),
		})
}

// shareStateLog is the share coordinator's view of __share_group_state:
// a coordinatorLog that may also prune the partitions this broker leads.
type shareStateLog struct{ coordinatorLog }

var _ share.Log = shareStateLog{}

func (l shareStateLog) DeleteRecords(_ context.Context, partition int32, offset int64) error {
	return l.rm.DeleteRecordsCoordinator(l.tp(partition), offset)
}
