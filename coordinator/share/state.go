package share

// partitionState is what a shard knows of one share-partition: the state
// its snapshot and the updates since describe (Kafka's ShareGroupOffset,
// in shareStateMap), and the epochs that fence older writers
// (leaderEpochMap, stateEpochMap), which only grow.
type partitionState struct {
	snapshotEpoch         int32
	stateEpoch            int32
	leaderEpoch           int32
	startOffset           int64
	deliveryCompleteCount int32
	batches               []StateBatch
	createTimestamp       int64
	writeTimestamp        int64

	// fenceLeaderEpoch and fenceStateEpoch are the highest leader and
	// state epochs any record of the share-partition carried: a read or
	// write at an older leader epoch, a write or initialize at an older
	// state epoch, is fenced.
	fenceLeaderEpoch int32
	fenceStateEpoch  int32

	// updates counts the update records since the last snapshot: once it
	// reaches share.coordinator.snapshot.update.records.per.snapshot the
	// next write is a snapshot.
	updates int
}

// states are a shard's share-partitions and their replay: the one place
// records change memory, whether read while loading or decided by a
// request (the runtime replays what a request decides, as Kafka's
// CoordinatorRuntime replays the records an operation returns), so a
// reloaded shard holds what the live one held.
type states map[Key]*partitionState

// replaySnapshot applies a ShareSnapshotValue (handleShareSnapshot): the
// whole state is replaced, the fencing epochs rise to the snapshot's, and
// the update count starts again.
func (m states) replaySnapshot(k Key, v SnapshotValue) {
	st := m[k]
	if st == nil {
		st = &partitionState{fenceLeaderEpoch: v.LeaderEpoch, fenceStateEpoch: v.StateEpoch}
		m[k] = st
	}
	st.snapshotEpoch, st.stateEpoch, st.leaderEpoch = v.SnapshotEpoch, v.StateEpoch, v.LeaderEpoch
	st.startOffset, st.deliveryCompleteCount = v.StartOffset, v.DeliveryCompleteCount
	st.batches = v.StateBatches
	st.createTimestamp, st.writeTimestamp = v.CreateTimestamp, v.WriteTimestamp
	st.fenceLeaderEpoch = max(st.fenceLeaderEpoch, v.LeaderEpoch)
	st.fenceStateEpoch = max(st.fenceStateEpoch, v.StateEpoch)
	st.updates = 0
}

// replayUpdate applies a ShareUpdateValue (handleShareUpdate and merge): a
// start offset or leader epoch of -1 leaves the current one, the new
// batches are combined with the current ones above the start offset, and
// the snapshot epoch, state epoch and timestamps stay. An update of a
// share-partition with no snapshot starts its state, as Kafka's does.
func (m states) replayUpdate(k Key, v UpdateValue) {
	st := m[k]
	if st == nil {
		m[k] = &partitionState{
			snapshotEpoch:         v.SnapshotEpoch,
			leaderEpoch:           v.LeaderEpoch,
			startOffset:           v.StartOffset,
			deliveryCompleteCount: v.DeliveryCompleteCount,
			batches:               combineBatches(nil, v.StateBatches, v.StartOffset),
			fenceLeaderEpoch:      v.LeaderEpoch,
			updates:               1,
		}
		return
	}
	if v.StartOffset != -1 {
		st.startOffset = v.StartOffset
	}
	if v.LeaderEpoch != -1 {
		st.leaderEpoch = v.LeaderEpoch
	}
	st.batches = combineBatches(st.batches, v.StateBatches, st.startOffset)
	st.deliveryCompleteCount = v.DeliveryCompleteCount
	st.fenceLeaderEpoch = max(st.fenceLeaderEpoch, v.LeaderEpoch)
	st.updates++
}

// replayTombstone removes a share-partition (DeleteShareGroupState).
func (m states) replayTombstone(k Key) { delete(m, k) }

// snapshotOf is the snapshot of st's whole state.
func (st *partitionState) snapshotOf() SnapshotValue {
	return SnapshotValue{
		SnapshotEpoch:         st.snapshotEpoch,
		StateEpoch:            st.stateEpoch,
		LeaderEpoch:           st.leaderEpoch,
		StartOffset:           st.startOffset,
		CreateTimestamp:       st.createTimestamp,
		WriteTimestamp:        st.writeTimestamp,
		StateBatches:          st.batches,
		DeliveryCompleteCount: st.deliveryCompleteCount,
	}
}
