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

func TestGroupCommits(t *testing.T) {
	v := &mirrorView{active: map[string]*raftmeta.Topic{"orders": {Name: "orders"}}}
	resp := func(os ...kadm.Offset) kadm.OffsetResponses {
		out := kadm.OffsetResponses{}
		for _, o := range os {
			if out[o.Topic] == nil {
				out[o.Topic] = map[int32]kadm.OffsetResponse{}
			}
			out[o.Topic][o.Partition] = kadm.OffsetResponse{Offset: o}
		}
		return out
	}
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
