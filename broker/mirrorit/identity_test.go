package mirrorit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
)

// Fetch sizes of the identity reader: large enough that a partition of a
// test is read in a few round trips.
const (
	readMaxBytes          = 16 << 20
	readPartitionMaxBytes = 8 << 20
	readAttempts          = 200 // × readRetryBackoff: how long a partition may be unreadable
	readRetryBackoff      = 100 * time.Millisecond
)

// topicLog is one cluster's copy of a topic: its metadata and every batch
// of every partition, from the log start offset to the high watermark.
type topicLog struct {
	id         kadm.TopicID
	partitions map[int32][]record.Batch
	hw         map[int32]int64
	logStart   map[int32]int64
}

// readTopic reads every partition of topic from s with raw Fetch requests
// (READ_UNCOMMITTED, from the log start offset, no fetch session) sent to
// each partition's leader, and returns the batches as the cluster serves
// them.
func readTopic(t testing.TB, ctx context.Context, s *side, topic string) *topicLog {
	t.Helper()
	cl := s.client(t)
	adm := kadm.NewClient(cl)
	td := topicMetadata(t, ctx, s, adm, topic)
	out := &topicLog{id: td.ID, partitions: map[int32][]record.Batch{}, hw: map[int32]int64{}, logStart: map[int32]int64{}}
	for p := range int32(len(td.Partitions)) {
		bs, hw, ls, err := readPartition(ctx, cl, adm, topic, td.ID, p)
		if err != nil {
			t.Fatalf("%s: reading %s/%d: %v", s.name, topic, p, err)
		}
		out.partitions[p], out.hw[p], out.logStart[p] = bs, hw, ls
	}
	return out
}

// topicMetadata is topic's Metadata, retried while the topic is unknown or
// a partition has no leader.
func topicMetadata(t testing.TB, ctx context.Context, s *side, adm *kadm.Client, topic string) kadm.TopicDetail {
	t.Helper()
	var last error
	for range readAttempts {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			td, ok := md.Topics[topic]
			switch {
			case !ok:
				err = fmt.Errorf("topic not in the answer")
			case td.Err != nil:
				err = td.Err
			default:
				for _, pd := range td.Partitions {
					if pd.Err != nil || pd.Leader < 0 {
						err = fmt.Errorf("partition %d: leader %d, %v", pd.Partition, pd.Leader, pd.Err)
					}
				}
			}
			if err == nil {
				return td
			}
		}
		last = err
		if ctx.Err() != nil {
			break
		}
		time.Sleep(readRetryBackoff)
	}
	t.Fatalf("%s: metadata of %s: %v", s.name, topic, last)
	return kadm.TopicDetail{}
}

// partitionLeader is the partition's leader per a fresh Metadata answer.
func partitionLeader(ctx context.Context, adm *kadm.Client, topic string, p int32) (int32, error) {
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return -1, err
	}
	pd, ok := md.Topics[topic].Partitions[p]
	if !ok || pd.Leader < 0 {
		return -1, fmt.Errorf("%s/%d has no leader", topic, p)
	}
	return pd.Leader, pd.Err
}

// readPartition reads one partition from its log start offset to its high
// watermark and returns the batches, the high watermark and the log start
// offset. Retriable errors (leader moved, broker restarting) are retried
// for readAttempts × readRetryBackoff.
func readPartition(ctx context.Context, cl *kgo.Client, adm *kadm.Client, topic string, id kadm.TopicID, p int32) ([]record.Batch, int64, int64, error) {
	var (
		batches  []record.Batch
		off      int64
		hw       int64 = -1
		logStart int64 = -1
		leader   int32 = -1
		failures int
		lastErr  error
	)
	for hw < 0 || off < hw {
		if failures > 0 {
			if failures >= readAttempts {
				return nil, 0, 0, fmt.Errorf("at offset %d after %d attempts: %w", off, failures, lastErr)
			}
			select {
			case <-ctx.Done():
				return nil, 0, 0, fmt.Errorf("at offset %d: %w (last error %v)", off, ctx.Err(), lastErr)
			case <-time.After(readRetryBackoff):
			}
		}
		if leader < 0 {
			var err error
			if leader, err = partitionLeader(ctx, adm, topic, p); err != nil {
				leader, lastErr = -1, err
				failures++
				continue
			}
		}
		rp, err := fetchOnce(ctx, cl, leader, topic, id, p, off)
		if err != nil {
			leader, lastErr = -1, err
			failures++
			continue
		}
		switch {
		case rp.ErrorCode == kerr.OffsetOutOfRange.Code && rp.LogStartOffset > off:
			off = rp.LogStartOffset // the log starts later (DeleteRecords, retention)
			continue
		case rp.ErrorCode == kerr.OffsetOutOfRange.Code:
			// An error answer carries no log start (Kafka's neither): ask.
			if start, err := logStartOffset(ctx, adm, topic, p); err == nil && start > off {
				off = start
				continue
			}
		case rp.ErrorCode != 0:
			leader, lastErr = -1, fmt.Errorf("partition error: %w", kerr.ErrorForCode(rp.ErrorCode))
			failures++
			continue
		}
		if logStart < 0 {
			logStart = rp.LogStartOffset
			off = max(off, logStart)
		}
		hw = rp.HighWatermark
		before := off
		batches, off, err = appendFetched(batches, rp.RecordBatches, off, hw)
		if err != nil {
			return nil, 0, 0, err
		}
		if off == before && off < hw {
			lastErr = fmt.Errorf("no whole batch at offset %d below the high watermark %d", off, hw)
			failures++
			continue
		}
		failures = 0
	}
	return batches, hw, logStart, nil
}

// appendFetched adds the fetched batches below the high watermark.
func appendFetched(dst []record.Batch, buf []byte, off, hw int64) ([]record.Batch, int64, error) {
	all, _, err := AppendBatches(nil, buf, off)
	if err != nil {
		return dst, off, err
	}
	for _, b := range all {
		if b.BaseOffset() >= hw {
			return dst, off, nil
		}
		dst, off = append(dst, b), b.NextOffset()
	}
	return dst, off, nil
}

// fetchOnce sends one Fetch for one partition to broker leader.
func fetchOnce(ctx context.Context, cl *kgo.Client, leader int32, topic string, id kadm.TopicID, p int32, off int64) (kmsg.FetchResponseTopicPartition, error) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = readMaxBytes
	req.IsolationLevel = 0 // READ_UNCOMMITTED: aborted data and markers are compared too
	req.SessionID, req.SessionEpoch = 0, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rpq := kmsg.NewFetchRequestTopicPartition()
	rpq.Partition, rpq.FetchOffset, rpq.PartitionMaxBytes = p, off, readPartitionMaxBytes
	rpq.CurrentLeaderEpoch, rpq.LastFetchedEpoch, rpq.LogStartOffset = -1, -1, -1
	rt.Partitions = append(rt.Partitions, rpq)
	req.Topics = append(req.Topics, rt)
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	kresp, err := cl.Broker(int(leader)).Request(rctx, req)
	if err != nil {
		return kmsg.FetchResponseTopicPartition{}, fmt.Errorf("fetch from broker %d: %w", leader, err)
	}
	resp := kresp.(*kmsg.FetchResponse)
	if resp.ErrorCode != 0 {
		return kmsg.FetchResponseTopicPartition{}, fmt.Errorf("fetch from broker %d: %w", leader, kerr.ErrorForCode(resp.ErrorCode))
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return kmsg.FetchResponseTopicPartition{}, fmt.Errorf("fetch from broker %d: answer for %d topics", leader, len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0], nil
}

// identity reads topic from both sides and compares it partition by
// partition. The two logs are returned for further checks.
func identity(t testing.TB, ctx context.Context, src, dst *side, topic string) (*Report, *topicLog, *topicLog) {
	t.Helper()
	sl := readTopic(t, ctx, src, topic)
	dl := readTopic(t, ctx, dst, topic)
	return compareLogs(topic, sl, dl), sl, dl
}

// compareLogs compares two copies of a topic.
func compareLogs(topic string, sl, dl *topicLog) *Report {
	r := &Report{
		Topic:                 topic,
		Partitions:            len(sl.partitions),
		SourcePartitions:      len(sl.partitions),
		DestinationPartitions: len(dl.partitions),
		SameTopicID:           sl.id == dl.id && sl.id != kadm.TopicID{},
	}
	if !r.SameTopicID {
		r.note("topic id", "source %v, destination %v", sl.id, dl.id)
	}
	for p := range int32(len(sl.partitions)) {
		r.ComparePartition(p, sl.partitions[p], dl.partitions[p])
		if sl.logStart[p] != dl.logStart[p] {
			r.note("log start", "p%d: source %d, destination %d", p, sl.logStart[p], dl.logStart[p])
		}
	}
	return r
}

// records counts the records of a topic's copy.
func (l *topicLog) records() int64 {
	var n int64
	for _, bs := range l.partitions {
		for _, b := range bs {
			n += int64(b.RecordCount())
		}
	}
	return n
}

// batchCount counts the batches of a topic's copy.
func (l *topicLog) batchCount() int {
	n := 0
	for _, bs := range l.partitions {
		n += len(bs)
	}
	return n
}

// logStartOffset is partition p's log start offset (ListOffsets EARLIEST).
func logStartOffset(ctx context.Context, adm *kadm.Client, topic string, p int32) (int64, error) {
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return 0, err
	}
	o, ok := starts.Lookup(topic, p)
	if !ok {
		return 0, fmt.Errorf("no start offset for %s/%d", topic, p)
	}
	return o.Offset, nil
}
