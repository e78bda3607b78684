package coordinator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/coordinator/runtime/runtimetest"
	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/record"
)

// txnProducer is a transactional producer committing offsets for a group
// in its transactions: TxnOffsetCommit, then the marker its transaction
// coordinator writes (CompleteTransaction).
type txnProducer struct {
	h          *harness
	group      string
	pid        int64
	epoch      int16
	version    int16
	memberID   string
	instanceID *string
	generation int32
}

func (h *harness) txnProducer(group string, pid int64) *txnProducer {
	return &txnProducer{h: h, group: group, pid: pid, version: 4, generation: -1}
}

// request is a TxnOffsetCommit of offsets, each with leader epoch 5 and
// metadata "m<offset>".
func (x *txnProducer) request(offsets map[string]map[int32]int64) *kmsg.TxnOffsetCommitRequest {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version = x.version
	req.TransactionalID = "tx"
	req.Group = x.group
	req.ProducerID, req.ProducerEpoch = x.pid, x.epoch
	req.Generation, req.MemberID, req.InstanceID = x.generation, x.memberID, x.instanceID
	for _, topic := range sortedKeys(offsets) {
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = topic
		for _, p := range sortedKeys(offsets[topic]) {
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = p, offsets[topic][p], 5
			rp.Metadata = kmsg.StringPtr(fmt.Sprintf("m%d", offsets[topic][p]))
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// commit sends a TxnOffsetCommit and returns "topic/partition" -> code.
func (x *txnProducer) commit(offsets map[string]map[int32]int64) map[string]int16 {
	return txnCodes(x.h.c.TxnOffsetCommit(clientCtx("txn"), x.request(offsets)))
}

// mustCommit commits and fails the test unless every partition succeeded.
func (x *txnProducer) mustCommit(offsets map[string]map[int32]int64) {
	x.h.t.Helper()
	for k, code := range x.commit(offsets) {
		wantCode(x.h.t, "TxnOffsetCommit "+k, code, 0)
	}
}

// end writes the transaction's marker to the group's partition, as
// WriteTxnMarkers does through the replica manager's hook.
func (x *txnProducer) end(commit bool, coordinatorEpoch int32) error {
	tp := storage.TopicPartition{Topic: OffsetsTopic, Partition: PartitionFor(x.group, testPartitions)}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	return x.h.c.CompleteTransaction(ctx, tp, x.pid, x.epoch, coordinatorEpoch, commit)
}

func (x *txnProducer) mustEnd(commit bool) {
	x.h.t.Helper()
	if err := x.end(commit, 0); err != nil {
		x.h.t.Fatalf("ending the transaction of producer %d (commit %t): %v", x.pid, commit, err)
	}
}

func txnCodes(resp *kmsg.TxnOffsetCommitResponse) map[string]int16 {
	out := map[string]int16{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[fmt.Sprintf("%s/%d", t.Topic, p.Partition)] = p.ErrorCode
		}
	}
	return out
}

// fetch fetches partitions of group at OffsetFetch v8, with or without
// RequireStable, as "topic/partition" -> "offset/epoch/metadata" or the
// partition's error name.
func (h *harness) fetch(group string, requireStable bool, topic string, partitions ...int32) map[string]string {
	h.t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	req.RequireStable = requireStable
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, Partitions: partitions}}
	req.Groups = append(req.Groups, rg)
	g := h.c.OffsetFetch(context.Background(), req).Groups[0]
	wantCode(h.t, "fetch "+group, g.ErrorCode, 0)
	out := map[string]string{}
	for _, t := range g.Topics {
		for _, p := range t.Partitions {
			k := fmt.Sprintf("%s/%d", t.Topic, p.Partition)
			if p.ErrorCode != 0 {
				out[k] = errName(p.ErrorCode)
				if p.Offset != -1 || p.LeaderEpoch != -1 || *p.Metadata != "" {
					h.t.Errorf("%s: %s with offset %d epoch %d metadata %q", k, out[k], p.Offset, p.LeaderEpoch, *p.Metadata)
				}
				continue
			}
			out[k] = fmt.Sprintf("%d/%d/%s", p.Offset, p.LeaderEpoch, *p.Metadata)
		}
	}
	return out
}

// wantCommitted checks every committed offset of group.
func (h *harness) wantCommitted(what, group string, want map[string]string) {
	h.t.Helper()
	offs, code := h.fetchAll(group)
	wantCode(h.t, what, code, 0)
	wantOffsets(h.t, what, offs, want)
}

func wantOffsets(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
}

func errCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	if err != nil {
		return unknownServerError
	}
	return 0
}

var unstable = errName(unstableOffsetCommit)

// Offsets a transaction commits are pending, invisible to OffsetFetch
// and UNSTABLE_OFFSET_COMMIT with RequireStable, until the COMMIT marker,
// which the shard writes after them; then they are the group's offsets.
func TestTxnOffsetCommitVisibleOnlyAfterCommit(t *testing.T) {
	h := newHarness(t)
	x := h.txnProducer("etl", 7)
	x.mustCommit(map[string]map[int32]int64{"foo": {0: 10, 1: 11}})

	if offs, _ := h.fetchAll("etl"); len(offs) != 0 {
		t.Fatalf("pending offsets fetched: %v", offs)
	}
	wantOffsets(t, "stable fetch of pending offsets", h.fetch("etl", true, "foo", 0, 1, 2),
		map[string]string{"foo/0": unstable, "foo/1": unstable, "foo/2": "-1/-1/"})
	wantOffsets(t, "fetch of pending offsets", h.fetch("etl", false, "foo", 0, 1),
		map[string]string{"foo/0": "-1/-1/", "foo/1": "-1/-1/"})
	if d := h.describe("etl"); d.State != "Empty" || d.ProtocolType != "" {
		t.Fatalf("the commit's simple group: %+v", d)
	}

	x.mustEnd(true)
	committed := map[string]string{"foo/0": "10/5/m10", "foo/1": "11/5/m11"}
	h.wantCommitted("after the commit marker", "etl", committed)
	wantOffsets(t, "stable fetch after the commit marker", h.fetch("etl", true, "foo", 0, 1), committed)
	// A marker sent again (the transaction coordinator retries) changes
	// nothing.
	x.mustEnd(true)
	h.wantCommitted("after a second marker", "etl", committed)

	// In the log: the producer's transactional batch, then the markers.
	p := PartitionFor("etl", testPartitions)
	h.log.mu.Lock()
	batches := append([]record.Batch(nil), h.log.parts[p]...)
	h.log.mu.Unlock()
	if len(batches) != 3 {
		t.Fatalf("%d batches, want the offsets' and two markers", len(batches))
	}
	if b := batches[0]; !b.IsTransactional() || b.IsControl() || b.ProducerID() != 7 || b.ProducerEpoch() != 0 || b.RecordCount() != 2 {
		t.Fatalf("offsets batch: transactional %t control %t producer %d/%d records %d", b.IsTransactional(), b.IsControl(), b.ProducerID(), b.ProducerEpoch(), b.RecordCount())
	}
	for _, b := range batches[1:] {
		rec, err := record.NewUncompressedReader(b).Next(true)
		if err != nil {
			t.Fatal(err)
		}
		typ, err := record.ParseControlKey(rec.Key)
		if !b.IsControl() || !b.IsTransactional() || b.ProducerID() != 7 || err != nil || typ != kmsg.ControlRecordKeyTypeCommit {
			t.Fatalf("marker batch: control %t producer %d type %d (%v)", b.IsControl(), b.ProducerID(), typ, err)
		}
	}
	h.restart()
	h.wantCommitted("after a restart", "etl", committed)
}

// An ABORT marker drops what the transaction committed; the offsets
// committed before stay.
func TestTxnOffsetCommitAbortDiscards(t *testing.T) {
	h := newHarness(t)
	h.commit(9, "etl", "", -1, map[string]map[int32]int64{"foo": {0: 5}})
	x := h.txnProducer("etl", 7)
	x.mustCommit(map[string]map[int32]int64{"foo": {0: 10, 1: 11}})
	wantOffsets(t, "pending", h.fetch("etl", true, "foo", 0, 1), map[string]string{"foo/0": unstable, "foo/1": unstable})
	wantOffsets(t, "pending, not stable", h.fetch("etl", false, "foo", 0, 1), map[string]string{"foo/0": "5/5/m5", "foo/1": "-1/-1/"})
	x.mustEnd(false)
	want := map[string]string{"foo/0": "5/5/m5"}
	h.wantCommitted("after the abort", "etl", want)
	wantOffsets(t, "stable fetch after the abort", h.fetch("etl", true, "foo", 0, 1), map[string]string{"foo/0": "5/5/m5", "foo/1": "-1/-1/"})
	h.restart()
	h.wantCommitted("after a restart", "etl", want)
}

// When a partition has both, the offset whose record is later in the log
// wins (OffsetMetadataManager.replayEndTransactionMarker): a plain commit
// written while the transaction was open stays, a transactional commit
// written after a plain one replaces it; a restart reads the same from the
// log.
func TestLaterCommitInTheLogWinsOverTheTransactions(t *testing.T) {
	h := newHarness(t)
	a := h.txnProducer("etl", 7)
	a.mustCommit(map[string]map[int32]int64{"foo": {0: 10, 1: 11}})
	h.commit(9, "etl", "", -1, map[string]map[int32]int64{"foo": {0: 20}})
	a.mustEnd(true)

	h.commit(9, "etl", "", -1, map[string]map[int32]int64{"foo": {2: 30}})
	b := h.txnProducer("etl", 8)
	b.mustCommit(map[string]map[int32]int64{"foo": {2: 12}})
	b.mustEnd(true)

	want := map[string]string{"foo/0": "20/5/m20", "foo/1": "11/5/m11", "foo/2": "12/5/m12"}
	h.wantCommitted("after both transactions", "etl", want)
	h.restart()
	h.wantCommitted("after a restart", "etl", want)
}

// A transaction open when the partition is loaded stays pending, and its
// marker, written after the load, commits or drops it.
func TestLoadKeepsAnOpenTransactionPending(t *testing.T) {
	h := newHarness(t)
	h.commit(9, "etl", "", -1, map[string]map[int32]int64{"foo": {0: 5}})
	committing := h.txnProducer("etl", 7)
	committing.mustCommit(map[string]map[int32]int64{"foo": {0: 10}})
	aborting := h.txnProducer("etl", 8)
	aborting.mustCommit(map[string]map[int32]int64{"foo": {1: 1}})
	h.restart()

	wantOffsets(t, "stable fetch after the load", h.fetch("etl", true, "foo", 0, 1), map[string]string{"foo/0": unstable, "foo/1": unstable})
	h.wantCommitted("after the load", "etl", map[string]string{"foo/0": "5/5/m5"})

	committing.mustEnd(true)
	aborting.mustEnd(false)
	want := map[string]string{"foo/0": "10/5/m10"}
	h.wantCommitted("after the markers", "etl", want)
	wantOffsets(t, "stable fetch after the markers", h.fetch("etl", true, "foo", 0, 1), map[string]string{"foo/0": "10/5/m10", "foo/1": "-1/-1/"})
	h.restart()
	h.wantCommitted("after a second restart", "etl", want)
}

// The marker is written after what the shard decided before it, and
// applies only that: offsets the producer commits while its marker is
// being written belong to its next transaction and stay pending.
func TestMarkerAppliesOnlyWhatItFollows(t *testing.T) {
	h := newHarness(t)
	x := h.txnProducer("etl", 7)
	x.mustCommit(map[string]map[int32]int64{"foo": {0: 10}})

	gate := make(chan struct{})
	h.log.mu.Lock()
	h.log.appendGate = gate
	h.log.mu.Unlock()
	s := h.c.shard(PartitionFor("etl", testPartitions))
	ended := make(chan error, 1)
	go func() { ended <- x.end(true, 0) }()
	h.eventually("the marker's append", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.writer.Writing()
	})
	next := make(chan map[string]int16, 1)
	go func() { next <- x.commit(map[string]map[int32]int64{"foo": {0: 30, 1: 31}}) }()
	h.eventually("the next commit queued", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.writer.Queued() == 1
	})
	// Until the marker is written, the transaction is not committed.
	wantOffsets(t, "while the marker is written", h.fetch("etl", false, "foo", 0), map[string]string{"foo/0": "-1/-1/"})
	wantOffsets(t, "stable, while the marker is written", h.fetch("etl", true, "foo", 0), map[string]string{"foo/0": unstable})
	close(gate)
	h.log.mu.Lock()
	h.log.appendGate = nil
	h.log.mu.Unlock()
	if err := <-ended; err != nil {
		t.Fatalf("marker: %v", err)
	}
	for k, code := range <-next {
		wantCode(t, "next commit "+k, code, 0)
	}

	check := func(when string) {
		t.Helper()
		wantOffsets(t, when, h.fetch("etl", false, "foo", 0, 1), map[string]string{"foo/0": "10/5/m10", "foo/1": "-1/-1/"})
		wantOffsets(t, when+", stable", h.fetch("etl", true, "foo", 0, 1), map[string]string{"foo/0": unstable, "foo/1": unstable})
	}
	check("after the first marker")
	h.restart()
	check("after a restart")
	x.mustEnd(true)
	wantOffsets(t, "after the second marker", h.fetch("etl", true, "foo", 0, 1), map[string]string{"foo/0": "30/5/m30", "foo/1": "31/5/m31"})
}

// TxnOffsetCommit checks who commits as Kafka does for classic groups
// (KIP-447 fences a zombie by its group generation), and answers the
// request's other errors.
func TestTxnOffsetCommitValidation(t *testing.T) {
	h := newHarness(t)
	m := h.newMember("g", "c")
	wantCode(t, "join", m.join().ErrorCode, 0)
	wantCode(t, "sync", m.sync(nil).ErrorCode, 0)
	one := map[string]map[int32]int64{"foo": {0: 1}}
	code := func(x *txnProducer) int16 { return x.commit(one)["foo/0"] }
	as := func(group, member string, generation int32) *txnProducer {
		x := h.txnProducer(group, 7)
		x.memberID, x.generation = member, generation
		return x
	}

	wantCode(t, "member of the generation", code(as("g", m.id, 1)), 0)
	wantCode(t, "old generation", code(as("g", m.id, 0)), illegalGeneration)
	wantCode(t, "newer generation", code(as("g", m.id, 2)), illegalGeneration)
	wantCode(t, "unknown member", code(as("g", "zombie", 1)), unknownMemberID)
	wantCode(t, "member without generation", code(as("g", m.id, -1)), illegalGeneration)
	wantCode(t, "unknown group with a generation", code(as("missing", "x", 1)), illegalGeneration)
	// Without member and generation (v0-2 carry neither) any group
	// accepts the commit, unlike OffsetCommit.
	wantCode(t, "no member, group with members", code(as("g", "", -1)), 0)
	old := as("g", "zombie", 7)
	old.version = 2
	wantCode(t, "v2 ignores member and generation", code(old), 0)
	wantCode(t, "OffsetCommit without member", commitCodes(h.commit(9, "g", "", -1, one))["foo/0"], unknownMemberID)

	// A rebalance in progress does not refuse it.
	r := h.newMember("rebalancing", "c")
	wantCode(t, "join", r.join().ErrorCode, 0) // CompletingRebalance until its sync
	wantCode(t, "OffsetCommit before sync", commitCodes(h.commit(9, "rebalancing", r.id, 1, one))["foo/0"], rebalanceInProgress)
	wantCode(t, "TxnOffsetCommit before sync", code(as("rebalancing", r.id, 1)), 0)

	// Static members: the instance id must map to the member id.
	st := h.newMember("static", "c")
	st.instanceID = kmsg.StringPtr("i1")
	wantCode(t, "static join", st.join().ErrorCode, 0)
	wantCode(t, "static sync", st.sync(nil).ErrorCode, 0)
	fenced := as("static", "other", 1)
	fenced.instanceID = kmsg.StringPtr("i1")
	wantCode(t, "fenced instance", code(fenced), fencedInstanceID)
	owner := as("static", st.id, 1)
	owner.instanceID = kmsg.StringPtr("i1")
	wantCode(t, "static member", code(owner), 0)

	// Topics, metadata, group id, producer.
	codes := h.txnProducer("g", 7).commit(map[string]map[int32]int64{"foo": {0: 1, 3: 1}, "nope": {0: 1}})
	if codes["foo/0"] != 0 || codes["foo/3"] != unknownTopicOrPartition || codes["nope/0"] != unknownTopicOrPartition {
		t.Fatalf("unknown partitions: %v", codes)
	}
	req := h.txnProducer("g", 7).request(map[string]map[int32]int64{"foo": {1: 1, 2: 2}})
	req.Topics[0].Partitions[0].Metadata = kmsg.StringPtr(strings.Repeat("x", 4097))
	req.Topics[0].Partitions[1].Metadata = kmsg.StringPtr(strings.Repeat("x", 4096))
	resp := h.c.TxnOffsetCommit(context.Background(), req)
	wantCode(t, "metadata 4097", resp.Topics[0].Partitions[0].ErrorCode, offsetMetadataTooLarge)
	wantCode(t, "metadata 4096", resp.Topics[0].Partitions[1].ErrorCode, 0)
	wantCode(t, "empty group id", code(h.txnProducer("", 7)), invalidGroupID)
	wantCode(t, "no producer", code(h.txnProducer("g", -1)), invalidRequest)
	h.c.OnResignation(PartitionFor("g", testPartitions))
	wantCode(t, "resigned partition", code(h.txnProducer("g", 7)), notCoordinator)
}

// The log fences markers and transactional writes of an older producer
// or transaction coordinator epoch (the broker's log, here a real
// storage.Log): the marker's error goes back to the transaction
// coordinator and the transaction stays pending until a marker of the
// current epochs ends it.
func TestMarkersAndCommitsFencedByTheLog(t *testing.T) {
	var sl *runtimetest.StorageLog
	h := newHarness(t, func(cfg *Config) {
		sl = runtimetest.NewStorageLog(t, OffsetsTopic, cfg.Clock)
		cfg.Log = sl
	})
	x := h.txnProducer("etl", 7)
	x.mustCommit(map[string]map[int32]int64{"foo": {0: 10}})
	if err := x.end(true, 5); err != nil {
		t.Fatalf("marker at coordinator epoch 5: %v", err)
	}

	// The producer's next transaction, at a bumped epoch.
	x.epoch = 1
	x.mustCommit(map[string]map[int32]int64{"foo": {0: 20}})
	wantCode(t, "marker from an older coordinator epoch", errCode(x.end(true, 4)), kerr.TransactionCoordinatorFenced.Code)
	zombie := *x
	zombie.epoch = 0
	wantCode(t, "marker from an older producer epoch", errCode(zombie.end(false, 5)), kerr.InvalidProducerEpoch.Code)
	// Refused markers leave the shard serving (no reload) and the
	// transaction pending.
	wantOffsets(t, "after the fenced markers", h.fetch("etl", false, "foo", 0), map[string]string{"foo/0": "10/5/m10"})
	wantOffsets(t, "stable, after the fenced markers", h.fetch("etl", true, "foo", 0), map[string]string{"foo/0": unstable})

	// A zombie's transactional offsets are refused too; the shard reloads
	// (its memory had them) and still has the current transaction's.
	wantCode(t, "commit from an older producer epoch", zombie.commit(map[string]map[int32]int64{"foo": {1: 99}})["foo/1"], kerr.InvalidProducerEpoch.Code)
	h.waitLoaded()
	wantOffsets(t, "stable, after the zombie", h.fetch("etl", true, "foo", 0, 1), map[string]string{"foo/0": unstable, "foo/1": "-1/-1/"})

	if err := x.end(true, 5); err != nil {
		t.Fatalf("marker of the current epochs: %v", err)
	}
	want := map[string]string{"foo/0": "20/5/m20"}
	h.wantCommitted("after the commit", "etl", want)
	h.restart()
	h.wantCommitted("after a restart", "etl", want)
	if lso, leo := sl.Partition(PartitionFor("etl", testPartitions)).LastStableOffset(), sl.Partition(PartitionFor("etl", testPartitions)).LogEndOffset(); lso != leo {
		t.Fatalf("last stable offset %d, log end %d: a transaction is still open in the log", lso, leo)
	}
}

// CompleteTransaction's errors, which the replica manager hands back to
// the transaction coordinator (as NOT_LEADER_OR_FOLLOWER for the
// coordinator errors, which it retries).
func TestCompleteTransactionErrors(t *testing.T) {
	h := newHarness(t)
	x := h.txnProducer("etl", 7)
	x.mustCommit(map[string]map[int32]int64{"foo": {0: 10}})
	ctx := context.Background()
	if err := h.c.CompleteTransaction(ctx, storage.TopicPartition{Topic: "foo"}, 7, 0, 0, true); err == nil {
		t.Fatal("a marker for a partition of another topic was accepted")
	}
	p := PartitionFor("etl", testPartitions)
	h.c.OnResignation(p)
	wantCode(t, "resigned partition", errCode(x.end(true, 0)), notCoordinator)

	gate := make(chan struct{})
	h.log.mu.Lock()
	h.log.readGate = gate
	h.log.mu.Unlock()
	h.c.OnElection(p, h.epoch+1)
	wantCode(t, "loading partition", errCode(x.end(true, 0)), coordinatorLoadInProgress)
	close(gate)
	h.log.mu.Lock()
	h.log.readGate = nil
	h.log.mu.Unlock()
	h.waitLoaded()

	// A marker whose write outlives its caller's deadline answers
	// REQUEST_TIMED_OUT; written later, it still commits.
	gate = make(chan struct{})
	h.log.mu.Lock()
	h.log.appendGate = gate
	h.log.mu.Unlock()
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	err := h.c.CompleteTransaction(short, storage.TopicPartition{Topic: OffsetsTopic, Partition: p}, 7, 0, 0, true)
	wantCode(t, "marker past its deadline", errCode(err), kerr.RequestTimedOut.Code)
	close(gate)
	h.log.mu.Lock()
	h.log.appendGate = nil
	h.log.mu.Unlock()
	h.eventually("the late marker applied", func() bool {
		offs, _ := h.fetchAll("etl")
		return offs["foo/0"] == "10/5/m10"
	})
}

// A partition an open transaction committed for keeps its committed
// offset past the retention, and a group with an open transaction is not
// deleted as empty (KAFKA-19163); once the transactions end, both expire
// as usual.
func TestOpenTransactionsHoldOffsetExpiration(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.OffsetsRetention = time.Hour
		c.OffsetsRetentionCheckInterval = time.Minute
	})
	only := h.txnProducer("only-pending", 7)
	only.mustCommit(map[string]map[int32]int64{"foo": {0: 1}})
	h.commit(9, "both", "", -1, map[string]map[int32]int64{"foo": {0: 1}})
	both := h.txnProducer("both", 8)
	both.mustCommit(map[string]map[int32]int64{"foo": {0: 2}})

	h.advance(2 * time.Hour)
	if lg := h.listGroups(nil, nil); len(lg) != 2 || lg[0] != "both/Empty" || lg[1] != "only-pending/Empty" {
		t.Fatalf("groups with open transactions past the retention: %v", lg)
	}
	wantOffsets(t, "committed offset under an open transaction", h.fetch("both", false, "foo", 0), map[string]string{"foo/0": "1/5/m1"})

	only.mustEnd(false)
	both.mustEnd(true)
	wantOffsets(t, "after the commit", h.fetch("both", true, "foo", 0), map[string]string{"foo/0": "2/5/m2"})
	// The transaction's offset is as old as its TxnOffsetCommit: past the
	// retention, like the group left with nothing.
	h.advance(2 * time.Minute)
	if lg := h.listGroups(nil, nil); len(lg) != 0 {
		t.Fatalf("groups once the transactions ended: %v", lg)
	}
}

// OffsetDelete and DeleteGroups delete the offsets open transactions
// committed (tombstones for their partitions): a commit marker then has
// nothing to apply.
func TestDeletionsRemovePendingOffsets(t *testing.T) {
	h := newHarness(t)
	x := h.txnProducer("od", 7)
	x.mustCommit(map[string]map[int32]int64{"foo": {0: 10, 1: 11}})
	req := kmsg.NewPtrOffsetDeleteRequest()
	req.Group = "od"
	req.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "foo", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
	dr := h.c.OffsetDelete(context.Background(), req)
	if dr.ErrorCode != 0 || dr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("OffsetDelete: %+v", dr)
	}
	wantOffsets(t, "after OffsetDelete", h.fetch("od", true, "foo", 0, 1), map[string]string{"foo/0": "-1/-1/", "foo/1": unstable})
	x.mustEnd(true)
	h.wantCommitted("after the commit", "od", map[string]string{"foo/1": "11/5/m11"})

	y := h.txnProducer("dg", 8)
	h.commit(9, "dg", "", -1, map[string]map[int32]int64{"foo": {0: 1}})
	y.mustCommit(map[string]map[int32]int64{"foo": {0: 2, 2: 3}})
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"dg"}
	wantCode(t, "DeleteGroups", h.c.DeleteGroups(context.Background(), del).Groups[0].ErrorCode, 0)
	var tombstones []string
	for _, r := range h.log.records(t, PartitionFor("dg", testPartitions)) {
		if r.offsetKey != nil && r.offsetKey.Group == "dg" && r.offsetValue == nil {
			tombstones = append(tombstones, fmt.Sprintf("%s/%d", r.offsetKey.Topic, r.offsetKey.Partition))
		}
	}
	if want := []string{"foo/0", "foo/2"}; strings.Join(tombstones, ",") != strings.Join(want, ",") {
		t.Fatalf("offset tombstones %v, want %v", tombstones, want)
	}
	y.mustEnd(true)
	check := func(when string) {
		t.Helper()
		wantOffsets(t, when, h.fetch("dg", true, "foo", 0, 2), map[string]string{"foo/0": "-1/-1/", "foo/2": "-1/-1/"})
		h.wantCommitted(when+": od", "od", map[string]string{"foo/1": "11/5/m11"})
	}
	check("after the deleted group's commit marker")
	h.restart()
	check("after a restart")
}

// Deleting a topic deletes the offsets open transactions committed for
// it (OffsetMetadataManager.onPartitionsDeleted): a topic created again
// under the name must not inherit them when the transaction commits.
func TestDeletedTopicRemovesPendingOffsets(t *testing.T) {
	h := newHarness(t)
	x := h.txnProducer("etl", 7)
	x.mustCommit(map[string]map[int32]int64{"foo": {0: 10}, "bar": {0: 20}})
	h.c.OnMetadataDelta(&raftmeta.Delta{DeletedTopics: []*raftmeta.Topic{h.img.Load().Topics["foo"]}})
	wantOffsets(t, "stable fetch after deleting foo", h.fetch("etl", true, "foo", 0), map[string]string{"foo/0": "-1/-1/"})
	x.mustEnd(true)
	h.wantCommitted("after the commit", "etl", map[string]string{"bar/0": "20/5/m20"})
	h.restart()
	h.wantCommitted("after a restart", "etl", map[string]string{"bar/0": "20/5/m20"})
}
