package chaos

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/strait-io/strait/storage"
	"github.com/strait-io/strait/storage/clock"
	"github.com/strait-io/strait/storage/record"
	"github.com/strait-io/strait/storage/vfs"
)

// TestCheckCountsViolations feeds the audit a read-back with one of each
// violation: the chaos tests' zero counts mean something only if check
// counts what it claims to.
func TestCheckCountsViolations(t *testing.T) {
	at := time.Now()
	acked := map[string]ack{
		"p1-0": {0, 0, at}, // read where acknowledged
		"p1-1": {0, 1, at}, // lost
		"p1-2": {1, 0, at}, // read twice
		"p1-3": {1, 5, at}, // read at another offset
	}
	recs := []stored{
		{0, 0, "p1-0"},
		{1, 0, "p1-2"},
		{1, 1, "p1-2"},
		{1, 2, "p1-3"},
		{1, 3, "p2-9"}, // never acknowledged
	}
	a, problems := check(acked, recs, 1)
	want := audit{acked: 4, read: 5, lost: 1, dups: 1, misplaced: 1, unordered: 1, unacked: 1}
	if a != want {
		t.Errorf("check = %v, want %v", a, want)
	}
	if len(problems) != 3 {
		t.Errorf("problems = %q, want one per lost, duplicate and misplaced record", problems)
	}
}

// TestReadBatchesFindsDivergence builds two logs that agree on their
// first batches and differ on the last, in small segments read a few
// hundred bytes at a time (so reads end inside batches): the replica
// comparison must see them equal below the divergence and different
// above it.
func TestReadBatchesFindsDivergence(t *testing.T) {
	open := func(name string) *storage.Log {
		m, err := storage.OpenManager(t.TempDir(), storage.ManagerOptions{FS: vfs.OS{}, Clock: clock.Real{}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close() })
		cfg := storage.DefaultLogConfig()
		cfg.SegmentBytes = 1024
		l, err := m.GetOrCreateLog(storage.TopicPartition{Topic: name, Partition: 0}, storage.TopicID{1}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	appendBatch := func(l *storage.Log, epoch int32, values ...string) {
		var recs []record.Record
		for _, v := range values {
			recs = append(recs, record.Record{KeyLen: -1, Value: []byte(v), ValueLen: int32(len(v))})
		}
		b, err := record.Build(record.BatchSpec{ProducerID: record.NoProducerID, ProducerEpoch: -1, BaseSequence: record.NoSequence, BaseTimestamp: 1}, recs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.AppendAsLeader(b, epoch, record.OriginClient); err != nil {
			t.Fatal(err)
		}
	}
	a, b := open("a"), open("b")
	const batches = 40
	for i := range batches {
		v := fmt.Sprintf("value-%03d-%s", i, bytes.Repeat([]byte("x"), 60))
		appendBatch(a, 0, v, v)
		appendBatch(b, 0, v, v)
	}
	appendBatch(a, 1, "from the leader")
	appendBatch(b, 0, "an unreplicated suffix")
	if len(a.Segments()) < 3 {
		t.Fatalf("%d segments, want several", len(a.Segments()))
	}
	common := int64(2 * batches)
	read := func(l *storage.Log, to int64) []byte {
		got, err := readBatches(l, 0, to, 300)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if ga, gb := read(a, common), read(b, common); !bytes.Equal(ga, gb) || len(ga) == 0 {
		t.Errorf("the logs differ below offset %d (%d and %d bytes)", common, len(ga), len(gb))
	}
	if bytes.Equal(read(a, common+1), read(b, common+1)) {
		t.Errorf("the logs compare equal up to offset %d, past their divergence", common+1)
	}
	whole, err := logBytes(a, 0, common+1)
	if err != nil || !bytes.Equal(whole, read(a, common+1)) {
		t.Errorf("reading in one go and in pieces disagree (err %v)", err)
	}
}

// TestCheckTxnsCountsViolations feeds the transaction audit a
// read_committed read-back with one of each violation, as
// TestCheckCountsViolations does for check.
func TestCheckTxnsCountsViolations(t *testing.T) {
	txns := []txn{
		{producer: "a", seq: 0, values: []string{"a-0-0", "a-0-1"}, outcome: txnCommitted},              // whole
		{producer: "a", seq: 1, values: []string{"a-1-0", "a-1-1", "a-1-2"}, outcome: txnCommitted},     // one lost: partial
		{producer: "a", seq: 2, values: []string{"a-2-0"}, outcome: txnAborted},                         // visible
		{producer: "b", seq: 0, values: []string{"b-0-0", "b-0-1"}, outcome: txnUncertain, why: "lost"}, // visible whole
		{producer: "b", seq: 1, values: []string{"b-1-0", "b-1-1"}, outcome: txnUncertain, why: "lost"}, // half visible
		{producer: "b", seq: 2, values: []string{"b-2-0"}, outcome: txnAborted},                         // not visible
	}
	recs := []stored{
		{0, 0, "a-0-0"}, {0, 1, "a-0-1"},
		{0, 3, "a-1-0"}, {1, 0, "a-1-1"},
		{1, 2, "a-2-0"},
		{1, 4, "b-0-0"}, {2, 0, "b-0-1"},
		{2, 1, "b-1-0"},
		{2, 2, "a-0-0"}, // a duplicate
		{2, 3, "x-0-0"}, // written by no transaction
	}
	a, problems := checkTxns(txns, recs, 1)
	want := txnAudit{committed: 2, aborted: 2, uncertain: 2, committedRecords: 5, uncertainVisible: 1, read: 10,
		lost: 1, abortedVisible: 1, partial: 2, dups: 1, unknown: 1, unordered: 1}
	if a != want {
		t.Errorf("checkTxns = %v, want %v", a, want)
	}
	if a.ok() {
		t.Error("ok() with violations")
	}
	if len(problems) != 6 {
		t.Errorf("problems = %q, want two partial transactions, one lost, one aborted visible, one duplicate, one unknown", problems)
	}
}
