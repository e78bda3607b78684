package source

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

// Latest is a partition's latest offsets as ListOffsets answered them.
type Latest struct{ HighWatermark, LastStableOffset int64 }

// MeasureLatest asks the source for the latest offsets of tps as a
// consumer would (ListOffsets LATEST, ReplicaID -1): READ_UNCOMMITTED
// answers the high watermark and READ_COMMITTED the last stable offset
// (Kafka's ListOffsets semantics, KIP-98). It is the lag's source side
// while a partition's fetcher does not run (PAUSED, PREPARING, FAILED;
// mirror/lag). The client sends each partition to its source leader.
//
// Errors are not reported to the driver (no OnPartitionError): a failed
// measurement only leaves the last one to age, until the lag reads
// unknown. Partitions answered with an error keep their last measurement
// and are left out of the result; at is when the request was sent (the
// source's offsets were at least these then).
func (c *Cluster) MeasureLatest(ctx context.Context, tps []storage.TopicPartition) (out map[storage.TopicPartition]Latest, at time.Time, err error) {
	if len(tps) == 0 {
		return nil, time.Time{}, nil
	}
	sent := c.cfg.Clock.Now()
	hw, err := c.listLatest(ctx, tps, 0)
	if err != nil {
		return nil, time.Time{}, err
	}
	lso, err := c.listLatest(ctx, tps, 1)
	if err != nil {
		return nil, time.Time{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out = make(map[storage.TopicPartition]Latest, len(hw))
	for tp, off := range hw {
		l := Latest{HighWatermark: off, LastStableOffset: -1}
		if o, ok := lso[tp]; ok {
			l.LastStableOffset = o
		}
		c.statusLocked(tp).measured(l.HighWatermark, l.LastStableOffset, sent)
		out[tp] = l
	}
	return out, sent, nil
}

// listLatest is one ListOffsets LATEST at isolation level iso (0
// READ_UNCOMMITTED, 1 READ_COMMITTED): the offsets of the partitions
// answered without error.
func (c *Cluster) listLatest(ctx context.Context, tps []storage.TopicPartition, iso int8) (map[storage.TopicPartition]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	req.IsolationLevel = iso
	byTopic := map[string]int{}
	for _, tp := range tps {
		i, ok := byTopic[tp.Topic]
		if !ok {
			i = len(req.Topics)
			byTopic[tp.Topic] = i
			t := kmsg.NewListOffsetsRequestTopic()
			t.Topic = tp.Topic
			req.Topics = append(req.Topics, t)
		}
		p := kmsg.NewListOffsetsRequestTopicPartition()
		p.Partition = tp.Partition
		p.Timestamp = storage.LatestTimestamp
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	resp, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		return nil, fmt.Errorf("list offsets: %w", err)
	}
	out := make(map[storage.TopicPartition]int64, len(tps))
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if kerr.ErrorForCode(p.ErrorCode) == nil && p.Offset >= 0 {
				out[storage.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.Offset
			}
		}
	}
	return out, nil
}
