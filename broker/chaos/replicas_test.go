package chaos

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// logBytes is the raw batches of l holding offsets in [from, to), read
// the way a follower fetch reads them (storage.Log.Read up to the log end
// offset, whole batches only).
func logBytes(l *storage.Log, from, to int64) ([]byte, error) {
	return readBatches(l, from, to, 1<<20)
}

// readBatches is logBytes reading at most maxBytes at a time (a whole
// batch when it is larger).
func readBatches(l *storage.Log, from, to int64, maxBytes int32) ([]byte, error) {
	var out []byte
	for off := from; off < to; {
		info, err := l.Read(off, maxBytes, storage.FetchLogEnd, true)
		if err != nil {
			return out, fmt.Errorf("read at %d: %w", off, err)
		}
		if info.Records.Size == 0 {
			return out, fmt.Errorf("read at %d: no data below %d (log end %d)", off, to, info.LogEndOffset)
		}
		buf := make([]byte, info.Records.Size)
		if err := info.Records.ReadInto(buf); err != nil {
			return out, err
		}
		// The slice may end inside a batch (as a fetch's does): stop at
		// the first incomplete one and read on from there.
		progressed := false
		for pos := 0; pos < len(buf); {
			b, err := record.ReadBatch(buf[pos:])
			if errors.Is(err, io.ErrUnexpectedEOF) {
				break
			}
			if err != nil {
				return out, fmt.Errorf("batch at byte %d of the read at %d: %w", pos, off, err)
			}
			pos += len(b)
			if b.BaseOffset() >= to {
				return out, nil
			}
			if b.LastOffset() < off {
				continue
			}
			out = append(out, b...)
			off = b.NextOffset()
			progressed = true
		}
		if !progressed {
			return out, fmt.Errorf("read at %d returned no whole batch", off)
		}
	}
	return out, nil
}

// batchSummary is one batch's identity: where it sits and its checksum.
type batchSummary struct {
	base, last int64
	epoch      int32
	crc        uint32
}

// batches lists the batches of l holding offsets in [from, to).
func batches(l *storage.Log, from, to int64) ([]batchSummary, error) {
	raw, err := logBytes(l, from, to)
	if err != nil {
		return nil, err
	}
	var out []batchSummary
	it := record.NewIter(raw)
	for b, ok := it.Next(); ok; b, ok = it.Next() {
		out = append(out, batchSummary{base: b.BaseOffset(), last: b.LastOffset(), epoch: b.PartitionLeaderEpoch(), crc: b.CRC()})
	}
	return out, it.Err()
}

// partitionLog is node id's log of topic-partition p (nil if the node is
// down or has none).
func partitionLog(c *brokertest.Cluster, id int32, topic string, p int32) *storage.Log {
	n := c.Node(id).Node()
	if n == nil {
		return nil
	}
	l, ok := n.LogManager().Log(storage.TopicPartition{Topic: topic, Partition: p})
	if !ok {
		return nil
	}
	return l
}

// replicaState describes every replica's offsets of a partition, for
// failure messages.
func replicaState(c *brokertest.Cluster, topic string, p int32) string {
	img := c.Image()
	part, ok := img.Partition(topic, p)
	if !ok {
		return fmt.Sprintf("%s-%d not in the image", topic, p)
	}
	s := fmt.Sprintf("%s-%d leader %d epoch %d isr %v:", topic, p, part.Leader, part.LeaderEpoch, part.ISR)
	for _, id := range part.Replicas {
		if l := partitionLog(c, id, topic, p); l != nil {
			s += fmt.Sprintf(" node %d [start %d hw %d leo %d]", id, l.LogStartOffset(), l.HighWatermark(), l.LogEndOffset())
		} else {
			s += fmt.Sprintf(" node %d [no log]", id)
		}
	}
	return s
}

// caughtUp reports whether every replica of p has the leader's log end
// offset and high watermark and the leader has committed its whole log.
func caughtUp(c *brokertest.Cluster, topic string, p int32) bool {
	part, ok := c.Image().Partition(topic, p)
	if !ok || part.Leader < 0 {
		return false
	}
	leader := partitionLog(c, part.Leader, topic, p)
	if leader == nil || leader.HighWatermark() != leader.LogEndOffset() {
		return false
	}
	for _, id := range part.Replicas {
		l := partitionLog(c, id, topic, p)
		if l == nil || l.LogEndOffset() != leader.LogEndOffset() || l.HighWatermark() != leader.HighWatermark() {
			return false
		}
	}
	return true
}

// compareReplicas waits until every replica of every partition of topic
// has caught up with its leader, then compares each follower's log with
// the leader's byte for byte up to the leader's high watermark. It
// returns the number of divergent (partition, follower) pairs and logs
// each difference.
func compareReplicas(t testing.TB, c *brokertest.Cluster, topic string, partitions int32) (divergent int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for p := range partitions {
		for !caughtUp(c, topic, p) {
			if time.Now().After(deadline) {
				t.Fatalf("replicas never caught up with their leader: %s", replicaState(c, topic, p))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for p := range partitions {
		part, _ := c.Image().Partition(topic, p)
		leader := partitionLog(c, part.Leader, topic, p)
		hw := leader.HighWatermark()
		want, err := logBytes(leader, leader.LogStartOffset(), hw)
		if err != nil {
			t.Fatalf("%s-%d: leader %d: %v", topic, p, part.Leader, err)
		}
		for _, id := range part.Replicas {
			if id == part.Leader {
				continue
			}
			l := partitionLog(c, id, topic, p)
			got, err := logBytes(l, leader.LogStartOffset(), hw)
			switch {
			case err != nil:
				divergent++
				t.Errorf("%s-%d: node %d: %v", topic, p, id, err)
			case l.LogStartOffset() != leader.LogStartOffset() || !bytes.Equal(got, want):
				divergent++
				t.Errorf("%s-%d: node %d differs from leader %d below hw %d: %s", topic, p, id, part.Leader, hw, firstDifference(leader, l, hw))
			}
		}
	}
	return divergent
}

// firstDifference names the first batch where two logs differ.
func firstDifference(a, b *storage.Log, to int64) string {
	ba, errA := batches(a, a.LogStartOffset(), to)
	bb, errB := batches(b, b.LogStartOffset(), to)
	if errA != nil || errB != nil {
		return fmt.Sprintf("listing batches: %v / %v", errA, errB)
	}
	for i := range min(len(ba), len(bb)) {
		if ba[i] != bb[i] {
			return fmt.Sprintf("batch %d: %+v vs %+v", i, ba[i], bb[i])
		}
	}
	return fmt.Sprintf("%d vs %d batches", len(ba), len(bb))
}
