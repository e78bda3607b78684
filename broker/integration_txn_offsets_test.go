package broker_test

import (
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestTxnOffsetCommitOverTheWire commits a group's offsets in a
// transaction the way a transactional client does, with raw kmsg requests
// through kgo (which routes InitProducerId, AddOffsetsToTxn and EndTxn to
// the transaction coordinator and TxnOffsetCommit and OffsetFetch to the
// group's): the offsets stay invisible, and UNSTABLE_OFFSET_COMMIT to a
// RequireStable fetch, until the transaction coordinator's COMMIT marker;
// the next transaction's offsets, still pending after a restart of the
// broker, are dropped by its abort. A commit whose group partition is not
// in the transaction (no AddOffsetsToTxn) is refused with v4's
// TRANSACTION_ABORTABLE (KIP-890). The client
// speaks the classic protocol (TxnOffsetCommit v4, EndTxn v4); KIP-890
// part 2's is TestTransactionVersion2OverTheWire's.
func TestTxnOffsetCommitOverTheWire(t *testing.T) {
	b := brokertest.Start(t)
	adm := b.Admin(t)
	const topic, group, txnID = "txn-offsets-in", "etl", "etl-tx"
	createTopic(t, adm, topic, 2)
	cl := b.Client(t, classicTxnVersions())
	ctx := testCtx(t, 30*time.Second)

	initReq := kmsg.NewPtrInitProducerIDRequest()
	initReq.TransactionalID, initReq.TransactionTimeoutMillis = kmsg.StringPtr(txnID), 60000
	initResp, err := initReq.RequestWith(ctx, cl)
	if err != nil || initResp.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v %+v", err, initResp)
	}
	pid, epoch := initResp.ProducerID, initResp.ProducerEpoch
	addOffsets := func() {
		t.Helper()
		req := kmsg.NewPtrAddOffsetsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = txnID, pid, epoch, group
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err != nil {
			t.Fatalf("AddOffsetsToTxn: %v", err)
		}
	}

	commit := func(offsets map[int32]int64) error {
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
			t.Errorf("TxnOffsetCommit answered at v%d, want v4 (the client's highest)", resp.Version)
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					return err
				}
			}
		}
		return nil
	}
	mustCommit := func(offsets map[int32]int64) {
		t.Helper()
		if err := commit(offsets); err != nil {
			t.Fatalf("TxnOffsetCommit: %v", err)
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
	// end ends the transaction; its transaction coordinator then writes
	// the marker to the group's __consumer_offsets partition.
	end := func(commit bool) {
		t.Helper()
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = txnID, pid, epoch, commit
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err != nil {
			t.Fatalf("EndTxn (commit %t): %v", commit, err)
		}
	}
	// eventuallyFetch waits for the marker the coordinator writes after
	// EndTxn answered.
	eventuallyFetch := func(what string, want map[int32]string) {
		t.Helper()
		var got map[int32]string
		waitUntil(t, 20*time.Second, what, func() bool {
			got = fetch(true)
			return maps.Equal(got, want)
		})
	}

	if err := commit(map[int32]int64{0: 1}); !errors.Is(err, kerr.TransactionAbortable) {
		t.Fatalf("TxnOffsetCommit v4 outside the transaction: %v, want TRANSACTION_ABORTABLE", err)
	}
	unstable := kerr.UnstableOffsetCommit.Message
	wantFetch("nothing committed", true, map[int32]string{0: "-1", 1: "-1"})
	addOffsets()
	mustCommit(map[int32]int64{0: 5, 1: 7})
	wantFetch("pending, RequireStable", true, map[int32]string{0: unstable, 1: unstable})
	wantFetch("pending", false, map[int32]string{0: "-1", 1: "-1"})
	end(true)
	eventuallyFetch("committed, RequireStable", map[int32]string{0: "5", 1: "7"})
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup(topic, 1); o.At != 7 {
		t.Fatalf("kadm.FetchOffsets after the commit: %+v", o)
	}

	// The producer's next transaction is open across a restart of the
	// broker, which loads it pending from the log, and then aborts.
	addOffsets()
	mustCommit(map[int32]int64{0: 9})
	wantFetch("second transaction pending", true, map[int32]string{0: unstable, 1: "7"})
	b.Restart(t)
	waitUntil(t, 20*time.Second, "the group coordinator loaded", func() bool {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: group, Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, Partitions: []int32{0}}}}}
		resp, err := req.RequestWith(ctx, cl)
		return err == nil && len(resp.Groups) == 1 && resp.Groups[0].ErrorCode == 0
	})
	wantFetch("second transaction pending after a restart", true, map[int32]string{0: unstable, 1: "7"})
	waitUntil(t, 20*time.Second, "the transaction coordinator loaded", func() bool {
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = []string{txnID}
		resp, err := req.RequestWith(ctx, cl)
		return err == nil && len(resp.TransactionStates) == 1 && resp.TransactionStates[0].ErrorCode == 0
	})
	end(false)
	eventuallyFetch("after the abort", map[int32]string{0: "5", 1: "7"})

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
