package share

import (
	"cmp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// decision is what an operation on one share-partition decided under the
// shard lock (Kafka's CoordinatorResult): an error to answer at once, or
// the records to write and what the answer reports of the state.
type decision struct {
	code int16
	msg  *string
	recs []shareRecord
	view view
}

// view is the part of a share-partition's state that reads answer.
type view struct {
	stateEpoch            int32
	leaderEpoch           int32
	startOffset           int64
	deliveryCompleteCount int32
	batches               []StateBatch
}

// The INVALID_REQUEST messages of ShareCoordinatorShard.
var (
	msgNegativePartition  = kmsg.StringPtr("The partition id cannot be a negative number.")
	msgWriteUninitialized = kmsg.StringPtr("Write operation on uninitialized share partition not allowed.")
	msgReadUninitialized  = kmsg.StringPtr("Read operation on uninitialized share partition not allowed.")
)

// uninitializedStartOffset is the start offset of a share-partition whose
// consumption has not started (PartitionFactory.UNINITIALIZED_START_OFFSET).
const uninitializedStartOffset = -1

// refuse is a decision answering err with its description, as Kafka
// answers Errors.X.message().
func refuse(err *kerr.Error) decision {
	return decision{code: err.Code, msg: kmsg.StringPtr(err.Description)}
}

// invalid is an INVALID_REQUEST decision with msg.
func invalid(msg *string) decision { return decision{code: kerr.InvalidRequest.Code, msg: msg} }

// checkPartition refuses a negative partition and a share-partition of a
// topic or partition the metadata does not have
// (maybeGet...StateError). Called with mu held.
func (s *shard) checkPartition(k Key) (decision, bool) {
	if k.Partition < 0 {
		return invalid(msgNegativePartition), false
	}
	t := s.c.image().TopicsByID[k.TopicID]
	if t == nil || int(k.Partition) >= len(t.Partitions) {
		return refuse(kerr.UnknownTopicOrPartition), false
	}
	return decision{}, true
}

// initialize starts or resets a share-partition's state
// (ShareCoordinatorShard.initializeState): a snapshot at the request's
// state epoch and start offset, with no batches, the next snapshot epoch,
// and a delivery complete count of 0, or -1 while the start offset is not
// known yet. A state epoch older than the one recorded is
// FENCED_STATE_EPOCH; -1 is not checked.
//
// Kafka writes leader epoch 0 there, and keeps the leader epoch it fences
// with in memory only; once pruning removed the records carrying that
// epoch, a reload forgets it and an old leader is no longer fenced. A
// reset here carries the recorded leader epoch instead, so the fence
// lives in the snapshot. Called with mu held.
func (s *shard) initialize(k Key, p kmsg.InitializeShareGroupStateRequestTopicPartition) decision {
	if k.Partition < 0 {
		return invalid(msgNegativePartition)
	}
	st := s.states[k]
	if st != nil && p.StateEpoch != -1 && st.fenceStateEpoch > p.StateEpoch {
		return refuse(kerr.FencedStateEpoch)
	}
	if d, ok := s.checkPartition(k); !ok {
		return d
	}
	now := s.c.nowMs()
	v := SnapshotValue{
		StateEpoch:            p.StateEpoch,
		StartOffset:           p.StartOffset,
		CreateTimestamp:       now,
		WriteTimestamp:        now,
		DeliveryCompleteCount: 0,
	}
	if st != nil {
		v.SnapshotEpoch, v.LeaderEpoch = st.snapshotEpoch+1, st.fenceLeaderEpoch
	}
	if p.StartOffset == uninitializedStartOffset {
		v.DeliveryCompleteCount = -1
	}
	return decision{recs: []shareRecord{snapshotRecord(k, v)}}
}

// read answers a share-partition's state and records the reader's leader
// epoch when it is new (readStateAndMaybeUpdateLeaderEpoch): the
// share-partition's leader reads its state when it becomes leader, and
// from then on the leaders before it are fenced. A leader epoch of -1
// reads without fencing or recording. Called with mu held.
func (s *shard) read(k Key, leaderEpoch int32) decision {
	if k.Partition < 0 {
		return invalid(msgNegativePartition)
	}
	st := s.states[k]
	if st == nil {
		return invalid(msgReadUninitialized)
	}
	if leaderEpoch != -1 && st.fenceLeaderEpoch > leaderEpoch {
		return refuse(kerr.FencedLeaderEpoch)
	}
	if d, ok := s.checkPartition(k); !ok {
		return d
	}
	d := decision{view: st.view()}
	if leaderEpoch != -1 && leaderEpoch != st.fenceLeaderEpoch {
		d.recs = []shareRecord{s.stateRecord(k, st, stateChange{
			leaderEpoch:           leaderEpoch,
			startOffset:           st.startOffset,
			deliveryCompleteCount: st.deliveryCompleteCount,
		})}
	}
	return d
}

// write records a share-partition leader's changes (writeState): the
// start offset if not -1, and the state batches, as an update record, or
// as a snapshot once the share-partition had
// share.coordinator.snapshot.update.records.per.snapshot updates since
// its last one. A leader or state epoch older than the recorded one is
// fenced (-1 is not checked); the leader epoch a write carries is not
// recorded: the leader recorded it when it read the state. Called with mu
// held.
func (s *shard) write(k Key, p kmsg.WriteShareGroupStateRequestTopicPartition) decision {
	if k.Partition < 0 {
		return invalid(msgNegativePartition)
	}
	st := s.states[k]
	if st == nil {
		return invalid(msgWriteUninitialized)
	}
	if p.LeaderEpoch != -1 && st.fenceLeaderEpoch > p.LeaderEpoch {
		return refuse(kerr.FencedLeaderEpoch)
	}
	if p.StateEpoch != -1 && st.fenceStateEpoch > p.StateEpoch {
		return refuse(kerr.FencedStateEpoch)
	}
	if d, ok := s.checkPartition(k); !ok {
		return d
	}
	batches := make([]StateBatch, len(p.StateBatches))
	for i, b := range p.StateBatches {
		batches[i] = StateBatch{FirstOffset: b.FirstOffset, LastOffset: b.LastOffset, DeliveryState: b.DeliveryState, DeliveryCount: b.DeliveryCount}
	}
	return decision{recs: []shareRecord{s.stateRecord(k, st, stateChange{
		leaderEpoch:           st.leaderEpoch,
		startOffset:           p.StartOffset,
		deliveryCompleteCount: p.DeliveryCompleteCount,
		batches:               batches,
	})}}
}

// stateChange is what a write, or a read at a new leader epoch, changes.
type stateChange struct {
	leaderEpoch           int32
	startOffset           int64 // -1: unchanged
	deliveryCompleteCount int32
	batches               []StateBatch
}

// stateRecord is the record of a change to an existing share-partition
// (generateShareStateRecord): an update holding the change, or, once the
// share-partition had the configured number of updates, a snapshot of the
// state with the change applied, at the next snapshot epoch. Called with
// mu held.
func (s *shard) stateRecord(k Key, st *partitionState, ch stateChange) shareRecord {
	if st.updates >= int(s.c.cfg.SnapshotUpdateRecordsPerSnapshot) {
		start := ch.startOffset
		if start == -1 {
			start = st.startOffset
		}
		now := s.c.nowMs()
		return snapshotRecord(k, SnapshotValue{
			SnapshotEpoch:         st.snapshotEpoch + 1,
			StateEpoch:            st.stateEpoch,
			LeaderEpoch:           ch.leaderEpoch,
			StartOffset:           start,
			CreateTimestamp:       now,
			WriteTimestamp:        now,
			StateBatches:          combineBatches(st.batches, ch.batches, start),
			DeliveryCompleteCount: ch.deliveryCompleteCount,
		})
	}
	return updateRecord(k, UpdateValue{
		SnapshotEpoch:         st.snapshotEpoch,
		LeaderEpoch:           ch.leaderEpoch,
		StartOffset:           ch.startOffset,
		StateBatches:          combineBatches(nil, ch.batches, ch.startOffset),
		DeliveryCompleteCount: ch.deliveryCompleteCount,
	})
}

// summary answers a share-partition's start offset and epochs
// (readStateSummary): for one without state, start offset -1 and epochs
// 0. Nothing is fenced or written. Called with mu held.
func (s *shard) summary(k Key) decision {
	if d, ok := s.checkPartition(k); !ok {
		return d
	}
	st := s.states[k]
	if st == nil {
		return decision{view: view{startOffset: uninitializedStartOffset, deliveryCompleteCount: -1}}
	}
	return decision{view: st.view()}
}

// remove deletes a share-partition's state with a tombstone (deleteState);
// one without state is deleted already. Called with mu held.
func (s *shard) remove(k Key) decision {
	if d, ok := s.checkPartition(k); !ok {
		return d
	}
	if s.states[k] == nil {
		return decision{}
	}
	return decision{recs: []shareRecord{tombstoneRecord(k)}}
}

// view is what reads answer of st.
func (st *partitionState) view() view {
	return view{
		stateEpoch:            st.stateEpoch,
		leaderEpoch:           st.leaderEpoch,
		startOffset:           st.startOffset,
		deliveryCompleteCount: st.deliveryCompleteCount,
		batches:               st.batches,
	}
}

// sortedKeys are m's keys in a fixed order, so that records written for
// several share-partitions at once are written in the same order.
func sortedKeys(m states) []Key {
	keys := make([]Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Key) int {
		if c := strings.Compare(a.GroupID, b.GroupID); c != 0 {
			return c
		}
		if c := slices.Compare(a.TopicID[:], b.TopicID[:]); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	return keys
}
