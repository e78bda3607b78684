package replication

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/raftmeta"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
	"github.com/strait-io/strait/storage"
)

// A mirror topic's partition refuses Produce and DeleteRecords while its
// access is read-only (READ_ONLY_TOPIC) or undecided in the current leader
// epoch (LEADER_NOT_AVAILABLE), appending and deleting nothing; writable
// and non-mirror topics take them. Reads and the coordinators' appends are
// not affected.
func TestMirrorAccess(t *testing.T) {
	h := newHarness(t)
	h.createTopic("m", topicSpec{configs: map[string]string{"mirror.name": "src"}})
	h.createTopic("plain", topicSpec{})
	tp := storage.TopicPartition{Topic: "m"}
	p := h.partition("m", 0)
	ctx := context.Background()

	type want struct {
		code int16
		msg  string
	}
	check := func(name string, w want, wantLEO, wantLogStart int64) {
		t.Helper()
		sp := h.produce(1, "m", 0, h.batch(name, 2))
		msg := ""
		if sp.ErrorMessage != nil {
			msg = *sp.ErrorMessage
		}
		if sp.ErrorCode != w.code || (w.code != 0 && (sp.BaseOffset != -1 || msg != w.msg)) {
			t.Fatalf("%s: produce error %d %q base %d, want %d %q", name, sp.ErrorCode, msg, sp.BaseOffset, w.code, w.msg)
		}
		dr := h.rm.DeleteRecords(ctx, deleteRecordsReq("m", map[int32]int64{0: p.Log().HighWatermark()}, 0)).Topics[0].Partitions[0]
		if dr.ErrorCode != w.code {
			t.Fatalf("%s: delete records error %d, want %d", name, dr.ErrorCode, w.code)
		}
		if leo, ls := p.Log().LogEndOffset(), p.Log().LogStartOffset(); leo != wantLEO || ls != wantLogStart {
			t.Fatalf("%s: log end %d start %d, want %d and %d", name, leo, ls, wantLEO, wantLogStart)
		}
	}
	readOnly := want{mirrormsg.ReadOnlyTopic.Code, "topic m is read-only: it is a mirror topic of cluster mirror src"}
	undecided := want{kerr.LeaderNotAvailable.Code, ""}

	check("undecided", undecided, 0, 0)
	if h.rm.SetMirrorAccess(tp, 1, MirrorAccessWritable) || h.rm.SetMirrorAccess(storage.TopicPartition{Topic: "x"}, 0, MirrorAccessWritable) {
		t.Fatal("SetMirrorAccess for another leader epoch or an unknown partition was taken")
	}
	check("other epoch ignored", undecided, 0, 0)
	if !h.rm.SetMirrorAccess(tp, 0, MirrorAccessReadOnly) {
		t.Fatal("SetMirrorAccess for the current epoch was ignored")
	}
	check("read-only", readOnly, 0, 0)

	// The coordinators' appends and reads still work on a read-only topic.
	if _, err := h.rm.AppendCoordinator(ctx, tp, h.batch("coord", 1)); err != nil {
		t.Fatalf("coordinator append on a read-only topic: %v", err)
	}
	if res := decodeFetch(t, h.fetch(fetchReq(12, fp("m", 0, 0))))[0]; res.ErrorCode != 0 || len(res.values) != 1 {
		t.Fatalf("fetch of a read-only topic: error %d, %d records", res.ErrorCode, len(res.values))
	}
	lo := h.rm.ListOffsets(ctx, listOffsetsReq(9, -1, 0, "m", lop(0, -1)))
	if sp := lo.Topics[0].Partitions[0]; sp.ErrorCode != 0 || sp.Offset != 1 {
		t.Fatalf("list offsets of a read-only topic: %+v", sp)
	}

	if !h.rm.SetMirrorAccess(tp, 0, MirrorAccessWritable) {
		t.Fatal("SetMirrorAccess writable was ignored")
	}
	check("writable", want{}, 3, 3)

	// A new leader epoch starts undecided.
	h.changePartition("m", 0, func(pp *raftmeta.Partition) { pp.LeaderEpoch = 1 })
	check("new epoch", undecided, 3, 3)
	h.rm.SetMirrorAccess(tp, 1, MirrorAccessReadOnly)
	check("read-only in the new epoch", readOnly, 3, 3)

	// A stopped mirror topic keeps its mirror.name (".removed"): still the
	// mirror machine's to open.
	h.setTopicConfig("m", map[string]string{"mirror.name": "src.removed"})
	check("stopped, still read-only", readOnly, 3, 3)
	// Without mirror.name the access does not matter.
	h.setTopicConfig("m", map[string]string{})
	check("no mirror.name", want{}, 5, 5)
	h.mustProduce("plain", 0, "p", 1, 0)
}
