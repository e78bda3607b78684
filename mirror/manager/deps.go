package manager

import (
	"context"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/mirror/state"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// The manager's view of the destination broker. The broker package wires
// these to replication's ReplicaManager, the __mirror_state coordinator
// (local or through ReadMirrorStates/WriteMirrorStates to the broker that
// hosts it) and the active controller (BumpLeaderEpochs). Keeping them
// behind interfaces lets the manager's tests drive it with fakes.

// Destination is the local replicas of the destination cluster
// (replication.ReplicaManager implements it).
type Destination interface {
	// MirrorLeader returns the local partition tp, bound to leaderEpoch, if
	// this node leads tp in exactly that epoch. Otherwise the error wraps
	// kerr.NotLeaderForPartition (not a local replica, or not the leader)
	// or kerr.FencedLeaderEpoch (the partition moved to another epoch).
	MirrorLeader(tp storage.TopicPartition, leaderEpoch int32) (LeaderPartition, error)
	// SetMirrorAccess sets tp's write access for leaderEpoch: AccessReadOnly
	// makes Produce (transactional or not) and DeleteRecords fail with
	// READ_ONLY_TOPIC; AccessWritable accepts them again. A call for
	// another leader epoch than the partition's current one is ignored and
	// returns false. While a mirror topic's partition (its topic has a
	// mirror.name in the image) has AccessUnknown in its current leader
	// epoch, writes fail with a retriable error (LEADER_NOT_AVAILABLE), so
	// no write slips in before the machine has decided.
	SetMirrorAccess(tp storage.TopicPartition, leaderEpoch int32, a partition.Access) bool
}

// LeaderPartition is a destination partition led by this node in one
// leader epoch. Every method that changes the log fails (wrapping
// kerr.FencedLeaderEpoch or kerr.NotLeaderForPartition, changing nothing)
// once the partition left that epoch or leadership, so a zombie driver
// cannot write.
type LeaderPartition interface {
	// Replica is what the mirror fetcher core writes: AppendAsFollower
	// appends the source's batches byte for byte (offsets and epochs from
	// the batches, as a follower does) on this leader, under the
	// partition's lock, then advances the high watermark from the ISR and
	// wakes waiting fetches. MaybeIncrementHighWatermark does nothing (the
	// destination's high watermark comes from its own ISR, never from the
	// source) and returns the current one. MaybeIncrementLogStartOffset
	// follows the source's log start offset, capped at the high watermark.
	// TruncateTo and TruncateFullyAndStartAt truncate the leader's log (and
	// its epoch cache and producer state); followers find the new end
	// through their next fetch (DivergingEpoch or OFFSET_OUT_OF_RANGE).
	fetcher.Replica
	// LeaderEpoch is the epoch this handle is bound to.
	LeaderEpoch() int32
	// TopicID is the destination topic's id (the source's, by
	// construction).
	TopicID() storage.TopicID
	// HighWatermark and LastStableOffset bound what the destination's
	// consumers read (READ_UNCOMMITTED and READ_COMMITTED): the
	// destination side of the lag (mirror/lag).
	HighWatermark() int64
	LastStableOffset() int64
	// LastBatchEpoch is the partition leader epoch of the last batch in the
	// log, -1 when the log has no batch (not the epoch cache's entry for a
	// leadership that appended nothing).
	LastBatchEpoch() int32
	// ReplicasAt reports whether every ISR member other than this node
	// (every assigned replica when all is true) has fetched at exactly
	// offset, in this leader epoch, since the handle was created: they
	// truncated to at most offset and caught up to it (the seed's
	// checkIsrTruncationAndTransition).
	ReplicasAt(offset int64, all bool) bool
	// AppendMirrorPIDReset appends the MIRROR_PID_RESET control batch
	// (record.MirrorPidResetBatch, producer id and epoch -1) as leader in
	// this epoch and waits until the whole ISR has it (acks=all, honouring
	// min.insync.replicas) or ctx ends.
	AppendMirrorPIDReset(ctx context.Context) error
	// AbortOpenTransactions closes every transaction open in the log with
	// an ABORT marker (record.EndTxnMarkerBatch with the producer's epoch
	// and coordinator epoch) appended as leader in this epoch with the
	// coordinator's origin, and waits until the whole ISR has the log up
	// to its end (acks=all, honouring min.insync.replicas), so the last
	// stable offset reaches it, or ctx ends. It returns the transactions
	// it aborted; with none open it appends nothing and only waits.
	AbortOpenTransactions(ctx context.Context) ([]storage.OpenTransaction, error)
}

// StateStore reads and writes this cluster's __mirror_state records,
// routing each to the coordinator that owns it.
type StateStore interface {
	// ReadState returns key's record (partition.EmptyRecord() when there is
	// none). Retriable errors (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
	// COORDINATOR_NOT_AVAILABLE, network) are returned as they are.
	ReadState(ctx context.Context, key state.Key) (partition.Record, error)
	// WriteState stores rec for key if the stored state epoch is expected
	// and rec.LeaderEpoch is the partition's current leader epoch; it
	// returns the new state epoch. A fenced write wraps partition.ErrFenced.
	WriteState(ctx context.Context, key state.Key, rec partition.Record, expected int32) (int32, error)
}

// Controller is the active controller as the manager needs it.
type Controller interface {
	// BumpLeaderEpoch asks the controller (BumpLeaderEpochs) to give tp a
	// new leader epoch of at least minEpoch, sent as this broker (its id
	// and broker epoch) leading tp at leaderEpoch. It returns once the
	// controller committed the change; the new epoch then arrives through
	// metadata.
	BumpLeaderEpoch(ctx context.Context, tp storage.TopicPartition, leaderEpoch, minEpoch int32) error
}
