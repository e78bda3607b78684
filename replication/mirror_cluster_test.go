package replication

import (
	"bytes"
	"slices"
	"testing"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// rawLog returns the bytes of the whole batches from the log start offset
// to the log end offset.
func rawLog(t *testing.T, l *storage.Log) []byte {
	t.Helper()
	var out []byte
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		info, err := l.Read(off, 1<<20, storage.FetchLogEnd, true)
		if err != nil {
			t.Fatal(err)
		}
		if info.Records.Size == 0 {
			break
		}
		buf := make([]byte, info.Records.Size)
		if err := info.Records.ReadInto(buf); err != nil {
			t.Fatal(err)
		}
		for len(buf) >= record.HeaderSize && record.Batch(buf).Size() <= len(buf) {
			b := record.Batch(buf[:record.Batch(buf).Size()])
			out = append(out, b...)
			off = b.LastOffset() + 1
			buf = buf[b.Size():]
		}
	}
	return out
}

// waitIdentical waits until every replica's log has the leader's bounds
// and bytes, and the leader's high watermark is its log end.
func (c *wireCluster) waitIdentical(t *testing.T, what, topic string) {
	t.Helper()
	leader := c.partition(1, topic).Log()
	eventually(t, what, func() bool {
		if leader.HighWatermark() != leader.LogEndOffset() {
			return false
		}
		want := rawLog(t, leader)
		for _, id := range []int32{2, 3} {
			l := c.partition(id, topic).Log()
			if l.LogEndOffset() != leader.LogEndOffset() || !bytes.Equal(rawLog(t, l), want) {
				return false
			}
		}
		return true
	})
}

// The mirror's handle on a 3-replica leader: its appends reach the
// followers; TruncateTo and TruncateFullyAndStartAt on the leader are
// found by the followers through their fetches (DivergingEpoch, and
// OFFSET_OUT_OF_RANGE), which end byte-identical with the leader; the
// high watermark never passes what the ISR holds, and ReplicasAt sees the
// followers at the truncation point.
func TestMirrorLeaderTruncationReachesFollowers(t *testing.T) {
	c := newWireCluster(t, 3, 10_000)
	c.createTopic("m", []int32{1, 2, 3}, []int32{1, 2, 3}, 1)
	c.change("m", func(p *raftmeta.Partition) { p.LeaderEpoch = 5 })
	tp := storage.TopicPartition{Topic: "m"}
	ml := mustMirrorLeader(t, c.nodes[1].rm, tp, 5)
	leader := c.partition(1, "m")

	if _, err := ml.AppendAsFollower(sourceBatches(t, "a", "0-9:e1 10-19:e3 20-29:e4")); err != nil {
		t.Fatal(err)
	}
	c.waitIdentical(t, "the followers to copy the mirror's appends", "m")
	eventually(t, "ReplicasAt(30)", func() bool { return ml.ReplicasAt(30, false) && ml.ReplicasAt(30, true) })

	// Truncate to the end of epoch 3: the followers, at 30 in epoch 4,
	// are told epoch 4 is gone here and truncate to where epoch 3 ends.
	if ok, err := ml.TruncateTo(20); !ok || err != nil {
		t.Fatalf("truncate: %v %v", ok, err)
	}
	if leader.HighWatermark() != 20 || leader.Log().LogEndOffset() != 20 {
		t.Fatalf("after the truncation: HW %d LEO %d", leader.HighWatermark(), leader.Log().LogEndOffset())
	}
	eventually(t, "ReplicasAt(20)", func() bool { return ml.ReplicasAt(20, false) })
	for _, id := range []int32{2, 3} {
		if l := c.partition(id, "m").Log(); l.LogEndOffset() != 20 {
			t.Fatalf("node %d at %d when ReplicasAt(20)", id, l.LogEndOffset())
		}
	}
	if _, err := ml.AppendAsFollower(sourceBatches(t, "b", "20-24:e4")); err != nil {
		t.Fatal(err)
	}
	c.waitIdentical(t, "the followers to take the new data after the truncation", "m")
	if got := readAll(t, c.partition(3, "m").Log()); len(got) != 25 || got[19] != "19:a-19" || got[20] != "20:b-20" {
		t.Fatalf("node 3's log after the truncation: %v", got)
	}

	// Restart the leader's log past the followers' ends: their fetches are
	// out of range and they restart there too.
	if err := ml.TruncateFullyAndStartAt(40); err != nil {
		t.Fatal(err)
	}
	if _, err := ml.AppendAsFollower(sourceBatches(t, "c", "40-44:e5")); err != nil {
		t.Fatal(err)
	}
	c.waitIdentical(t, "the followers to restart at 40", "m")
	for _, id := range []int32{2, 3} {
		if l := c.partition(id, "m").Log(); l.LogStartOffset() != 40 {
			t.Fatalf("node %d starts at %d", id, l.LogStartOffset())
		}
	}
	eventually(t, "ReplicasAt(45)", func() bool { return ml.ReplicasAt(45, true) })
	if isr := c.isr("m"); !slices.Equal(isr, []int32{1, 2, 3}) {
		t.Fatalf("ISR %v", isr)
	}
}
