package broker

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strait-io/strait/mirror/manager"
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/storage"
)

// TestPartitionDetailObservability: describe carries the manager's lag in
// milliseconds and retry count as they are (tags 2 and 3).
func TestPartitionDetailObservability(t *testing.T) {
	ps := manager.PartitionStatus{Topic: "t", Partition: 2, State: partition.StateFailed, SourceHighWatermark: 50,
		DestinationLogEndOffset: 40, Lag: 10, LagMs: 1234, LastMirrorEpoch: 3, LastError: "boom", OffsetsSkipped: 7,
		RetryAttempt: 4}
	d := partitionDetail(ps)
	if d.PartitionIndex != 2 || d.State != "FAILED" || d.SourceOffset != 50 || d.DestinationOffset != 40 || d.Lag != 10 ||
		d.LagMs != 1234 || d.RetryCount != 4 || d.LastMirrorEpoch != 3 || d.OffsetsSkipped != 7 ||
		d.ErrorMessage == nil || *d.ErrorMessage != "boom" {
		t.Fatalf("detail %+v", d)
	}
	unknown := partitionDetail(manager.PartitionStatus{State: partition.StateMirroring, SourceHighWatermark: -1,
		DestinationLogEndOffset: -1, Lag: -1, LagMs: -1, LastMirrorEpoch: -1, RetryAttempt: -1})
	if unknown.LagMs != -1 || unknown.RetryCount != -1 || unknown.ErrorMessage != nil {
		t.Fatalf("unknown detail %+v", unknown)
	}
}

// TestMirrorCollectorLagMs: strait_mirror_lag_ms is the mirror's
// LagMsMax, next to the lag in records and the committed lag
// (strait_mirror_lag_committed_records, NaN when a partition's is
// unknown), per mirror.
func TestMirrorCollectorLagMs(t *testing.T) {
	tp := storage.TopicPartition{Topic: "t", Partition: 0}
	st := manager.Stats{Partitions: map[partition.State]int{partition.StateMirroring: 1}, Mirrors: map[string]manager.MirrorStats{
		"a": {Partitions: map[partition.State]int{partition.StateMirroring: 1}, Lag: map[storage.TopicPartition]int64{tp: 9},
			LagTotal: 9, LagMax: 9, LagMsMax: 2500, CommittedLagTotal: 4},
		"b": {Partitions: map[partition.State]int{}},
		"c": {Partitions: map[partition.State]int{partition.StateMirroring: 2}, Lag: map[storage.TopicPartition]int64{tp: 3},
			LagTotal: 3, LagMax: 3, CommittedLagTotal: 1, CommittedLagUnknown: 1},
	}}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(newMirrorCollector(func() (manager.Stats, bool) { return st, true }))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if g := m.GetGauge(); g != nil {
				got[mf.GetName()+"/"+m.GetLabel()[0].GetValue()] = g.GetValue()
			}
		}
	}
	for k, v := range map[string]float64{"strait_mirror_lag_ms/a": 2500, "strait_mirror_lag_ms/b": 0,
		"strait_mirror_lag_records/a": 9, "strait_mirror_lag_records_max/a": 9} {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	if g, ok := got["strait_mirror_lag_committed_records/a"]; !ok || g != 4 {
		t.Errorf("strait_mirror_lag_committed_records/a = %v (present %v), want 4", g, ok)
	}
	if g, ok := got["strait_mirror_lag_committed_records/c"]; !ok || !math.IsNaN(g) {
		t.Errorf("strait_mirror_lag_committed_records/c = %v (present %v), want NaN", g, ok)
	}
}
