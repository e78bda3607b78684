package admin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
)

// Truncation is one partition's answer to a dry-run start: what the start's
// log alignment (the last-mirrored-epoch walk of a failback) would
// truncate. Nothing has changed.
type Truncation struct {
	Partition int32 `json:"partition"`
	// LastMirroredEpoch is the LME the source cluster recorded, −1 if none:
	// then the whole log would go (KIP-1279's first-time rule).
	LastMirroredEpoch int32 `json:"last_mirrored_epoch"`
	// DivergenceOffset is the offset the log would be truncated to; the
	// offsets from it up to LogEndOffset would go.
	DivergenceOffset int64 `json:"divergence_offset"`
	LogStartOffset   int64 `json:"log_start_offset"`
	LogEndOffset     int64 `json:"log_end_offset"`
	// RefusedWithoutTruncateExisting: the start would be refused unless
	// --truncate-existing (the source shares none of the records).
	RefusedWithoutTruncateExisting bool `json:"refused_without_truncate_existing"`
}

// Offsets is how many offsets would be truncated.
func (t Truncation) Offsets() int64 { return max(t.LogEndOffset-t.DivergenceOffset, 0) }

// TruncatedRecords are the batches a partition holds in [From, To): for a
// dry-run, exactly those its truncation would delete.
type TruncatedRecords struct {
	From, To int64
	// Data is the batches as the broker stores them (Kafka record batches,
	// magic 2), concatenated: the bytes of a Kafka .log segment.
	Data    []byte `json:"-"`
	Bytes   int    // len(Data)
	Batches int
	// Records counts the records of the data batches; control batches
	// (transaction markers, MIRROR_PID_RESET) are in Batches only.
	Records int64
	// FirstOffset and LastOffset are the first and last offsets the
	// batches hold (−1 when there is none).
	FirstOffset, LastOffset int64
	// FirstTimestamp is the first batch's first timestamp, LastTimestamp
	// the last batch's max timestamp (ms since the epoch; −1 when none).
	FirstTimestamp, LastTimestamp int64
}

// ReadBatches reads the whole batches of topic's partition that start at
// or after from and below to, byte for byte as stored, by Fetch
// (READ_UNCOMMITTED, as a consumer) from the partition leader. It reads
// up to the high watermark: to must not exceed it.
func (c *Client) ReadBatches(ctx context.Context, topic string, partition int32, from, to int64) (TruncatedRecords, error) {
	out := TruncatedRecords{From: from, To: to, FirstOffset: -1, LastOffset: -1, FirstTimestamp: -1, LastTimestamp: -1}
	if from >= to {
		return out, nil
	}
	next := from
	for next < to {
		buf, err := c.fetchOnce(ctx, topic, partition, next)
		if err != nil {
			return out, fmt.Errorf("reading %s-%d at offset %d: %w", topic, partition, next, err)
		}
		progressed := false
		for pos := 0; pos < len(buf); {
			b, err := record.ReadBatch(buf[pos:])
			if errors.Is(err, io.ErrUnexpectedEOF) {
				break // cut by the size limit: the next fetch starts at it
			}
			if err != nil {
				return out, fmt.Errorf("reading %s-%d: batch at byte %d of the fetch at offset %d: %w", topic, partition, pos, next, err)
			}
			pos += len(b)
			if b.NextOffset() <= next || b.BaseOffset() >= to {
				continue // wholly before the range (read already), or past it
			}
			out.add(b)
			next = b.NextOffset()
			progressed = true
		}
		if !progressed {
			break // nothing more below to: the rest is beyond the high watermark
		}
	}
	out.Bytes = len(out.Data)
	if next < to {
		return out, fmt.Errorf("reading %s-%d: the batches end at offset %d, before %d (offsets above the high watermark are not readable)", topic, partition, next, to)
	}
	return out, nil
}

func (r *TruncatedRecords) add(b record.Batch) {
	if r.Batches == 0 {
		r.FirstOffset, r.FirstTimestamp = b.BaseOffset(), b.BaseTimestamp()
	}
	r.Batches++
	r.LastOffset, r.LastTimestamp = b.LastOffset(), b.MaxTimestamp()
	if !b.IsControl() {
		r.Records += int64(b.RecordCount())
	}
	r.Data = append(r.Data, b...)
}

// fetchOnce is one Fetch of the partition at offset from its leader; it
// returns the partition's record bytes.
func (c *Client) fetchOnce(ctx context.Context, topic string, partition int32, offset int64) ([]byte, error) {
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(ctx, c.cl)
	if err != nil {
		return nil, err
	}
	if len(mresp.Topics) != 1 {
		return nil, fmt.Errorf("metadata: %d topics in the answer", len(mresp.Topics))
	}
	t := mresp.Topics[0]
	if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	leader := int32(-1)
	for _, p := range t.Partitions {
		if p.Partition == partition {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("metadata: %w", err)
			}
			leader = p.Leader
		}
	}
	if leader < 0 {
		return nil, fmt.Errorf("metadata: no leader for partition %d", partition)
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 0, 1, 8<<20
	req.IsolationLevel = 0 // READ_UNCOMMITTED: every batch, open transactions too
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, t.TopicID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = partition, offset, -1, -1, -1
	rp.PartitionMaxBytes = 8 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := c.cl.Broker(int(leader)).Request(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	for _, rt := range resp.Topics {
		for _, p := range rt.Partitions {
			if p.Partition != partition {
				continue
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, err
			}
			return p.RecordBatches, nil
		}
	}
	return nil, fmt.Errorf("the fetch answer left partition %d out", partition)
}

// SegmentName is where WriteSegment puts topic's partition's batches
// under dir: Kafka's log layout, DIR/TOPIC-PARTITION/ then the first
// offset in 20 digits and ".log", so kafka-dump-log.sh (and any Kafka
// segment reader) reads the file as it is.
func SegmentName(dir, topic string, partition int32, firstOffset int64) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%d", topic, partition), fmt.Sprintf("%020d.log", firstOffset))
}

// WriteSegment writes the batches to SegmentName and syncs it. The file
// is the batches byte for byte, one after another, as in a Kafka .log
// segment: no header, no index.
func WriteSegment(dir, topic string, partition int32, r TruncatedRecords) (string, error) {
	name := SegmentName(dir, topic, partition, max(r.FirstOffset, r.From))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return "", err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	if _, err = f.Write(r.Data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	return name, nil
}

// ReadSegment reads a file WriteSegment wrote (or any Kafka .log segment):
// its batches, each checked (length, magic 2, CRC).
func ReadSegment(name string) ([]record.Batch, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out []record.Batch
	it := record.NewIter(data)
	for b, ok := it.Next(); ok; b, ok = it.Next() {
		if !b.ValidCRC() {
			return out, fmt.Errorf("%s: batch at offset %d: CRC mismatch", name, b.BaseOffset())
		}
		out = append(out, record.Batch(bytes.Clone(b)))
	}
	if err := it.Err(); err != nil {
		return out, fmt.Errorf("%s: at byte %d: %w", name, it.Pos(), err)
	}
	return out, nil
}
