package broker

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/mirror/manager"
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/mirror/source"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// A dry-run start (`strait mirror start NAME --topic T --dry-run`, the
// tagged DryRun of StartMirrorTopics) answers what a start would truncate
// and changes nothing: no DeleteRecords, no forward to the controller. A
// start aligns only the existing destination topics that are in no mirror
// or stopped (a failback: the old source of a failed-over topic mirrors it
// back); each of their partitions runs the walk PREPARING runs,
// partition.Align, on the LME the source recorded and the partition
// leader's epoch cache (OffsetForLeaderEpoch, the same lookup as the
// leader's Log.EndOffsetForEpoch), and gets a Truncation entry. Topics a
// start would create or that are already mirrored here have nothing to
// truncate and get an empty answer. The records themselves are read by
// the client (the CLI fetches and exports them).

// dryRunStart answers a DryRun StartMirrorTopics for the resolved topics.
func (n *Node) dryRunStart(ctx context.Context, src *source.Cluster, img *raftmeta.Image, topics []mirrormsg.StartMirrorTopicsRequestSourceTopic,
	local []mirrormsg.StartMirrorTopicsResponseTopicResult,
) []mirrormsg.StartMirrorTopicsResponseTopicResult {
	out := local
	var existing []*raftmeta.Topic
	for _, st := range topics {
		r := mirrormsg.NewStartMirrorTopicsResponseTopicResult()
		r.Name = st.Name
		t := img.Topics[st.Name]
		if _, d := img.TopicMirror(st.Name); t != nil && t.ID == raftmeta.Uuid(st.TopicID) && (d == partition.DesiredNone || d == partition.DesiredStop) {
			existing = append(existing, t)
			continue
		}
		out = append(out, r) // created empty, or mirrored already: a start truncates nothing
	}
	if len(existing) == 0 {
		return out
	}
	fail := func(t *raftmeta.Topic, e *kerr.Error, format string, args ...any) {
		r := mirrormsg.NewStartMirrorTopicsResponseTopicResult()
		r.Name, r.ErrorCode, r.ErrorMessage = t.Name, e.Code, kmsg.StringPtr(fmt.Sprintf(format, args...))
		out = append(out, r)
	}
	ranges, err := n.logRanges(ctx, existing)
	if err != nil {
		for _, t := range existing {
			fail(t, kerr.BrokerNotAvailable, "Could not read the log offsets of topic '%s': %v", t.Name, err)
		}
		return out
	}
	plans, errs := n.alignments(ctx, src, ranges)
	for _, t := range existing {
		if err := errs[t.Name]; err != nil {
			fail(t, kerr.BrokerNotAvailable, "Could not find where topic '%s' diverges from the source cluster: %v", t.Name, err)
			continue
		}
		r := mirrormsg.NewStartMirrorTopicsResponseTopicResult()
		r.Name = t.Name
		for _, a := range plans[t.Name] {
			tp := mirrormsg.NewStartMirrorTopicsResponseTruncationPlan()
			tp.PartitionIndex, tp.LastMirroredEpoch = a.partition, a.LME
			tp.DivergenceOffset, tp.LogStartOffset, tp.LogEndOffset = a.From, a.LogStart, a.LogEnd
			// The start refuses what the first-time rule would delete
			// (guardExistingRecords) unless told to delete it.
			tp.RefusedWithoutTruncateExisting = a.Full() && a.Truncates()
			r.Truncation = append(r.Truncation, tp)
		}
		out = append(out, r)
	}
	return out
}

// partitionAlignment is partition.Align's answer for one partition.
type partitionAlignment struct {
	partition int32
	partition.Alignment
}

// alignments runs the failback's walk (manager.FailbackWalk) for every
// partition of ranges: the source's LME (as PREPARING's
// QueryLastMirroredEpoch asks it), the local leader's epoch cache
// (OffsetForLeaderEpoch through the inter-broker client) and the source
// leader's (the mirror fetcher's LastFetchedEpoch check).
func (n *Node) alignments(ctx context.Context, src *source.Cluster, ranges map[string][]partitionRange) (map[string][]partitionAlignment, map[string]error) {
	cl, err := n.peers.client()
	errs := map[string]error{}
	if err != nil {
		for topic := range ranges {
			errs[topic] = err
		}
		return nil, errs
	}
	var mu sync.Mutex
	plans := map[string][]partitionAlignment{}
	var wg sync.WaitGroup
	for topic, rs := range ranges {
		for _, r := range rs {
			wg.Go(func() {
				tp := storage.TopicPartition{Topic: topic, Partition: r.partition}
				a, err := n.failbackWalk(ctx, cl, src, tp, r)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs[topic] = fmt.Errorf("partition %d: %w", r.partition, err)
					return
				}
				plans[topic] = append(plans[topic], partitionAlignment{r.partition, a})
			})
		}
	}
	wg.Wait()
	for _, ps := range plans {
		slices.SortFunc(ps, func(a, b partitionAlignment) int { return int(a.partition - b.partition) })
	}
	return plans, errs
}

// failbackWalk is one partition's walk.
func (n *Node) failbackWalk(ctx context.Context, cl *kgo.Client, src *source.Cluster, tp storage.TopicPartition, r partitionRange) (partition.Alignment, error) {
	local := func(ctx context.Context, epoch int32) (fetcher.EpochEndOffset, error) {
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.ReplicaID = -1
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = tp.Topic
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = tp.Partition, -1, epoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return fetcher.EpochEndOffset{}, fmt.Errorf("OffsetForLeaderEpoch %s: %w", tp, err)
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return fetcher.EpochEndOffset{}, fmt.Errorf("OffsetForLeaderEpoch %s: %w", tp, err)
				}
				return fetcher.EpochEndOffset{LeaderEpoch: p.LeaderEpoch, EndOffset: p.EndOffset}, nil
			}
		}
		return fetcher.EpochEndOffset{}, fmt.Errorf("OffsetForLeaderEpoch %s: no answer for the partition", tp)
	}
	// ListOffsets LATEST answered the high watermark; the truncation cuts
	// from the log end offset: the end of the latest epoch.
	if r.endEpoch >= 0 {
		ans, err := local(ctx, r.endEpoch)
		if err != nil {
			return partition.Alignment{}, err
		}
		if ans.LeaderEpoch == r.endEpoch && ans.EndOffset > r.end {
			r.end = ans.EndOffset
		}
	}
	if r.end <= r.start {
		return partition.Alignment{LME: -1, From: r.end, LogStart: r.start, LogEnd: r.end}, nil // nothing to truncate
	}
	lme, _, err := src.LastMirroredEpoch(ctx, tp.Topic, tp.Partition)
	if err != nil {
		return partition.Alignment{}, err
	}
	remote := func(ctx context.Context, epoch int32) (fetcher.EpochEndOffset, error) {
		return src.EpochEndOffset(ctx, tp, epoch)
	}
	return manager.FailbackWalk(ctx, lme, r.start, r.end, r.endEpoch, local, remote)
}
