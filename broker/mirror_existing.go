package broker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// A start whose source has no last mirrored epoch (LME) for a partition
// truncates it entirely (KIP-1279's first-time rule), which is right for a
// destination partition that holds nothing yet. An existing destination
// topic (it has the source's topic id: it was mirrored from or to that
// cluster before) may hold records of its own: a failed-over topic mirrored
// again in the same direction, say. StartMirrorTopics refuses such a topic
// at once, naming the partitions and their records, unless the request asks
// for TruncateExisting (`strait mirror start --truncate-existing`) or the
// mirror config mirror.truncate.existing is set; then it deletes those
// records (DeleteRecords) before it starts the topic, and reports them. The
// partition leaders check again before they truncate
// (partition.CheckExistingRecords), which covers what this check cannot:
// records written between it and the start.

// partitionRange is a destination partition's records: [start, end).
type partitionRange struct {
	partition  int32
	start, end int64
	// endEpoch is the latest leader epoch of the log (ListOffsets
	// LATEST's LeaderEpoch), −1 if unknown.
	endEpoch int32
}

// existingRecordsGuard is what guardExistingRecords decided: the topics to
// start, the per-topic results so far (the refused ones) and the records
// it deleted, by topic, for the answer.
type existingRecordsGuard struct {
	topics  []mirrormsg.StartMirrorTopicsRequestSourceTopic
	local   []mirrormsg.StartMirrorTopicsResponseTopicResult
	dropped map[string][]partitionRange
}

// guardExistingRecords checks the resolved topics that already exist here
// and are in no mirror or stopped. Topics that would lose records are
// refused (INVALID_REQUEST) or, when allowed, have them deleted.
func (n *Node) guardExistingRecords(ctx context.Context, src *source.Cluster, img *raftmeta.Image, req *mirrormsg.StartMirrorTopicsRequest,
	topics []mirrormsg.StartMirrorTopicsRequestSourceTopic, local []mirrormsg.StartMirrorTopicsResponseTopicResult,
) (existingRecordsGuard, *startError) {
	mirror := req.MirrorName
	allow := req.TruncateExisting || raftmeta.MirrorTruncatesExisting(img.MirrorConfig(mirror))
	var existing []*raftmeta.Topic
	for _, st := range topics {
		t := img.Topics[st.Name]
		if t == nil || t.ID != raftmeta.Uuid(st.TopicID) {
			continue // created by the start, or refused by the controller
		}
		if _, d := img.TopicMirror(t.Name); d == partition.DesiredNone || d == partition.DesiredStop {
			existing = append(existing, t)
		}
	}
	if len(existing) == 0 {
		return existingRecordsGuard{topics: topics, local: local}, nil
	}
	held, err := n.recordRanges(ctx, existing)
	if err != nil {
		return existingRecordsGuard{}, &startError{kerr.BrokerNotAvailable.Code, fmt.Sprintf(
			"Could not read the log offsets of the destination topics of mirror '%s': %v", mirror, err)}
	}
	atRisk, errs := unsharedRecords(ctx, src, held)
	result := func(name string, e *kerr.Error, msg string) {
		r := mirrormsg.NewStartMirrorTopicsResponseTopicResult()
		r.Name, r.ErrorCode, r.ErrorMessage = name, e.Code, kmsg.StringPtr(msg)
		local = append(local, r)
	}
	refused := map[string]bool{}
	dropped := map[string][]partitionRange{}
	for _, t := range existing {
		switch {
		case errs[t.Name] != nil:
			refused[t.Name] = true
			result(t.Name, kerr.BrokerNotAvailable, fmt.Sprintf(
				"Could not ask the source cluster of mirror '%s' whether it shares the records of topic '%s': %v.", mirror, t.Name, errs[t.Name]))
		case len(atRisk[t.Name]) == 0:
		case !allow:
			refused[t.Name] = true
			result(t.Name, kerr.InvalidRequest, fmt.Sprintf(
				"Topic '%s' holds records the source cluster of mirror '%s' does not share (it has no last mirrored epoch for them): %s. "+
					"Starting to mirror it would delete them. Stop here to keep them, or delete them with --truncate-existing "+
					"(or the mirror config %s=true).",
				t.Name, mirror, describeRanges(atRisk[t.Name]), raftmeta.MirrorTruncateExistingConfig))
		default:
			if err := n.deleteRecords(ctx, t.Name, atRisk[t.Name]); err != nil {
				refused[t.Name] = true
				result(t.Name, kerr.UnknownServerError, fmt.Sprintf(
					"Could not delete the records of topic '%s' the source cluster of mirror '%s' does not share: %v.", t.Name, mirror, err))
				continue
			}
			n.logger.Warn("deleted the records a mirror start would have truncated", "mirror", mirror, "topic", t.Name,
				"partitions", describeRanges(atRisk[t.Name]))
			dropped[t.Name] = atRisk[t.Name]
		}
	}
	var keep []mirrormsg.StartMirrorTopicsRequestSourceTopic
	for _, st := range topics {
		if !refused[st.Name] {
			keep = append(keep, st)
		}
	}
	return existingRecordsGuard{topics: keep, local: local, dropped: dropped}, nil
}

// droppedRecords is the answer's DroppedRecords of rs.
func droppedRecords(rs []partitionRange) []mirrormsg.StartMirrorTopicsResponseDroppedPartition {
	out := make([]mirrormsg.StartMirrorTopicsResponseDroppedPartition, 0, len(rs))
	for _, r := range rs {
		d := mirrormsg.NewStartMirrorTopicsResponseDroppedPartition()
		d.PartitionIndex, d.Records = r.partition, r.end-r.start
		out = append(out, d)
	}
	return out
}

// recordRanges is logRanges' partitions that hold records.
func (n *Node) recordRanges(ctx context.Context, topics []*raftmeta.Topic) (map[string][]partitionRange, error) {
	all, err := n.logRanges(ctx, topics)
	if err != nil {
		return nil, err
	}
	held := map[string][]partitionRange{}
	for topic, rs := range all {
		for _, r := range rs {
			if r.end > r.start {
				held[topic] = append(held[topic], r)
			}
		}
	}
	return held, nil
}

// logRanges reads each partition's log start and end (ListOffsets
// EARLIEST and LATEST from the partition leaders, through the inter-broker
// client), by topic, in partition order.
func (n *Node) logRanges(ctx context.Context, topics []*raftmeta.Topic) (map[string][]partitionRange, error) {
	cl, err := n.peers.client()
	if err != nil {
		return nil, err
	}
	offsets := func(ts int64) (map[string]map[int32]kmsg.ListOffsetsResponseTopicPartition, error) {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		for _, t := range topics {
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = t.Name
			for p := range t.Partitions {
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = int32(p), ts, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return nil, err
		}
		out := map[string]map[int32]kmsg.ListOffsetsResponseTopicPartition{}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return nil, fmt.Errorf("%s-%d: %w", t.Topic, p.Partition, err)
				}
				if out[t.Topic] == nil {
					out[t.Topic] = map[int32]kmsg.ListOffsetsResponseTopicPartition{}
				}
				out[t.Topic][p.Partition] = p
			}
		}
		return out, nil
	}
	starts, err := offsets(-2)
	if err != nil {
		return nil, fmt.Errorf("log start offsets: %w", err)
	}
	ends, err := offsets(-1)
	if err != nil {
		return nil, fmt.Errorf("log end offsets: %w", err)
	}
	all := map[string][]partitionRange{}
	for _, t := range topics {
		for p := range t.Partitions {
			end := ends[t.Name][int32(p)]
			all[t.Name] = append(all[t.Name], partitionRange{partition: int32(p), start: starts[t.Name][int32(p)].Offset, end: end.Offset, endEpoch: end.LeaderEpoch})
		}
	}
	return all, nil
}

// unsharedRecords asks the source for the LME of every partition that
// holds records: those it has none for (-1) would be truncated entirely.
// A topic whose question failed is in errs.
func unsharedRecords(ctx context.Context, src *source.Cluster, held map[string][]partitionRange) (atRisk map[string][]partitionRange, errs map[string]error) {
	var mu sync.Mutex
	atRisk, errs = map[string][]partitionRange{}, map[string]error{}
	var wg sync.WaitGroup
	for topic, rs := range held {
		for _, r := range rs {
			wg.Go(func() {
				lme, _, err := src.LastMirroredEpoch(ctx, topic, r.partition)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					errs[topic] = err
				case lme < 0:
					atRisk[topic] = append(atRisk[topic], r)
				}
			})
		}
	}
	wg.Wait()
	for _, rs := range atRisk {
		slices.SortFunc(rs, func(a, b partitionRange) int { return int(a.partition - b.partition) })
	}
	return atRisk, errs
}

// deleteRecords deletes the records of topic's partitions below each
// range's end (DeleteRecords, as kafka-delete-records.sh does), so a start
// has nothing of this cluster's own left to truncate.
func (n *Node) deleteRecords(ctx context.Context, topic string, rs []partitionRange) error {
	cl, err := n.peers.client()
	if err != nil {
		return err
	}
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	for _, r := range rs {
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Partition, rp.Offset = r.partition, r.end
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	if dl, ok := ctx.Deadline(); ok {
		req.TimeoutMillis = int32(max(time.Until(dl).Milliseconds(), 1))
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("%s-%d: %w", t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}

// describeRanges is "partition 0: 20 records (offsets 0 to 19), ...".
func describeRanges(rs []partitionRange) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("partition %d: %d records (offsets %d to %d)", r.partition, r.end-r.start, r.start, r.end-1))
	}
	return strings.Join(parts, ", ")
}
