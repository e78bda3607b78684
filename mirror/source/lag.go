package source

import (
	"time"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// LagSample is what the latest fetch answer that carried data said about
// the age of the data it carried, read from the batch headers only (no
// decompression, no extra request): a bound on the lag in milliseconds
// while the fetcher runs and the destination's high watermark has moved
// past the last head read (Head, MeasureHeads: the exact age).
//
// Kafka has no such number for a follower (its lag is in offsets,
// ReplicaFetcherThread); MirrorMaker 2's replication-latency-ms is the
// same idea measured at the sink (MirrorSourceTask: now − record
// timestamp).
type LagSample struct {
	// Offset is the fetch offset of that answer and Timestamp the first
	// timestamp of its first batch (the batch holding Offset): the
	// batch's base timestamp, or its max timestamp when the batch uses
	// LogAppendTime (then every record has that time).
	Offset    int64
	Timestamp int64
	// End is the offset after the answer's last whole batch and
	// EndTimestamp that batch's max timestamp: once the answer is
	// appended (the destination's log end offset is End), the oldest
	// unmirrored record comes after it, so it is at most
	// now − EndTimestamp old.
	End          int64
	EndTimestamp int64
}

// LagMs is the age in milliseconds at now of the oldest record at or after
// leo (mirror/lag passes the destination's high watermark: the first
// record its consumers cannot read yet), as far as s tells (−1 when it
// does not: leo is past what the sample saw, or it saw no timestamp).
// While leo ≤ Offset the data at the fetch offset is not mirrored yet:
// now − Timestamp. Once the answer is appended (Offset < leo ≤ End):
// now − EndTimestamp. The caller reports 0 when the lag in records is 0.
func (s LagSample) LagMs(leo int64, now time.Time) int64 {
	ts := int64(-1)
	switch {
	case leo <= s.Offset:
		ts = s.Timestamp
	case leo <= s.End:
		ts = s.EndTimestamp
	}
	if ts < 0 {
		return -1
	}
	return max(0, now.UnixMilli()-ts)
}

// sampleLag reads the sample of one partition's fetched records at
// fetchOffset; ok is false when they hold no whole batch header.
func sampleLag(records []byte, fetchOffset int64) (LagSample, bool) {
	s := LagSample{Offset: fetchOffset, Timestamp: -1, End: -1, EndTimestamp: -1}
	for pos := 0; pos < len(records); {
		b, err := record.ReadBatch(records[pos:])
		if err != nil {
			// A batch cut by the size limit still has its header (the
			// fetcher core appends up to it).
			if s.End < 0 {
				if ts, ok := firstTimestamp(records[pos:]); ok {
					s.Timestamp = ts
					return s, true
				}
			}
			break
		}
		pos += len(b)
		if s.End < 0 {
			s.Timestamp = batchFirstTimestamp(b)
		}
		s.End, s.EndTimestamp = b.NextOffset(), b.MaxTimestamp()
	}
	return s, s.Timestamp >= 0 || s.End >= 0
}

// batchFirstTimestamp is a whole batch's first timestamp.
func batchFirstTimestamp(b record.Batch) int64 {
	if b.TimestampType() == record.LogAppendTime {
		return b.MaxTimestamp()
	}
	return b.BaseTimestamp()
}

// firstTimestamp reads the first timestamp from a batch header that is
// not followed by its whole batch.
func firstTimestamp(buf []byte) (int64, bool) {
	if len(buf) < record.HeaderSize || int8(buf[magicOffset]) != record.MagicV2 {
		return -1, false
	}
	return batchFirstTimestamp(record.Batch(buf[:record.HeaderSize])), true
}

// magicOffset is where a v2 batch's magic byte is (KIP-98 layout: base
// offset 8, length 4, partition leader epoch 4, then magic).
const magicOffset = 16

// recordLagSample keeps the sample of an answer that carried data.
func (c *Cluster) recordLagSample(tp storage.TopicPartition, fetchOffset int64, records []byte) {
	s, ok := sampleLag(records, fetchOffset)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.statusLocked(tp)
	st.lag, st.lagSet = s, true
}

// Lag returns the lag sample of tp's latest fetch answer with data.
func (c *Cluster) Lag(tp storage.TopicPartition) (LagSample, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.status[tp]
	if !ok || !st.lagSet {
		return LagSample{}, false
	}
	return st.lag, true
}
