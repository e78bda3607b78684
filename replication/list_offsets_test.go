package replication

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage/record"
)

func listOffsetsReq(version int16, replicaID int32, isolation int8, topic string, parts ...kmsg.ListOffsetsRequestTopicPartition) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version, req.ReplicaID, req.IsolationLevel = version, replicaID, isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic, rt.Partitions = topic, parts
	req.Topics = append(req.Topics, rt)
	return req
}

func lop(partition int32, ts int64) kmsg.ListOffsetsRequestTopicPartition {
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Partition, p.Timestamp, p.CurrentLeaderEpoch = partition, ts, -1
	return p
}

func TestListOffsets(t *testing.T) {
	h := newHarness(t)
	// Node 2 in the ISR lets the HW lag the LEO.
	h.createTopic("t", topicSpec{replicas: []int32{localNode, 2}, epoch: 2})
	base := h.clock.Now().UnixMilli()
	produceAt := func(ts int64, n int) {
		b := h.batchSpec(record.BatchSpec{BaseTimestamp: ts}, "v", n, 0)
		if sp := h.produce(1, "t", 0, b); sp.ErrorCode != 0 {
			t.Fatal(sp.ErrorCode)
		}
	}
	produceAt(base, 2)        // offsets 0-1 at base, base+1
	produceAt(base+5000, 2)   // offsets 2-3 at base+5000, +5001
	produceAt(base-100000, 1) // offset 4, an old timestamp
	follower := fetchReq(12, fp("t", 0, 4))
	follower.ReplicaID = 2
	h.fetch(follower) // HW 4, LEO 5
	p := h.partition("t", 0)
	if p.HighWatermark() != 4 || p.Log().LogEndOffset() != 5 {
		t.Fatalf("setup: HW %d LEO %d", p.HighWatermark(), p.Log().LogEndOffset())
	}
	if _, err := p.appendRecordsToLeader(h.batchSpec(record.BatchSpec{ProducerID: 9, ProducerEpoch: 0, BaseSequence: 0, Transactional: true, BaseTimestamp: base}, "txn", 1, 0), record.OriginClient, 1); err != nil {
		t.Fatal(err)
	}
	h.fetch(fetchReqReplica(2, fp("t", 0, 6))) // HW 6, LSO 5 (open transaction at 5)

	for _, tc := range []struct {
		name      string
		version   int16
		replica   int32
		isolation int8
		ts        int64
		code      int16
		offset    int64
		tsOut     int64
		epoch     int32
	}{
		{"latest consumer", 9, -1, 0, -1, 0, 6, -1, 2},
		{"latest read_committed", 9, -1, 1, -1, 0, 5, -1, 2},
		{"latest replica", 9, 2, 0, -1, 0, 6, -1, 2},
		{"earliest", 9, -1, 0, -2, 0, 0, -1, 2},
		{"max timestamp", 9, -1, 0, -3, 0, 3, base + 5001, 2},
		{"max timestamp before v7", 6, -1, 0, -3, kerr.UnsupportedVersion.Code, -1, -1, -1},
		{"earliest local", 9, -1, 0, -4, 0, 0, -1, 2},
		{"earliest local before v8", 7, -1, 0, -4, kerr.UnsupportedVersion.Code, -1, -1, -1},
		{"latest tiered", 9, -1, 0, -5, 0, -1, -1, -1},
		{"latest tiered before v9", 8, -1, 0, -5, kerr.UnsupportedVersion.Code, -1, -1, -1},
		{"unknown special", 9, -1, 0, -7, kerr.UnsupportedVersion.Code, -1, -1, -1},
		{"by timestamp", 9, -1, 0, base + 1, 0, 1, base + 1, 2},
		{"by timestamp between batches", 9, -1, 0, base + 2, 0, 2, base + 5000, 2},
		{"after every timestamp", 9, -1, 0, base + 999999, 0, -1, -1, -1},
	} {
		resp := h.rm.ListOffsets(context.Background(), listOffsetsReq(tc.version, tc.replica, tc.isolation, "t", lop(0, tc.ts)))
		sp := resp.Topics[0].Partitions[0]
		if sp.ErrorCode != tc.code || sp.Offset != tc.offset || sp.Timestamp != tc.tsOut || sp.LeaderEpoch != tc.epoch {
			t.Fatalf("%s: got err %d offset %d ts %d epoch %d, want %d %d %d %d", tc.name, sp.ErrorCode, sp.Offset, sp.Timestamp, sp.LeaderEpoch, tc.code, tc.offset, tc.tsOut, tc.epoch)
		}
	}
	// A timestamp found at or past what a consumer may read answers -1.
	h.mustProduce("t", 0, "unreplicated", 1, 6)
	future := h.clock.Now().Add(time.Minute).UnixMilli()
	b := h.batchSpec(record.BatchSpec{BaseTimestamp: future}, "late", 1, 0)
	h.produce(1, "t", 0, b) // offset 7, beyond the HW (6)
	resp := h.rm.ListOffsets(context.Background(), listOffsetsReq(9, -1, 0, "t", lop(0, future)))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != 0 || sp.Offset != -1 {
		t.Fatalf("timestamp past the HW: %+v", sp)
	}
	resp = h.rm.ListOffsets(context.Background(), listOffsetsReq(9, 2, 0, "t", lop(0, future)))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != 0 || sp.Offset != 7 {
		t.Fatalf("a replica sees up to the LEO: %+v", sp)
	}
}

func TestListOffsetsErrors(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{epoch: 3})
	h.createTopic("elsewhere", topicSpec{replicas: []int32{localNode, 2}, leader: 2, epoch: 1})
	fenced := lop(0, -1)
	fenced.CurrentLeaderEpoch = 2
	ahead := lop(0, -1)
	ahead.CurrentLeaderEpoch = 4
	resp := h.rm.ListOffsets(context.Background(), listOffsetsReq(9, -1, 0, "t", lop(0, -1), lop(0, -2), fenced, lop(5, -1)))
	got := resp.Topics[0].Partitions
	if got[0].ErrorCode != kerr.InvalidRequest.Code || got[1].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("duplicates: %+v", got[:2])
	}
	if got[2].ErrorCode != kerr.InvalidRequest.Code || got[3].ErrorCode != kerr.UnknownTopicOrPartition.Code || got[3].Offset != -1 {
		t.Fatalf("%+v", got[2:])
	}
	resp = h.rm.ListOffsets(context.Background(), listOffsetsReq(9, -1, 0, "t", fenced))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("fenced: %+v", sp)
	}
	resp = h.rm.ListOffsets(context.Background(), listOffsetsReq(9, -1, 0, "t", ahead))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != kerr.UnknownLeaderEpoch.Code {
		t.Fatalf("unknown epoch: %+v", sp)
	}
	resp = h.rm.ListOffsets(context.Background(), listOffsetsReq(9, -1, 0, "elsewhere", lop(0, -1)))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("follower replica: %+v", sp)
	}
	// The debugging replica id reads a follower replica.
	resp = h.rm.ListOffsets(context.Background(), listOffsetsReq(9, -2, 0, "elsewhere", lop(0, -1)))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != 0 || sp.Offset != 0 {
		t.Fatalf("debugging replica: %+v", sp)
	}
}

// After an election the new leader's HW may lag the epoch start: consumers
// get OFFSET_NOT_AVAILABLE (v5+) rather than an offset that could go back.
func TestListOffsetsLaggingHighWatermark(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{replicas: []int32{localNode, 2}, leader: 2, epoch: 1})
	p := h.partition("t", 0)
	// As a follower, this node got offsets 0-2 from the leader.
	b := h.batchSpec(record.BatchSpec{}, "r", 3, 0)
	record.Batch(b).SetPartitionLeaderEpoch(1)
	record.Batch(b).SetCRC()
	if _, err := p.Log().AppendAsFollower(b); err != nil {
		t.Fatal(err)
	}
	h.changePartition("t", 0, func(pp *raftmeta.Partition) { pp.Leader, pp.LeaderEpoch = localNode, 2 })
	if p.HighWatermark() != 0 {
		t.Fatalf("HW %d, want 0 (node 2 has not fetched in the new epoch)", p.HighWatermark())
	}
	resp := h.rm.ListOffsets(context.Background(), listOffsetsReq(9, -1, 0, "t", lop(0, -1)))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != kerr.OffsetNotAvailable.Code {
		t.Fatalf("lagging HW: %+v", sp)
	}
	resp = h.rm.ListOffsets(context.Background(), listOffsetsReq(4, -1, 0, "t", lop(0, -1)))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != kerr.LeaderNotAvailable.Code {
		t.Fatalf("lagging HW before v5: %+v", sp)
	}
	h.fetch(fetchReqReplica(2, fp("t", 0, 3)))
	resp = h.rm.ListOffsets(context.Background(), listOffsetsReq(9, -1, 0, "t", lop(0, -1)))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != 0 || sp.Offset != 3 || sp.LeaderEpoch != 2 {
		t.Fatalf("caught up: %+v", sp)
	}
}

func fetchReqReplica(replica int32, parts ...fetchPart) *kmsg.FetchRequest {
	req := fetchReq(12, parts...)
	req.ReplicaID = replica
	return req
}

func offsetForEpochReq(topic string, partition, current, epoch int32) *kmsg.OffsetForLeaderEpochRequest {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version, req.ReplicaID = 4, -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = partition, current, epoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func TestOffsetForLeaderEpoch(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{epoch: 1})
	h.createTopic("elsewhere", topicSpec{replicas: []int32{localNode, 2}, leader: 2})
	h.mustProduce("t", 0, "a", 3, 0)
	h.changePartition("t", 0, func(p *raftmeta.Partition) { p.LeaderEpoch = 3 })
	h.mustProduce("t", 0, "b", 2, 3)
	for _, tc := range []struct {
		name                  string
		topic                 string
		current, epoch, wantE int32
		wantEnd               int64
		code                  int16
	}{
		{"latest epoch", "t", -1, 3, 3, 5, 0},
		{"earlier epoch", "t", -1, 1, 1, 3, 0},
		{"an epoch between", "t", -1, 2, 1, 3, 0},
		{"above every epoch", "t", -1, 9, -1, -1, 0},
		{"current epoch matches", "t", 3, 1, 1, 3, 0},
		{"fenced", "t", 2, 1, -1, -1, kerr.FencedLeaderEpoch.Code},
		{"unknown epoch", "t", 4, 1, -1, -1, kerr.UnknownLeaderEpoch.Code},
		{"not leader", "elsewhere", -1, 0, -1, -1, kerr.NotLeaderForPartition.Code},
		{"unknown topic", "nope", -1, 0, -1, -1, kerr.UnknownTopicOrPartition.Code},
	} {
		resp := h.rm.OffsetForLeaderEpoch(context.Background(), offsetForEpochReq(tc.topic, 0, tc.current, tc.epoch))
		sp := resp.Topics[0].Partitions[0]
		if sp.ErrorCode != tc.code || sp.LeaderEpoch != tc.wantE || sp.EndOffset != tc.wantEnd {
			t.Fatalf("%s: got err %d %d/%d, want %d %d/%d", tc.name, sp.ErrorCode, sp.LeaderEpoch, sp.EndOffset, tc.code, tc.wantE, tc.wantEnd)
		}
	}
}
