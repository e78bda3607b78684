package coordinator

import "sort"

// offsetAndMetadata is a committed offset (OffsetAndMetadata.java).
type offsetAndMetadata struct {
	offset          int64
	leaderEpoch     int32 // -1 when the client sent none
	metadata        string
	commitTimestamp int64 // ms
	expireTimestamp int64 // ms, -1 unless OffsetCommit v2-v4 asked for a retention
	// recordOffset is where the commit's record is in the partition
	// (OffsetAndMetadata.recordOffset): its offset for a record read while
	// loading, a shard position (shard.takeRecordOffset) for one decided
	// since. Only comparisons between two of a shard's recordOffsets
	// mean something: the later in the log is the greater.
	recordOffset int64
}

// offsetStore holds a shard's committed offsets by group, topic and
// partition (OffsetMetadataManager.Offsets).
type offsetStore map[string]map[string]map[int32]offsetAndMetadata

func (o offsetStore) get(group, topic string, partition int32) (offsetAndMetadata, bool) {
	om, ok := o[group][topic][partition]
	return om, ok
}

func (o offsetStore) put(group, topic string, partition int32, om offsetAndMetadata) {
	byTopic := o[group]
	if byTopic == nil {
		byTopic = map[string]map[int32]offsetAndMetadata{}
		o[group] = byTopic
	}
	byPartition := byTopic[topic]
	if byPartition == nil {
		byPartition = map[int32]offsetAndMetadata{}
		byTopic[topic] = byPartition
	}
	byPartition[partition] = om
}

func (o offsetStore) remove(group, topic string, partition int32) {
	byTopic := o[group]
	if byTopic == nil {
		return
	}
	delete(byTopic[topic], partition)
	if len(byTopic[topic]) == 0 {
		delete(byTopic, topic)
	}
	if len(byTopic) == 0 {
		delete(o, group)
	}
}

// topics returns a group's topics with offsets, sorted.
func (o offsetStore) topics(group string) []string {
	ts := make([]string, 0, len(o[group]))
	for t := range o[group] {
		ts = append(ts, t)
	}
	sort.Strings(ts)
	return ts
}

// partitions returns a topic's partitions with offsets, sorted.
func (o offsetStore) partitions(group, topic string) []int32 {
	ps := make([]int32, 0, len(o[group][topic]))
	for p := range o[group][topic] {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}
