package broker

import (
	"github.com/strait-io/strait/mirror/manager"
	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/replication"
	"github.com/strait-io/strait/storage"
)

// mirrorDestination is the mirror manager's Destination over the replica
// manager, which may not import mirror (DESIGN.md: mirror drives
// replication): it returns the replica manager's handle as a
// LeaderPartition and translates the machine's access to replication's.
type mirrorDestination struct{ rm *replication.ReplicaManager }

var (
	_ manager.Destination     = mirrorDestination{}
	_ manager.LeaderPartition = (*replication.MirrorLeaderPartition)(nil)
)

func (d mirrorDestination) MirrorLeader(tp storage.TopicPartition, leaderEpoch int32) (manager.LeaderPartition, error) {
	lp, err := d.rm.MirrorLeader(tp, leaderEpoch)
	if err != nil {
		return nil, err // not a non-nil interface holding a nil handle
	}
	return lp, nil
}

func (d mirrorDestination) SetMirrorAccess(tp storage.TopicPartition, leaderEpoch int32, a partition.Access) bool {
	return d.rm.SetMirrorAccess(tp, leaderEpoch, replicationAccess(a))
}

// replicationAccess is the machine's access as replication names it.
func replicationAccess(a partition.Access) replication.MirrorAccess {
	switch a {
	case partition.AccessReadOnly:
		return replication.MirrorAccessReadOnly
	case partition.AccessWritable:
		return replication.MirrorAccessWritable
	}
	return replication.MirrorAccessUnknown
}
