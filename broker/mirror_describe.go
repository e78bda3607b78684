package broker

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/strait-io/strait/mirror/manager"
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// describeFanOutTimeout bounds how long DescribeMirrors waits for the other
// brokers' partitions; a broker that has not answered by then has its
// partitions described as UNKNOWN.
const describeFanOutTimeout = 5 * time.Second

// DescribeMirrors answers from this broker: the mirror level (mirrors and
// their topics) from its image, the partitions from the brokers leading
// them. Each partition's state, offsets and lag are known only to its
// leader's mirror manager, so the broker asks every other live broker
// (DescribeMirrors with LocalOnly, a Strait tag) and merges the answers
// with its own manager's, as KIP-1279's DescribeClusterMirrors collects
// the partition states.
//
// Behavior:
//   - LocalOnly: the mirror level as above, each topic with the partitions
//     this broker leads only (no further fan-out).
//   - Otherwise every partition of every described topic appears once, from
//     the broker the image names as its leader when several answered. A
//     partition nobody described (its leader did not answer within
//     describeFanOutTimeout, or leads it but has not started its machine)
//     has State UNKNOWN and offsets, lag and LME -1.
func (s mirrorService) DescribeMirrors(ctx context.Context, req *mirrormsg.DescribeMirrorsRequest) *mirrormsg.DescribeMirrorsResponse {
	n := s.n
	img := n.quorum.Image()
	resp := raftmeta.DescribeMirrors(img, req)
	var names []string
	for _, m := range resp.Mirrors {
		if m.ErrorCode == 0 {
			names = append(names, m.MirrorName)
		}
	}
	found := partitionDetails{}
	for _, name := range names {
		for _, ps := range n.localMirrorPartitions(ctx, name) {
			found.add(img, name, ps.Topic, n.cfg.NodeID, partitionDetail(ps))
		}
	}
	scramErrs := map[string]string{}
	skipped := map[string][]mirrormsg.DescribeMirrorsResponseSkippedGroupOffset{}
	for _, name := range names {
		if e := n.syncers.scramSyncStatus(name); e != "" {
			scramErrs[name] = e
		}
		if sk := n.syncers.skippedOffsets(name); len(sk) > 0 {
			skipped[name] = sk
		}
	}
	if !req.LocalOnly && len(names) > 0 {
		n.describeRemote(ctx, img, names, found, scramErrs, skipped)
	}
	for i := range resp.Mirrors {
		m := &resp.Mirrors[i]
		if e, ok := scramErrs[m.MirrorName]; ok {
			m.ScramSyncError = &e
		}
		m.SkippedGroupOffsets = skipped[m.MirrorName]
		m.FailoverMaxLagMs = raftmeta.MirrorFailoverMaxLagMs(img.MirrorConfig(m.MirrorName))
		for j := range m.Topics {
			t := &m.Topics[j]
			if req.LocalOnly {
				t.Partitions = found.local(m.MirrorName, t.TopicName)
				continue
			}
			topic, ok := img.Topics[t.TopicName]
			if !ok {
				continue
			}
			for p := range topic.Partitions {
				d, ok := found[detailKey{m.MirrorName, t.TopicName, int32(p)}]
				if !ok {
					d.detail = mirrormsg.NewDescribeMirrorsResponsePartitionDetail()
					d.detail.PartitionIndex, d.detail.State = int32(p), partition.StateUnknown.String()
				}
				t.Partitions = append(t.Partitions, d.detail)
			}
		}
	}
	return resp
}

// localMirrorPartitions are the partitions of mirror this broker's manager
// drives as their leader, their lag measured against the source now
// (Manager.PartitionsMeasured).
func (n *Node) localMirrorPartitions(ctx context.Context, mirror string) []manager.PartitionStatus {
	if m := n.mirrorManager(); m != nil {
		return m.PartitionsMeasured(ctx, mirror)
	}
	return nil
}

// describeRemote asks every other live broker for the partitions it leads
// and adds them to found, and for the SCRAM sync errors and skipped group
// offsets of the mirrors whose syncer it runs, added to scramErrs and
// skipped.
func (n *Node) describeRemote(ctx context.Context, img *raftmeta.Image, names []string, found partitionDetails, scramErrs map[string]string,
	skipped map[string][]mirrormsg.DescribeMirrorsResponseSkippedGroupOffset) {
	ctx, cancel := context.WithTimeout(ctx, describeFanOutTimeout)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range img.UnfencedBrokers() {
		if id == n.cfg.NodeID {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := mirrormsg.NewPtrDescribeMirrorsRequest()
			req.MirrorNames, req.LocalOnly = names, true
			kresp, err := n.peers.request(ctx, id, req)
			if err != nil {
				n.logger.Warn("a broker did not describe its mirror partitions; they are described as UNKNOWN", "broker", id, "err", err)
				return
			}
			resp := kresp.(*mirrormsg.DescribeMirrorsResponse)
			mu.Lock()
			defer mu.Unlock()
			for _, m := range resp.Mirrors {
				if m.ScramSyncError != nil {
					scramErrs[m.MirrorName] = *m.ScramSyncError
				}
				if len(m.SkippedGroupOffsets) > 0 {
					skipped[m.MirrorName] = m.SkippedGroupOffsets
				}
				for _, t := range m.Topics {
					for _, p := range t.Partitions {
						found.add(img, m.MirrorName, t.TopicName, id, p)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// detailKey names one mirror partition.
type detailKey struct {
	mirror, topic string
	partition     int32
}

// sourcedDetail is a partition's description and the broker that gave it.
type sourcedDetail struct {
	from   int32
	detail mirrormsg.DescribeMirrorsResponsePartitionDetail
}

// partitionDetails are the partitions described so far.
type partitionDetails map[detailKey]sourcedDetail

// add keeps d unless the partition is described already by its leader in
// img (two brokers may both still think they lead it for a moment).
func (f partitionDetails) add(img *raftmeta.Image, mirror, topic string, from int32, d mirrormsg.DescribeMirrorsResponsePartitionDetail) {
	k := detailKey{mirror, topic, d.PartitionIndex}
	if cur, ok := f[k]; ok {
		if p, ok := img.Partition(topic, d.PartitionIndex); ok && p.Leader == cur.from {
			return
		}
	}
	f[k] = sourcedDetail{from: from, detail: d}
}

// local returns the details of one topic, by partition index.
func (f partitionDetails) local(mirror, topic string) []mirrormsg.DescribeMirrorsResponsePartitionDetail {
	var out []mirrormsg.DescribeMirrorsResponsePartitionDetail
	for k, d := range f {
		if k.mirror == mirror && k.topic == topic {
			out = append(out, d.detail)
		}
	}
	sortDetails(out)
	return out
}

func sortDetails(ds []mirrormsg.DescribeMirrorsResponsePartitionDetail) {
	slices.SortFunc(ds, func(a, b mirrormsg.DescribeMirrorsResponsePartitionDetail) int {
		return cmp.Compare(a.PartitionIndex, b.PartitionIndex)
	})
}

// partitionDetail is a manager status as DescribeMirrors describes it.
func partitionDetail(ps manager.PartitionStatus) mirrormsg.DescribeMirrorsResponsePartitionDetail {
	d := mirrormsg.NewDescribeMirrorsResponsePartitionDetail()
	d.PartitionIndex = ps.Partition
	d.SourceOffset = ps.SourceHighWatermark
	d.DestinationOffset = ps.DestinationLogEndOffset
	d.Lag = ps.Lag
	d.State = ps.State.String()
	d.LastMirrorEpoch = ps.LastMirrorEpoch
	d.OffsetsSkipped = ps.OffsetsSkipped
	d.LagMs = ps.LagMs
	d.DestinationHighWatermark = ps.DestinationHighWatermark
	d.CommittedLag = ps.CommittedLag
	if !ps.LagMeasuredAt.IsZero() {
		d.LagMeasuredAtMs = ps.LagMeasuredAt.UnixMilli()
	}
	d.RetryCount = ps.RetryAttempt
	if ps.LastError != "" {
		msg := ps.LastError
		d.ErrorMessage = &msg
	}
	return d
}
