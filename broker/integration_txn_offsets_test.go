package broker_test

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/coordinator"
)

// TestTxnOffsetCommitOverTheWire commits a group's offsets in a
// transaction the way a transactional client and its transaction
// coordinator do, with raw kmsg requests through kgo (which routes
// TxnOffsetCommit and OffsetFetch to the group's coordinator and
// WriteTxnMarkers to the __consumer_offsets partition's leader): the
// offsets stay invisible, and UNSTABLE_OFFSET_COMMIT to a RequireStable
// fetch, until the COMMIT marker; the next transaction's offsets, still
// pending after a restart of the broker, are dropped by its ABORT marker.
//
// The transaction coordinator is not wired into the broker yet, so
// nothing checks the transaction itself: the producer id comes from a
// plain InitProducerId.
func TestTxnOffsetCommitOverTheWire(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	const topic, group = "txn-offsets-in", "etl"
	createTopic(t, adm, topic, 2)
	cl := b.Client(t)
	ctx := testCtx(t, 30*time.Second)

	initResp, err := kmsg.NewPtrInitProducerIDRequest().RequestWith(ctx, cl)
	if err != nil || initResp.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %+v", err, initResp)
	}
	pid, epoch := initResp.ProducerID, initResp.ProducerEpoch

	commit := func(offsets map[int32]int64) {
		t.Helper()
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = "etl-tx", group, pid, epoch
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = topic
		for p, o := range offsets {
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset = p, o
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("TxnOffsetCommit: %v", err)
		}
		if resp.Version != 4 {
			t.Errorf("TxnOffsetCommit answered at v%d, want v4 (the highest advertised)", resp.Version)
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					t.Fatalf("TxnOffsetCommit %s[%d]: %v", rt.Topic, rp.Partition, err)
				}
			}
		}
	}
	// fetch answers each partition's committed offset, or its error.
	fetch := func(requireStable bool) map[int32]string {
		t.Helper()
		req := kmsg.NewPtrOffsetFetchRequest()
		req.RequireStable = requireStable
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = group
		rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, Partitions: []int32{0, 1}}}
		req.Groups = append(req.Groups, rg)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("OffsetFetch: %v", err)
		}
		out := map[int32]string{}
		for _, g := range resp.Groups {
			if err := kerr.ErrorForCode(g.ErrorCode); err != nil {
				t.Fatalf("OffsetFetch: %v", err)
			}
			for _, rt := range g.Topics {
				for _, rp := range rt.Partitions {
					if rp.ErrorCode != 0 {
						out[rp.Partition] = kerr.ErrorForCode(rp.ErrorCode).(*kerr.Error).Message
					} else {
						out[rp.Partition] = fmt.Sprint(rp.Offset)
					}
				}
			}
		}
		return out
	}
	wantFetch := func(what string, requireStable bool, want map[int32]string) {
		t.Helper()
		if got := fetch(requireStable); !maps.Equal(got, want) {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
	// end writes the marker to the group's __consumer_offsets partition,
	// which the first TxnOffsetCommit's FindCoordinator created.
	end := func(commit bool) {
		t.Helper()
		groupPartition := coordinator.PartitionFor(group, int32(len(b.Node().Image().Topics[coordinator.OffsetsTopic].Partitions)))
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		rm := kmsg.NewWriteTxnMarkersRequestMarker()
		rm.ProducerID, rm.ProducerEpoch, rm.CoordinatorEpoch, rm.Committed = pid, epoch, 0, commit
		rm.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: coordinator.OffsetsTopic, Partitions: []int32{groupPartition}}}
		req.Markers = append(req.Markers, rm)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("WriteTxnMarkers: %v", err)
		}
		if len(resp.Markers) != 1 || len(resp.Markers[0].Topics) != 1 || len(resp.Markers[0].Topics[0].Partitions) != 1 {
			t.Fatalf("WriteTxnMarkers answered %+v", resp)
		}
		if err := kerr.ErrorForCode(resp.Markers[0].Topics[0].Partitions[0].ErrorCode); err != nil {
			t.Fatalf("marker (commit %t) on %s[%d]: %v", commit, coordinator.OffsetsTopic, groupPartition, err)
		}
	}

	unstable := kerr.UnstableOffsetCommit.Message
	commit(map[int32]int64{0: 5, 1: 7})
	wantFetch("pending, RequireStable", true, map[int32]string{0: unstable, 1: unstable})
	wantFetch("pending", false, map[int32]string{0: "-1", 1: "-1"})
	end(true)
	wantFetch("committed, RequireStable", true, map[int32]string{0: "5", 1: "7"})
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup(topic, 1); o.At != 7 {
		t.Fatalf("kadm.FetchOffsets after the commit: %+v", o)
	}

	// The producer's next transaction is open across a restart of the
	// broker, which loads it pending from the log, and then aborts.
	commit(map[int32]int64{0: 9})
	wantFetch("second transaction pending", true, map[int32]string{0: unstable, 1: "7"})
	b.Restart(t)
	waitUntil(t, 20*time.Second, "the group coordinator loaded", func() bool {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: group, Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, Partitions: []int32{0}}}}}
		resp, err := req.RequestWith(ctx, cl)
		return err == nil && len(resp.Groups) == 1 && resp.Groups[0].ErrorCode == 0
	})
	wantFetch("second transaction pending after a restart", true, map[int32]string{0: unstable, 1: "7"})
	end(false)
	wantFetch("after the abort", true, map[int32]string{0: "5", 1: "7"})

	// A consumer in the group starts from the committed offsets.
	produceSync(t, b.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner())),
		func() []*kgo.Record {
			var rs []*kgo.Record
			for i := range 10 {
				rs = append(rs, &kgo.Record{Partition: 0, Value: []byte(fmt.Sprint(i))})
			}
			return rs
		}()...)
	consumer := b.Client(t, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	fetches := consumer.PollRecords(ctx, 1)
	if err := fetches.Err0(); err != nil {
		t.Fatalf("consuming: %v", err)
	}
	if r := fetches.Records()[0]; r.Partition != 0 || r.Offset != 5 {
		t.Fatalf("the group's consumer started at %s[%d]@%d, want partition 0 at offset 5", r.Topic, r.Partition, r.Offset)
	}
}
