package replication

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/authz/reqctx"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

func TestProduceAcks(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{})
	for i, tc := range []struct {
		acks     int16
		n        int
		wantBase int64
	}{{1, 3, 0}, {0, 2, 3}, {-1, 4, 5}} {
		sp := h.produce(tc.acks, "t", 0, h.batch("a", tc.n))
		if sp.ErrorCode != 0 || sp.BaseOffset != tc.wantBase || sp.LogAppendTime != -1 || sp.LogStartOffset != 0 {
			t.Fatalf("case %d (acks=%d): got error %d base %d appendTime %d logStart %d", i, tc.acks, sp.ErrorCode, sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset)
		}
	}
	p := h.partition("t", 0)
	if leo, hw := p.Log().LogEndOffset(), p.HighWatermark(); leo != 9 || hw != 9 {
		t.Fatalf("LEO %d HW %d, want 9 and 9: the single-replica ISR moves the HW with every append", leo, hw)
	}
	if h.metrics.msgs["t"] != 9 || h.metrics.in["t"] == 0 {
		t.Fatalf("metrics: %d messages in, %d bytes in", h.metrics.msgs["t"], h.metrics.in["t"])
	}
}

func TestProduceLogAppendTime(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{configs: map[string]string{"message.timestamp.type": "LogAppendTime"}})
	sp := h.produce(1, "t", 0, h.batch("a", 1))
	if sp.ErrorCode != 0 || sp.LogAppendTime != h.clock.Now().UnixMilli() {
		t.Fatalf("error %d LogAppendTime %d, want %d", sp.ErrorCode, sp.LogAppendTime, h.clock.Now().UnixMilli())
	}
}

func TestProduceRequestLevelErrors(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{})
	twoTopics := func(version, acks int16, batch []byte) *kmsg.ProduceRequest {
		req := produceReq(version, acks, "t", 0, batch)
		other := produceReq(version, acks, "unknown", 3, batch)
		req.Topics = append(req.Topics, other.Topics...)
		return req
	}
	check := func(name string, resp *kmsg.ProduceResponse, code int16, msg string) {
		t.Helper()
		if len(resp.Topics) != 2 {
			t.Fatalf("%s: %d topics", name, len(resp.Topics))
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				gotMsg := ""
				if rp.ErrorMessage != nil {
					gotMsg = *rp.ErrorMessage
				}
				if rp.ErrorCode != code || gotMsg != msg || rp.BaseOffset != -1 {
					t.Fatalf("%s: %s-%d error %d msg %q base %d, want %d %q -1", name, rt.Topic, rp.Partition, rp.ErrorCode, gotMsg, rp.BaseOffset, code, msg)
				}
			}
		}
	}
	ctx := context.Background()
	check("acks=2", h.rm.Produce(ctx, twoTopics(11, 2, h.batch("a", 1))), kerr.InvalidRequiredAcks.Code, "")

	txn := twoTopics(11, -1, h.batch("a", 1))
	id := "txn-1"
	txn.TransactionID = &id
	check("transactional id without transactions v11", h.rm.Produce(ctx, txn), kerr.InvalidTxnState.Code, errNoTransactions)
	txn.Version = 7
	check("transactional id without transactions v7 (no ErrorMessage)", h.rm.Produce(ctx, txn), kerr.InvalidTxnState.Code, "")

	txnBatch := h.batchSpec(record.BatchSpec{ProducerID: 7, ProducerEpoch: 0, BaseSequence: 0, Transactional: true}, "x", 1, 0)
	check("transactional batch without id", h.rm.Produce(ctx, twoTopics(11, -1, txnBatch)), kerr.TransactionalIDAuthorizationFailed.Code, "")

	if leo := h.partition("t", 0).Log().LogEndOffset(); leo != 0 {
		t.Fatalf("a refused request appended: LEO %d", leo)
	}
}

func TestProducePartitionErrors(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{})
	h.createTopic("__consumer_offsets", topicSpec{})
	h.createTopic("led-elsewhere", topicSpec{replicas: []int32{localNode, 2}, leader: 2, epoch: 7})
	h.createTopic("not-here", topicSpec{replicas: []int32{2}, leader: 2, epoch: 4})
	future := h.batchSpec(record.BatchSpec{BaseTimestamp: h.clock.Now().Add(48 * time.Hour).UnixMilli()}, "f", 2, 0)
	corrupt := h.batch("c", 1)
	corrupt[len(corrupt)-1] ^= 0xff

	for _, tc := range []struct {
		name      string
		topic     string
		partition int32
		batch     []byte
		code      int16
		leader    int32
		epoch     int32
	}{
		{"unknown topic", "nope", 0, h.batch("a", 1), kerr.UnknownTopicOrPartition.Code, -1, -1},
		{"unknown partition", "t", 9, h.batch("a", 1), kerr.UnknownTopicOrPartition.Code, -1, -1},
		{"internal topic", "__consumer_offsets", 0, h.batch("a", 1), kerr.InvalidTopicException.Code, -1, -1},
		{"follower replica", "led-elsewhere", 0, h.batch("a", 1), kerr.NotLeaderForPartition.Code, 2, 7},
		{"not a replica", "not-here", 0, h.batch("a", 1), kerr.NotLeaderForPartition.Code, 2, 4},
		{"corrupt batch", "t", 0, corrupt, kerr.CorruptMessage.Code, -1, -1},
		{"no records", "t", 0, nil, kerr.InvalidRecord.Code, -1, -1},
	} {
		req := produceReq(11, 1, tc.topic, tc.partition, tc.batch)
		resp := h.rm.Produce(reqctx.With(context.Background(), reqctx.Info{Listener: "PLAINTEXT"}), req)
		sp := resp.Topics[0].Partitions[0]
		wantStart := int64(-1)
		if tc.code == kerr.InvalidRecord.Code {
			wantStart = 0 // a validation error reports the log start offset
		}
		if sp.ErrorCode != tc.code || sp.BaseOffset != -1 || sp.LogStartOffset != wantStart {
			t.Fatalf("%s: error %d base %d logStart %d, want %d -1 -1", tc.name, sp.ErrorCode, sp.BaseOffset, sp.LogStartOffset, tc.code)
		}
		if sp.CurrentLeader.LeaderID != tc.leader || sp.CurrentLeader.LeaderEpoch != tc.epoch {
			t.Fatalf("%s: CurrentLeader %+v, want %d/%d", tc.name, sp.CurrentLeader, tc.leader, tc.epoch)
		}
		wantBrokers := 0
		if tc.leader == 2 {
			wantBrokers = 1
			b := resp.Brokers[0]
			if b.NodeID != 2 || b.Host != "127.0.0.2" || b.Port != 9093 || b.Rack == nil || *b.Rack != "r2" {
				t.Fatalf("%s: leader endpoint %+v", tc.name, b)
			}
		}
		if len(resp.Brokers) != wantBrokers {
			t.Fatalf("%s: %d broker endpoints, want %d", tc.name, len(resp.Brokers), wantBrokers)
		}
	}

	// Per-record errors (KIP-467): a timestamp two days ahead of the clock.
	sp := h.produce(1, "t", 0, future)
	if sp.ErrorCode != kerr.InvalidTimestamp.Code || sp.ErrorMessage == nil || len(sp.ErrorRecords) == 0 ||
		sp.ErrorRecords[0].RelativeOffset != 0 || sp.LogStartOffset != 0 {
		t.Fatalf("future timestamp: error %d msg %v records %+v logStart %d", sp.ErrorCode, sp.ErrorMessage, sp.ErrorRecords, sp.LogStartOffset)
	}
	// CurrentLeader and Brokers are v10+.
	resp := h.rm.Produce(context.Background(), produceReq(9, 1, "led-elsewhere", 0, h.batch("a", 1)))
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != kerr.NotLeaderForPartition.Code || sp.CurrentLeader.LeaderID != -1 || len(resp.Brokers) != 0 {
		t.Fatalf("v9 not leader: %+v brokers %d", sp, len(resp.Brokers))
	}
}

func TestProduceTopicIDs(t *testing.T) {
	h := newHarness(t)
	topic := h.createTopic("t", topicSpec{})
	req := produceReq(13, 1, "", 0, h.batch("a", 2))
	req.Topics[0].TopicID = topic.ID
	resp := h.rm.Produce(context.Background(), req)
	if rt := resp.Topics[0]; rt.TopicID != topic.ID || rt.Partitions[0].ErrorCode != 0 || rt.Partitions[0].BaseOffset != 0 {
		t.Fatalf("by topic id: %+v", rt)
	}
	req = produceReq(13, 1, "", 0, h.batch("a", 2))
	req.Topics[0].TopicID = [16]byte{1, 2, 3}
	resp = h.rm.Produce(context.Background(), req)
	if sp := resp.Topics[0].Partitions[0]; sp.ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown topic id: error %d", sp.ErrorCode)
	}
}

func TestProduceIdempotentDuplicate(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{})
	h.mustProduce("t", 0, "plain", 2, 0)
	idem := h.batchSpec(record.BatchSpec{ProducerID: 1000, ProducerEpoch: 0, BaseSequence: 0}, "idem", 3, 0)
	// The append stamps offsets into the buffer, so the retry is a fresh
	// copy, as a retried request is.
	first := h.produce(-1, "t", 0, bytes.Clone(idem))
	retry := h.produce(-1, "t", 0, bytes.Clone(idem))
	if first.ErrorCode != 0 || first.BaseOffset != 2 || retry.ErrorCode != 0 || retry.BaseOffset != 2 {
		t.Fatalf("first %+v retry %+v: both want base offset 2", first, retry)
	}
	if leo := h.partition("t", 0).Log().LogEndOffset(); leo != 5 {
		t.Fatalf("LEO %d after a duplicate, want 5", leo)
	}
	if h.metrics.msgs["t"] != 5 {
		t.Fatalf("the duplicate was counted: %d messages in", h.metrics.msgs["t"])
	}
	// A sequence gap is OUT_OF_ORDER_SEQUENCE_NUMBER, with the log start
	// offset (Kafka reports it for validation errors).
	gap := h.batchSpec(record.BatchSpec{ProducerID: 1000, ProducerEpoch: 0, BaseSequence: 7}, "gap", 1, 0)
	if sp := h.produce(1, "t", 0, gap); sp.ErrorCode != kerr.OutOfOrderSequenceNumber.Code || sp.LogStartOffset != 0 {
		t.Fatalf("sequence gap: error %d logStart %d", sp.ErrorCode, sp.LogStartOffset)
	}
}

func TestProduceStorageError(t *testing.T) {
	efs := vfs.WithErrors(vfs.NewMem(), nil)
	h := newHarnessFS(t, efs, "/data")
	h.createTopic("t", topicSpec{})
	h.mustProduce("t", 0, "a", 1, 0)
	efs.SetInjector(vfs.OnOp(vfs.OpWrite, 0))
	if sp := h.produce(1, "t", 0, h.batch("b", 1)); sp.ErrorCode != kerr.KafkaStorageError.Code || sp.LogStartOffset != -1 {
		t.Fatalf("write failure: error %d logStart %d", sp.ErrorCode, sp.LogStartOffset)
	}
	efs.SetInjector(nil)
	// The log stays offline, as Kafka takes the directory offline.
	if sp := h.produce(1, "t", 0, h.batch("c", 1)); sp.ErrorCode != kerr.KafkaStorageError.Code {
		t.Fatalf("after the failure: error %d", sp.ErrorCode)
	}
	res := decodeFetch(t, h.fetch(fetchReq(12, fp("t", 0, 0))))
	if res[0].ErrorCode != kerr.KafkaStorageError.Code {
		t.Fatalf("fetch from the failed log: error %d", res[0].ErrorCode)
	}
	h.logs.Close() // the failed log refuses a clean close
	h.logs = nil
}

// The acks=all wait, driven by a follower's progress: the ISR holds node 2,
// so the high watermark moves only when node 2 fetches past the batch.
func TestProduceAcksAllWaitsForISR(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{replicas: []int32{localNode, 2}})
	req := produceReq(11, -1, "t", 0, h.batch("a", 2))
	req.TimeoutMillis = 30
	start := time.Now()
	sp := h.rm.Produce(context.Background(), req).Topics[0].Partitions[0]
	if sp.ErrorCode != kerr.RequestTimedOut.Code || sp.BaseOffset != 0 {
		t.Fatalf("no follower progress: error %d base %d, want REQUEST_TIMED_OUT and 0", sp.ErrorCode, sp.BaseOffset)
	}
	if el := time.Since(start); el < 30*time.Millisecond {
		t.Fatalf("timed out after %v, before TimeoutMillis", el)
	}

	req = produceReq(11, -1, "t", 0, h.batch("b", 3))
	req.TimeoutMillis = 10000
	done := make(chan kmsg.ProduceResponseTopicPartition, 1)
	go func() { done <- h.rm.Produce(context.Background(), req).Topics[0].Partitions[0] }()
	// Follower fetches up to offset 2 first: not enough for the batch at 2..4.
	follow := func(offset int64) {
		freq := fetchReq(12, fp("t", 0, offset))
		freq.ReplicaID = 2
		if res := decodeFetch(t, h.fetch(freq)); res[0].ErrorCode != 0 {
			t.Fatalf("follower fetch: error %d", res[0].ErrorCode)
		}
	}
	waitFor(t, func() bool { return h.partition("t", 0).Log().LogEndOffset() == 5 })
	follow(2)
	select {
	case sp := <-done:
		t.Fatalf("acknowledged before the follower reached the batch: %+v", sp)
	case <-time.After(20 * time.Millisecond):
	}
	follow(5)
	select {
	case sp := <-done:
		if sp.ErrorCode != 0 || sp.BaseOffset != 2 {
			t.Fatalf("after the follower caught up: %+v", sp)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the follower's progress did not complete the acks=all produce")
	}
	if hw := h.partition("t", 0).HighWatermark(); hw != 5 {
		t.Fatalf("HW %d, want 5", hw)
	}
}

func TestProduceAcksAllMinISR(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{replicas: []int32{localNode, 2}, isr: []int32{localNode}, configs: map[string]string{"min.insync.replicas": "2"}})
	if sp := h.produce(-1, "t", 0, h.batch("a", 1)); sp.ErrorCode != kerr.NotEnoughReplicas.Code {
		t.Fatalf("acks=all under min ISR: error %d", sp.ErrorCode)
	}
	if sp := h.produce(1, "t", 0, h.batch("a", 1)); sp.ErrorCode != 0 || sp.BaseOffset != 0 {
		t.Fatalf("acks=1 under min ISR: %+v", sp)
	}
	// KIP-966: the HW does not move while the ISR is below min ISR.
	if hw := h.partition("t", 0).HighWatermark(); hw != 0 {
		t.Fatalf("HW %d under min ISR, want 0", hw)
	}
	// min.insync.replicas above the replication factor is capped at it.
	h.createTopic("single", topicSpec{configs: map[string]string{"min.insync.replicas": "3"}})
	if sp := h.produce(-1, "single", 0, h.batch("a", 1)); sp.ErrorCode != 0 {
		t.Fatalf("min ISR above the replica count: error %d", sp.ErrorCode)
	}
}

func TestProduceAcksAllLeadershipLost(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{replicas: []int32{localNode, 2}})
	req := produceReq(11, -1, "t", 0, h.batch("a", 1))
	req.TimeoutMillis = 10000
	done := make(chan kmsg.ProduceResponseTopicPartition, 1)
	go func() { done <- h.rm.Produce(context.Background(), req).Topics[0].Partitions[0] }()
	waitFor(t, func() bool { return h.partition("t", 0).Log().LogEndOffset() == 1 })
	h.changePartition("t", 0, func(p *raftmeta.Partition) { p.Leader, p.LeaderEpoch = 2, 1 })
	select {
	case sp := <-done:
		if sp.ErrorCode != kerr.NotLeaderForPartition.Code || sp.CurrentLeader.LeaderID != 2 || sp.CurrentLeader.LeaderEpoch != 1 {
			t.Fatalf("leadership lost while waiting: %+v", sp)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("losing leadership did not end the acks=all wait")
	}
}

func TestProduceAcksAllContextCancel(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{replicas: []int32{localNode, 2}})
	ctx, cancel := context.WithCancel(context.Background())
	req := produceReq(11, -1, "t", 0, h.batch("a", 1))
	req.TimeoutMillis = 60000
	var wg sync.WaitGroup
	wg.Add(1)
	var sp kmsg.ProduceResponseTopicPartition
	go func() { defer wg.Done(); sp = h.rm.Produce(ctx, req).Topics[0].Partitions[0] }()
	waitFor(t, func() bool { return h.partition("t", 0).Log().LogEndOffset() == 1 })
	cancel()
	wg.Wait()
	if sp.ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("cancelled wait: error %d", sp.ErrorCode)
	}
}

func TestAppendCoordinator(t *testing.T) {
	h := newHarness(t)
	h.createTopic("__consumer_offsets", topicSpec{partitions: 2})
	tp := storage.TopicPartition{Topic: "__consumer_offsets", Partition: 1}
	b := h.batch("g", 2)
	info, err := h.rm.AppendCoordinator(context.Background(), tp, b)
	if err != nil || info.FirstOffset != 0 || info.LastOffset != 1 {
		t.Fatalf("coordinator append: %+v %v", info, err)
	}
	data, err := h.rm.ReadCommitted(tp, 0, 1<<20)
	if err != nil || data.Records.Size != int32(len(b)) || data.HighWatermark != 2 {
		t.Fatalf("read committed: size %d HW %d err %v (batch %d bytes)", data.Records.Size, data.HighWatermark, err, len(b))
	}
	if _, err := h.rm.AppendCoordinator(context.Background(), storage.TopicPartition{Topic: "nope"}, b); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("unknown partition: %v", err)
	}
	if _, err := h.rm.ReadCommitted(storage.TopicPartition{Topic: "nope"}, 0, 100); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("read unknown partition: %v", err)
	}
	bad := h.batch("bad", 1)
	bad[len(bad)-1] ^= 1
	if _, err := h.rm.AppendCoordinator(context.Background(), tp, bad); !errors.Is(err, kerr.CorruptMessage) {
		t.Fatalf("corrupt batch: %v", err)
	}

	// With a follower in the ISR the append waits for it; the context
	// bounds the wait.
	h.createTopic("replicated", topicSpec{replicas: []int32{localNode, 2}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = h.rm.AppendCoordinator(ctx, storage.TopicPartition{Topic: "replicated"}, h.batch("x", 1))
	if !errors.Is(err, kerr.RequestTimedOut) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("unreplicated coordinator append: %v", err)
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestAppendCoordinatorClosedLog: a log closed under a coordinator's
// append or read (its broker stopping or crashing, or the replica moved
// away) is NOT_LEADER_OR_FOLLOWER, as produce answers it, so the
// coordinators answer NOT_COORDINATOR and their clients look for the new
// leader, instead of an error that unwraps to no Kafka code (which the
// broker answered as UNKNOWN_SERVER_ERROR).
func TestAppendCoordinatorClosedLog(t *testing.T) {
	h := newHarness(t)
	h.createTopic("__transaction_state", topicSpec{partitions: 1})
	tp := storage.TopicPartition{Topic: "__transaction_state"}
	if _, err := h.rm.AppendCoordinator(context.Background(), tp, h.batch("x", 1)); err != nil {
		t.Fatal(err)
	}
	if err := h.partition(tp.Topic, 0).Log().Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.rm.AppendCoordinator(context.Background(), tp, h.batch("y", 1)); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Errorf("append to a closed log: %v, want NOT_LEADER_OR_FOLLOWER", err)
	}
	if _, err := h.rm.ReadToLogEnd(tp, 0, 1<<20); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Errorf("read of a closed log: %v, want NOT_LEADER_OR_FOLLOWER", err)
	}
}

// An acks=all append the high watermark has already passed (the leader is
// the whole ISR) is answered at once, without letting the connection's
// next request start early (Unmute) as a wait would: Kafka completes such
// a DelayedProduce in tryCompleteElseWatch before it is watched. With a
// follower in the ISR the produce waits, and unmutes first.
func TestProduceAcksAllUnmutesOnlyToWait(t *testing.T) {
	h := newHarness(t)
	h.createTopic("alone", topicSpec{replicas: []int32{localNode}})
	h.createTopic("pair", topicSpec{replicas: []int32{localNode, 2}})
	var unmuted atomic.Int32
	ctx := reqctx.WithUnmute(context.Background(), func() { unmuted.Add(1) })

	sp := h.rm.Produce(ctx, produceReq(11, -1, "alone", 0, h.batch("a", 2))).Topics[0].Partitions[0]
	if sp.ErrorCode != 0 || sp.BaseOffset != 0 {
		t.Fatalf("acks=all to a leader-only ISR: %+v", sp)
	}
	if n := unmuted.Load(); n != 0 {
		t.Fatalf("an acks=all produce with nothing to wait for unmuted %d times", n)
	}

	req := produceReq(11, -1, "pair", 0, h.batch("b", 2))
	req.TimeoutMillis = 20
	if sp := h.rm.Produce(ctx, req).Topics[0].Partitions[0]; sp.ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("acks=all without the follower's progress: error %d, want REQUEST_TIMED_OUT", sp.ErrorCode)
	}
	if n := unmuted.Load(); n != 1 {
		t.Fatalf("an acks=all produce that waited unmuted %d times, want 1", n)
	}
}
