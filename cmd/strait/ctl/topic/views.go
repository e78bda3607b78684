package topic

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/cmd/strait/ctl/kit"
)

// topicSummary is a topic in list's and describe's --json.
type topicSummary struct {
	Name     string `json:"name"`
	ID       string `json:"id"`
	Internal bool   `json:"internal"`
	// PartitionCount and ReplicationFactor are 0 for a topic that failed
	// to load; the replication factor is partition 0's replica count, as
	// rpk and Kafka's tools report it.
	PartitionCount    int    `json:"partition_count"`
	ReplicationFactor int    `json:"replication_factor"`
	Error             string `json:"error"`
}

// partitionSummary is a partition's metadata in --json.
type partitionSummary struct {
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	OfflineReplicas []int32 `json:"offline_replicas"`
	Error           string  `json:"error"`
}

func summarize(c *kit.Ctx, d kadm.TopicDetail) topicSummary {
	s := topicSummary{Name: d.Topic, ID: topicID(d.ID), Internal: d.IsInternal, PartitionCount: len(d.Partitions)}
	if p0, ok := d.Partitions[0]; ok {
		s.ReplicationFactor = len(p0.Replicas)
	}
	if d.Err != nil {
		s.Error = reason(c, d.Err, "")
	}
	return s
}

// partitionSummaries are d's partitions in partition order.
func partitionSummaries(c *kit.Ctx, d kadm.TopicDetail) []partitionSummary {
	ps := make([]partitionSummary, 0, len(d.Partitions))
	for _, p := range d.Partitions.Sorted() {
		s := partitionSummary{
			Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
			Replicas: sortedIDs(p.Replicas), ISR: sortedIDs(p.ISR), OfflineReplicas: sortedIDs(p.OfflineReplicas),
		}
		if p.Err != nil {
			s.Error = reason(c, p.Err, "")
		}
		ps = append(ps, s)
	}
	return ps
}

// sortedIDs is a sorted copy, never nil (--json prints [] not null).
func sortedIDs(ids []int32) []int32 {
	s := append([]int32{}, ids...)
	slices.Sort(s)
	return s
}
