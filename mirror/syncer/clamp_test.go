package syncer

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/raftmeta"
)

func TestSyncedOffset(t *testing.T) {
	for _, tc := range []struct {
		committed     int64
		epoch         int32
		logStart, end int64
		wantOff       int64
		wantEpoch     int32
	}{
		{30, 4, 0, 100, 30, 4},    // inside the log: as committed, with its epoch
		{100, 4, 0, 100, 100, 4},  // at the end
		{150, 4, 0, 100, 100, -1}, // destination behind: its end
		{5, 2, 10, 100, 10, -1},   // deleted on the destination: its log start
		{0, 0, 0, 0, 0, 0},        // empty log
		{7, 3, 10, 8, 10, -1},     // log start wins over end
	} {
		off, ep := syncedOffset(tc.committed, tc.epoch, tc.logStart, tc.end)
		if off != tc.wantOff || ep != tc.wantEpoch {
			t.Errorf("syncedOffset(%d, %d, [%d, %d]) = %d, %d; want %d, %d", tc.committed, tc.epoch, tc.logStart, tc.end, off, ep, tc.wantOff, tc.wantEpoch)
		}
	}
}

// offsetResponses is an OffsetFetch answer holding os.
func offsetResponses(os ...kadm.Offset) kadm.OffsetResponses {
	out := kadm.OffsetResponses{}
	for _, o := range os {
		out.Add(kadm.OffsetResponse{Offset: o})
	}
	return out
}

func TestGroupCommits(t *testing.T) {
	v := &mirrorView{active: map[string]*raftmeta.Topic{"orders": {Name: "orders"}}}
	resp := offsetResponses
	src := resp(
		kadm.Offset{Topic: "orders", Partition: 0, At: 30, LeaderEpoch: 2, Metadata: "m"},
		kadm.Offset{Topic: "orders", Partition: 1, At: 500, LeaderEpoch: 2},
		kadm.Offset{Topic: "orders", Partition: 2, At: 9, LeaderEpoch: 2},   // already there
		kadm.Offset{Topic: "orders", Partition: 3, At: 9, LeaderEpoch: 2},   // partition not on the destination yet
		kadm.Offset{Topic: "payments", Partition: 0, At: 9, LeaderEpoch: 2}, // not a mirrored topic
		kadm.Offset{Topic: "orders", Partition: 4, At: -1, LeaderEpoch: -1}, // nothing committed
	)
	dst := resp(kadm.Offset{Topic: "orders", Partition: 2, At: 9, LeaderEpoch: 2})
	bounds := map[string]map[int32]logBounds{"orders": {0: {0, 100}, 1: {0, 100}, 2: {0, 100}, 4: {0, 100}}}
	got := groupCommits(v, src, dst, bounds)
	want := []kadm.Offset{
		{Topic: "orders", Partition: 0, At: 30, LeaderEpoch: 2, Metadata: "m"},
		{Topic: "orders", Partition: 1, At: 100, LeaderEpoch: -1},
	}
	sorted := got.Sorted()
	if len(sorted) != len(want) {
		t.Fatalf("commits %+v, want %+v", sorted, want)
	}
	for i := range want {
		if sorted[i] != want[i] {
			t.Errorf("commit %d: %+v, want %+v", i, sorted[i], want[i])
		}
	}
	if gi := groupInactive; !gi("") || !gi("Empty") || !gi("Dead") || gi("Stable") || gi("PreparingRebalance") || gi("CompletingRebalance") {
		t.Error("groupInactive: want only '', Empty and Dead")
	}
}

// TestShareGroupAlters: a share group's start offsets are synced like
// committed offsets: mirrored topics only, uninitialized partitions
// skipped, clamped into the destination log, unchanged ones left alone.
func TestShareGroupAlters(t *testing.T) {
	v := &mirrorView{active: map[string]*raftmeta.Topic{"orders": {Name: "orders"}}}
	so := func(topic string, p int32, start int64) kadm.ShareOffset {
		return kadm.ShareOffset{Topic: topic, Partition: p, StartOffset: start, LeaderEpoch: 3}
	}
	offsets := func(os ...kadm.ShareOffset) kadm.ShareOffsets {
		out := kadm.ShareOffsets{}
		for _, o := range os {
			if out[o.Topic] == nil {
				out[o.Topic] = map[int32]kadm.ShareOffset{}
			}
			out[o.Topic][o.Partition] = o
		}
		return out
	}
	bounds := map[string]map[int32]logBounds{"orders": {0: {0, 100}, 1: {10, 100}, 2: {0, 50}, 3: {0, 100}, 4: {0, 100}}}
	src := offsets(
		so("orders", 0, 40),   // synced as is
		so("orders", 1, 5),    // below the destination's log start
		so("orders", 2, 80),   // beyond the destination's end
		so("orders", 3, -1),   // never initialized on the source
		so("orders", 4, 60),   // the destination already has it
		so("orders", 9, 7),    // no such destination partition yet
		so("payments", 0, 20), // not mirrored
	)
	dst := offsets(so("orders", 4, 60), so("orders", 0, 12))
	got := shareGroupAlters(v, src, dst, bounds)
	want := map[int32]int64{0: 40, 1: 10, 2: 50}
	n := 0
	got.Each(func(o kadm.Offset) {
		n++
		if o.Topic != "orders" || want[o.Partition] != o.At || o.LeaderEpoch != -1 {
			t.Errorf("alter %s/%d to %d (epoch %d), want %v", o.Topic, o.Partition, o.At, o.LeaderEpoch, want)
		}
	})
	if n != len(want) {
		t.Fatalf("%d alters, want %d: %v", n, len(want), got)
	}
}
