package source

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// Head is the timestamp of the source record at an offset, as MeasureHeads
// read it: with the destination's high watermark as the offset, the time
// of the oldest source record the destination cannot serve yet, whose age
// is the lag in milliseconds (mirror/lag).
type Head struct {
	Offset, Timestamp int64
}

// AgeAt is the age in milliseconds at nowMs of the record at offset, as h
// tells it: -1 when h is about another offset.
func (h Head) AgeAt(offset, nowMs int64) int64 {
	if h.Offset != offset || h.Timestamp < 0 {
		return -1
	}
	return max(0, nowMs-h.Timestamp)
}

// MeasureHeads reads the timestamp of the source record at offsets[tp] for
// each tp, as a consumer would (Fetch, ReplicaID -1, READ_UNCOMMITTED, no
// wait), and keeps it for Head. It is the exact lag in milliseconds,
// asked only for the partitions that lag (mirror/lag), beside the
// fetcher's own fetches, never in their way.
//
// One fetch per partition, with 1 byte as its limits: the source answers
// with the whole first batch (the fetch must make progress, KIP-74) and
// nothing else. A batch cut to the limit is not an answer: the source
// leaves out an incomplete first batch (Kafka's ReplicaManager, fetch v3+),
// so the partitions of one request would each need a whole batch within
// the request's limit. At most headReadsInFlight at a time; ctx bounds
// the whole.
//
// Mirrored batches are byte-identical to the source's, so the
// destination's high watermark is a batch boundary and the batch starts
// at the offset asked: its first timestamp is the record's. When it does
// not (the mirror started inside a batch), the record's own timestamp is
// read from the batch (headTimestamp). A LogAppendTime batch's records
// all have its max timestamp.
//
// Like MeasureLatest, errors are not reported to the driver: a partition
// that is not answered keeps no new head and its lag in milliseconds reads
// unknown. err joins the requests that failed, for the log.
func (c *Cluster) MeasureHeads(ctx context.Context, offsets map[storage.TopicPartition]int64) error {
	if len(offsets) == 0 {
		return nil
	}
	if err := c.ensure(ctx, topicsOf(offsets)); err != nil {
		return err
	}
	subs := c.headFetches(offsets)
	sem := make(chan struct{}, headReadsInFlight)
	var wg sync.WaitGroup
	for _, s := range subs {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				s.err = ctx.Err()
				return
			}
			defer func() { <-sem }()
			s.send(ctx, c)
		})
	}
	wg.Wait()
	var errs []error
	for _, s := range subs {
		if s.err != nil {
			errs = append(errs, fmt.Errorf("broker %d: %w", s.leader, s.err))
			continue
		}
		c.recordHeads(s, offsets)
	}
	return errors.Join(errs...)
}

// headReadsInFlight bounds MeasureHeads' fetches in flight: a mirror with
// many lagging partitions reads their heads a few at a time.
const headReadsInFlight = 4

// headFetches builds MeasureHeads' fetches, one per partition with a
// route to its source leader.
func (c *Cluster) headFetches(offsets map[storage.TopicPartition]int64) []*leaderFetch {
	c.mu.Lock()
	defer c.mu.Unlock()
	var subs []*leaderFetch
	for _, tp := range sortedTPs(offsets) {
		rt := c.routeLocked(tp, c.expected[tp.Topic])
		if rt.err != nil {
			continue
		}
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.ReplicaState.ID, req.ReplicaState.Epoch = -1, -1
		req.IsolationLevel = 0 // what the destination copies: every record
		req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 0, 0, 1
		req.SessionID, req.SessionEpoch = 0, -1
		t := kmsg.NewFetchRequestTopic()
		t.Topic, t.TopicID = tp.Topic, rt.id
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition, p.FetchOffset, p.CurrentLeaderEpoch = tp.Partition, offsets[tp], rt.epoch
		p.LastFetchedEpoch, p.LogStartOffset, p.PartitionMaxBytes = -1, -1, 1
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
		subs = append(subs, &leaderFetch{leader: rt.leader, req: req, routes: map[storage.TopicPartition]route{tp: rt},
			names: map[[16]byte]string{rt.id: tp.Topic}})
	}
	return subs
}

// recordHeads keeps the head a fetch answered; a leader or topic error
// asks the next request to refresh the metadata.
func (c *Cluster) recordHeads(s *leaderFetch, offsets map[storage.TopicPartition]int64) {
	if s.resp.ErrorCode != 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range s.resp.Topics {
		name := t.Topic
		if s.resp.Version >= 13 {
			name = s.names[t.TopicID]
		}
		for _, d := range t.Partitions {
			tp := storage.TopicPartition{Topic: name, Partition: d.Partition}
			off, asked := offsets[tp]
			if _, routed := s.routes[tp]; !asked || !routed {
				continue
			}
			if d.ErrorCode != 0 {
				if isLeaderError(d.ErrorCode) || isTopicError(d.ErrorCode) {
					c.stale = true
				}
				continue
			}
			if ts, ok := headTimestamp(d.RecordBatches, off); ok {
				st := c.statusLocked(tp)
				st.head, st.headSet = Head{Offset: off, Timestamp: ts}, true
			}
		}
	}
}

// headTimestamp is the timestamp of the record at offset in records, a
// fetch answer that starts with the batch holding it: the batch's first
// timestamp when the batch starts there (its max timestamp under
// LogAppendTime, every record's), else the record's own, read from the
// batch (decompressed if need be); that batch's first timestamp when it
// cannot be read (an upper bound on the age).
func headTimestamp(records []byte, offset int64) (int64, bool) {
	b, err := record.ReadBatch(records)
	if err != nil {
		return firstTimestamp(records)
	}
	if b.TimestampType() == record.LogAppendTime || offset <= b.BaseOffset() {
		return batchFirstTimestamp(b), true
	}
	if ts, ok := recordTimestamp(b, offset); ok {
		return ts, true
	}
	return batchFirstTimestamp(b), true
}

// recordTimestamp reads the CreateTime timestamp of the record at offset
// from the whole batch b.
func recordTimestamp(b record.Batch, offset int64) (int64, bool) {
	rr, done, err := record.NewDecompressor().OpenRecords(b, headDecompressLimit)
	if err != nil {
		return -1, false
	}
	defer done()
	for rr.Remaining() > 0 {
		r, err := rr.Next(false)
		if err != nil {
			return -1, false
		}
		if b.BaseOffset()+int64(r.OffsetDelta) >= offset {
			return b.BaseTimestamp() + r.TimestampDelta, true
		}
	}
	return -1, false
}

// headDecompressLimit bounds what reading one record's timestamp may
// decompress: a batch the source accepted (max.message.bytes) inflates to
// far less.
const headDecompressLimit = 64 << 20

// Head returns the last head MeasureHeads read for tp.
func (c *Cluster) Head(tp storage.TopicPartition) (Head, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.status[tp]
	if !ok || !st.headSet {
		return Head{}, false
	}
	return st.head, true
}

// sortedTPs is m's partitions by topic, then partition.
func sortedTPs[V any](m map[storage.TopicPartition]V) []storage.TopicPartition {
	out := keys(m)
	slices.SortFunc(out, func(a, b storage.TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
