package replication

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// describeProducers asks for the named partitions of each topic and returns
// the answers keyed "topic-partition".
func (h *harness) describeProducers(topics map[string][]int32) map[string]kmsg.DescribeProducersResponseTopicPartition {
	h.t.Helper()
	req := kmsg.NewPtrDescribeProducersRequest()
	asked := 0
	for name, parts := range topics {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = name, parts
		req.Topics = append(req.Topics, rt)
		asked += len(parts)
	}
	resp := h.rm.DescribeProducers(context.Background(), req)
	out := map[string]kmsg.DescribeProducersResponseTopicPartition{}
	for _, st := range resp.Topics {
		for _, sp := range st.Partitions {
			out[fmt.Sprintf("%s-%d", st.Topic, sp.Partition)] = sp
		}
	}
	if len(out) != asked {
		h.t.Fatalf("%d answers for %v", len(out), topics)
	}
	return out
}

// activeProducers formats a partition's producers for comparison.
func activeProducers(sp kmsg.DescribeProducersResponseTopicPartition) []string {
	out := []string{}
	for _, p := range sp.ActiveProducers {
		out = append(out, fmt.Sprintf("pid=%d epoch=%d seq=%d ts=%d coordinator=%d txn=%d",
			p.ProducerID, p.ProducerEpoch, p.LastSequence, p.LastTimestamp, p.CoordinatorEpoch, p.CurrentTxnStartOffset))
	}
	return out
}

// DescribeProducers shows each producer of a partition's log: an
// idempotent one, a transactional one with its open transaction's start
// offset, and -1 with the marker's coordinator epoch once it is committed.
func TestDescribeProducers(t *testing.T) {
	h := newHarness(t)
	h.createTopic("t", topicSpec{partitions: 2})
	now := h.clock.Now().UnixMilli()
	h.mustProduce("t", 0, "plain", 1, 0)
	if sp := h.produce(1, "t", 0, h.batchSpec(record.BatchSpec{ProducerID: 30, ProducerEpoch: 4, BaseSequence: 0}, "idem", 3, 0)); sp.ErrorCode != 0 {
		t.Fatalf("idempotent produce: %d", sp.ErrorCode)
	}
	h.appendTxn("t", 0, 20, 1, 0, "txn", 2) // offsets 4-5

	got := h.describeProducers(map[string][]int32{"t": {0, 1}})
	want := []string{
		fmt.Sprintf("pid=20 epoch=1 seq=1 ts=%d coordinator=-1 txn=4", now+1),
		fmt.Sprintf("pid=30 epoch=4 seq=2 ts=%d coordinator=-1 txn=-1", now+2),
	}
	if sp := got["t-0"]; sp.ErrorCode != 0 || !slices.Equal(activeProducers(sp), want) {
		t.Fatalf("open transaction:\n got %q (error %d)\nwant %q", activeProducers(sp), sp.ErrorCode, want)
	}
	if sp := got["t-1"]; sp.ErrorCode != 0 || len(sp.ActiveProducers) != 0 {
		t.Fatalf("a partition without producers: %+v", sp)
	}

	if codes := h.writeMarkers(txnMarker(20, 1, 8, true, "t", 0)); codes["20/t-0"] != 0 {
		t.Fatalf("commit: %v", codes)
	}
	want[0] = fmt.Sprintf("pid=20 epoch=1 seq=1 ts=%d coordinator=8 txn=-1", now)
	if sp := h.describeProducers(map[string][]int32{"t": {0}})["t-0"]; sp.ErrorCode != 0 || !slices.Equal(activeProducers(sp), want) {
		t.Fatalf("after the commit:\n got %q (error %d)\nwant %q", activeProducers(sp), sp.ErrorCode, want)
	}
}

// The partition errors of Kafka's ReplicaManager.activeProducerState; a
// follower answers from its own log.
func TestDescribeProducersErrors(t *testing.T) {
	efs := vfs.WithErrors(vfs.NewMem(), nil)
	h := newHarnessFS(t, efs, "/data")
	h.createTopic("t", topicSpec{})
	h.createTopic("led-elsewhere", topicSpec{replicas: []int32{localNode, 2}, leader: 2, epoch: 3})
	h.createTopic("not-here", topicSpec{replicas: []int32{2}, leader: 2})
	h.createTopic("disk", topicSpec{})
	// The follower's copy of the leader's transactional batch.
	replicated, err := record.Build(record.BatchSpec{ProducerID: 5, ProducerEpoch: 0, BaseSequence: 0, Transactional: true,
		PartitionLeaderEpoch: 3, BaseTimestamp: h.clock.Now().UnixMilli()}, []record.Record{{KeyLen: -1, ValueLen: -1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.partition("led-elsewhere", 0).Log().AppendAsFollower(replicated); err != nil {
		t.Fatal(err)
	}
	efs.SetInjector(vfs.OnOp(vfs.OpWrite, 0))
	if _, err := h.partition("disk", 0).appendRecordsToLeader(h.batch("d", 1), record.OriginClient, 1); err == nil {
		t.Fatal("append on a failing disk succeeded")
	}
	efs.SetInjector(nil)
	defer func() {
		h.logs.Close() // the failed log refuses a clean close
		h.logs = nil
	}()

	got := h.describeProducers(map[string][]int32{
		"t": {9}, "nope": {0}, "led-elsewhere": {0}, "not-here": {0}, "disk": {0}, "bad/name": {0, 1},
	})
	for k, code := range map[string]int16{
		"t-9":             kerr.UnknownTopicOrPartition.Code,
		"nope-0":          kerr.UnknownTopicOrPartition.Code,
		"led-elsewhere-0": 0,
		"not-here-0":      kerr.NotLeaderForPartition.Code,
		"disk-0":          kerr.KafkaStorageError.Code,
		"bad/name-0":      kerr.InvalidTopicException.Code,
		"bad/name-1":      kerr.InvalidTopicException.Code,
	} {
		if got[k].ErrorCode != code {
			t.Errorf("%s: error %d, want %d", k, got[k].ErrorCode, code)
		}
	}
	if ps := activeProducers(got["led-elsewhere-0"]); len(ps) != 1 || !strings.HasPrefix(ps[0], "pid=5 epoch=0 seq=0 ") || !strings.HasSuffix(ps[0], " txn=0") {
		t.Errorf("the follower's producers %q, want producer 5's open transaction", ps)
	}
	if m := got["bad/name-0"].ErrorMessage; m == nil || *m == "" {
		t.Errorf("invalid topic name without a message")
	}
}
