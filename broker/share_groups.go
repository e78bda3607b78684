package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator"
	"github.com/strait-io/strait/wire"
)

// shareGroupConfig is the group coordinator's share group part: the
// group.share.* settings and what it asks of the broker.
//
// Share groups (ShareGroupHeartbeat, ShareGroupDescribe and the share
// group offset APIs) store their state through Options.ShareGroupPersister,
// the node's share coordinator client unless a test names another.
func (n *Node) shareGroupConfig() coordinator.ShareConfig {
	s := n.cfg.ShareGroup
	ms := func(v int32) time.Duration { return time.Duration(v) * time.Millisecond }
	// Kafka's group.share.initialize.retry.interval.ms (internal, 30 s)
	// is at least offsets.commit.timeout.ms.
	retry := max(coordinator.DefaultShareInitializeRetryInterval, ms(n.cfg.Group.OffsetsCommitTimeoutMs))
	return coordinator.ShareConfig{
		Persister:               n.opts.ShareGroupPersister,
		LatestOffset:            n.latestOffset,
		SessionTimeout:          ms(s.SessionTimeoutMs),
		MinSessionTimeout:       ms(s.MinSessionTimeoutMs),
		MaxSessionTimeout:       ms(s.MaxSessionTimeoutMs),
		HeartbeatInterval:       ms(s.HeartbeatIntervalMs),
		MinHeartbeatInterval:    ms(s.MinHeartbeatIntervalMs),
		MaxHeartbeatInterval:    ms(s.MaxHeartbeatIntervalMs),
		MaxGroupSize:            s.MaxSize,
		Assignors:               s.Assignors,
		InitializeRetryInterval: retry,
	}
}

// shareGroupService is the group coordinator as the wire layer's
// ShareGroupService, nil (the keys unserved) without a persister: a node
// that has not started (defaultSharePersisters) has none.
func (n *Node) shareGroupService() wire.ShareGroupService {
	if n.opts.ShareGroupPersister == nil {
		return nil
	}
	return n.groups
}

// latestOffset is a partition's end offset as a consumer's ListOffsets
// LATEST reads it (its high watermark), asked of its leader: this node's
// replica manager, or the leader over the inter-broker listener (Kafka's
// NetworkPartitionMetadataClient.listLatestOffsets, for the lag of
// DescribeShareGroupOffsets).
func (n *Node) latestOffset(ctx context.Context, topic string, partition int32) (int64, error) {
	img := n.quorum.Image()
	t := img.Topics[topic]
	if t == nil || partition < 0 || int(partition) >= len(t.Partitions) {
		return -1, kerr.UnknownTopicOrPartition
	}
	leader := t.Partitions[partition].Leader
	if leader < 0 {
		return -1, kerr.LeaderNotAvailable
	}
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 7
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = partition, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	var resp *kmsg.ListOffsetsResponse
	if leader == n.cfg.NodeID {
		resp = n.replicas.ListOffsets(ctx, req)
	} else {
		kr, err := n.peers.request(ctx, leader, req)
		if err != nil {
			return -1, err
		}
		resp = kr.(*kmsg.ListOffsetsResponse)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if t.Topic == topic && p.Partition == partition {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return -1, err
				}
				return p.Offset, nil
			}
		}
	}
	return -1, fmt.Errorf("ListOffsets for %s-%d: no answer for the partition: %w", topic, partition, kerr.UnknownTopicOrPartition)
}
