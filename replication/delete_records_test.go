package replication

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage"
)

func deleteRecordsReq(topic string, offsets map[int32]int64, order ...int32) *kmsg.DeleteRecordsRequest {
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Version, req.TimeoutMillis = 2, 5000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	for _, p := range order {
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Partition, rp.Offset = p, offsets[p]
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

func TestDeleteRecords(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{partitions: 4})
	h.createTopic("compacted", topicSpec{configs: map[string]string{"cleanup.policy": "compact"}})
	h.createTopic("__consumer_offsets", topicSpec{})
	for p := int32(0); p < 4; p++ {
		h.mustProduce("t", p, "a", 5, 0)
	}
	resp := h.rm.DeleteRecords(context.Background(), deleteRecordsReq("t",
		map[int32]int64{0: 2, 1: -1, 2: 6, 3: -5}, 0, 1, 2, 3))
	got := resp.Topics[0].Partitions
	want := []struct {
		code int16
		low  int64
	}{{0, 2}, {0, 5}, {kerr.OffsetOutOfRange.Code, -1}, {kerr.OffsetOutOfRange.Code, -1}}
	for i, w := range want {
		if got[i].Partition != int32(i) || got[i].ErrorCode != w.code || got[i].LowWatermark != w.low {
			t.Fatalf("partition %d: error %d low %d, want %d %d", i, got[i].ErrorCode, got[i].LowWatermark, w.code, w.low)
		}
	}
	// Records below the new log start offset are gone for readers.
	if res := decodeFetch(t, h.fetch(fetchReq(12, fp("t", 0, 1))))[0]; res.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("fetch below the log start: error %d", res.ErrorCode)
	}
	if res := decodeFetch(t, h.fetch(fetchReq(12, fp("t", 0, 2))))[0]; res.ErrorCode != 0 || res.LogStartOffset != 2 {
		t.Fatalf("fetch at the log start: %+v", res.FetchResponseTopicPartition)
	}
	lo := h.rm.ListOffsets(context.Background(), listOffsetsReq(9, -1, 0, "t", lop(0, -2)))
	if sp := lo.Topics[0].Partitions[0]; sp.Offset != 2 {
		t.Fatalf("earliest after delete: %d", sp.Offset)
	}
	// Deleting below the current log start is a no-op that reports it.
	resp = h.rm.DeleteRecords(context.Background(), deleteRecordsReq("t", map[int32]int64{0: 1}, 0))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != 0 || sp.LowWatermark != 2 {
		t.Fatalf("delete below the log start: %+v", sp)
	}

	for _, tc := range []struct {
		topic string
		code  int16
	}{
		{"compacted", kerr.PolicyViolation.Code},
		{"__consumer_offsets", kerr.InvalidTopicException.Code},
		{"nope", kerr.UnknownTopicOrPartition.Code},
	} {
		resp := h.rm.DeleteRecords(context.Background(), deleteRecordsReq(tc.topic, map[int32]int64{0: 0}, 0))
		if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != tc.code || sp.LowWatermark != -1 {
			t.Fatalf("%s: %+v", tc.topic, sp)
		}
	}
}

// With a follower, DeleteRecords waits until the follower's log start
// offset (reported in its fetches) reaches the target.
func TestDeleteRecordsWaitsForReplicas(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{replicas: []int32{localNode, 2}})
	h.mustProduce("t", 0, "a", 5, 0)
	follow := func(logStart int64) {
		p := fp("t", 0, 5)
		req := fetchReqReplica(2, p)
		req.Topics[0].Partitions[0].LogStartOffset = logStart
		h.fetch(req)
	}
	follow(0) // HW 5, follower log start 0
	req := deleteRecordsReq("t", map[int32]int64{0: 3}, 0)
	req.TimeoutMillis = 30
	if sp := h.rm.DeleteRecords(context.Background(), req).Topics[0].Partitions[0]; sp.ErrorCode != kerr.RequestTimedOut.Code || sp.LowWatermark != 0 {
		t.Fatalf("no follower progress: %+v", sp)
	}
	req.TimeoutMillis = 10000
	done := make(chan kmsg.DeleteRecordsResponseTopicPartition, 1)
	go func() { done <- h.rm.DeleteRecords(context.Background(), req).Topics[0].Partitions[0] }()
	time.Sleep(10 * time.Millisecond)
	follow(3)
	select {
	case sp := <-done:
		if sp.ErrorCode != 0 || sp.LowWatermark != 3 {
			t.Fatalf("after the follower caught up: %+v", sp)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the follower's progress did not complete DeleteRecords")
	}
}

// A coordinator prunes its internal topic with DeleteRecordsCoordinator,
// which DeleteRecords refuses for clients: the log start moves, up to the
// high watermark and not past it.
func TestDeleteRecordsCoordinator(t *testing.T) {
	h := newHarness(t)
	h.createTopic("__share_group_state", topicSpec{})
	tp := storage.TopicPartition{Topic: "__share_group_state", Partition: 0}
	if _, err := h.rm.AppendCoordinator(context.Background(), tp, h.batch("a", 5)); err != nil {
		t.Fatal(err)
	}
	if err := h.rm.DeleteRecordsCoordinator(tp, 3); err != nil {
		t.Fatal(err)
	}
	p, _ := h.rm.Partition(tp)
	if start := p.Log().LogStartOffset(); start != 3 {
		t.Fatalf("log start %d after pruning below 3", start)
	}
	if err := h.rm.DeleteRecordsCoordinator(tp, 6); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Fatalf("pruning past the high watermark: %v", err)
	}
	if err := h.rm.DeleteRecordsCoordinator(storage.TopicPartition{Topic: "nope"}, 1); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("pruning a partition not led here: %v", err)
	}
}
