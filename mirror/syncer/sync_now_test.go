package syncer

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/raftmeta"
)

// TestGroupPlanOutcomes: every partition a round considers is reported
// once, with the destination's offset after the round: a planned commit
// as decide says, the others unchanged at the destination's offset; a
// partition the round does not consider (another topic, nothing
// committed, not on the destination) is not reported.
func TestGroupPlanOutcomes(t *testing.T) {
	v := &mirrorView{active: map[string]*raftmeta.Topic{"orders": {Name: "orders"}}}
	resp := offsetResponses
	src := resp(
		kadm.Offset{Topic: "orders", Partition: 0, At: 30, LeaderEpoch: 2},
		kadm.Offset{Topic: "orders", Partition: 1, At: 500, LeaderEpoch: 2}, // past the end: clamped
		kadm.Offset{Topic: "orders", Partition: 2, At: 9, LeaderEpoch: 2},   // already there
		kadm.Offset{Topic: "orders", Partition: 3, At: 9, LeaderEpoch: 2},   // not on the destination
		kadm.Offset{Topic: "payments", Partition: 0, At: 9, LeaderEpoch: 2}, // not mirrored
		kadm.Offset{Topic: "orders", Partition: 4, At: -1, LeaderEpoch: -1}, // nothing committed
	)
	dst := resp(kadm.Offset{Topic: "orders", Partition: 2, At: 9, LeaderEpoch: 2}, kadm.Offset{Topic: "orders", Partition: 1, At: 120, LeaderEpoch: 1})
	bounds := map[string]map[int32]logBounds{"orders": {0: {0, 100}, 1: {0, 100}, 2: {0, 100}, 4: {0, 100}}}
	pl := groupPlan{src: src, dst: dst, commit: groupCommits(v, src, dst, bounds)}
	got := pl.outcomes(v, bounds, func(c kadm.Offset, cur int64) (int64, Outcome) {
		if c.Partition == 1 {
			return cur, OutcomeAhead // as the coordinator's compare-and-set would keep it
		}
		return c.At, OutcomeSynced
	})
	want := []PartitionOffset{
		{Topic: "orders", Partition: 0, Source: 30, Target: 30, Committed: 30, Outcome: OutcomeSynced},
		{Topic: "orders", Partition: 1, Source: 500, Target: 100, Committed: 120, Outcome: OutcomeAhead},
		{Topic: "orders", Partition: 2, Source: 9, Target: 9, Committed: 9, Outcome: OutcomeUnchanged},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("outcomes\n got %+v\nwant %+v", got, want)
	}
}
