package fetcher

// The truncation rules, as pure functions of the leader's answer and the
// local log, so they can be tested against the KIPs' tables directly.

// EpochLog is the part of a Replica the truncation rules read.
type EpochLog interface {
	LogEndOffset() int64
	EndOffsetForEpoch(epoch int32) (ep int32, endOffset int64, ok bool)
}

// OffsetTruncation returns where a replica truncates after the leader said
// where an epoch ends (Kafka's AbstractFetcherThread.getOffsetTruncationState):
//
//   - The leader knows no epoch <= the one asked (end offset -1): truncate
//     to fetchOffset, the initial fetch offset (the high watermark for a log
//     without epochs, else the log end offset, which truncates nothing).
//   - No leader epoch but an end offset (an old OffsetForLeaderEpoch
//     version): truncate to min(end offset, log end offset).
//   - The replica has the leader's epoch: truncate to min(leader's end
//     offset, the replica's end offset for that epoch, log end offset)
//     (KIP-101, KIP-279).
//   - The replica does not have it: truncate to the end of its largest
//     epoch below it and ask again with that epoch (KIP-279); a replica
//     with no such epoch truncates to min(leader's end offset, log end
//     offset) and is done.
//
// A DivergingEpoch in a fetch answer (KIP-595) goes through the same rules.
func OffsetTruncation(leader EpochEndOffset, fetchOffset int64, log EpochLog) OffsetTruncationState {
	replicaEnd := log.LogEndOffset()
	switch {
	case leader.EndOffset < 0:
		return OffsetTruncationState{Offset: fetchOffset, TruncationCompleted: true}
	case leader.LeaderEpoch < 0:
		return OffsetTruncationState{Offset: min(leader.EndOffset, replicaEnd), TruncationCompleted: true}
	}
	ep, end, ok := log.EndOffsetForEpoch(leader.LeaderEpoch)
	switch {
	case !ok:
		return OffsetTruncationState{Offset: min(leader.EndOffset, replicaEnd), TruncationCompleted: true}
	case ep != leader.LeaderEpoch:
		return OffsetTruncationState{Offset: min(end, replicaEnd), TruncationCompleted: false}
	default:
		return OffsetTruncationState{Offset: min(end, leader.EndOffset, replicaEnd), TruncationCompleted: true}
	}
}

// ResetAction is what an OFFSET_OUT_OF_RANGE answer makes a replica do.
type ResetAction int8

const (
	// ResetKeep fetches from the replica's log end offset unchanged.
	ResetKeep ResetAction = iota
	// ResetTruncate truncates to the leader's log end offset: the replica
	// is ahead of the leader (after an unclean election, KIP-101).
	ResetTruncate
	// ResetTruncateFully empties the log and restarts it at the leader's
	// log start offset: everything the replica has was deleted on the
	// leader.
	ResetTruncateFully
)

// ResetFetchOffset decides how a replica whose fetch offset was out of range
// continues (Kafka's AbstractFetcherThread.fetchOffsetAndTruncate), and the
// offset it fetches from next.
func ResetFetchOffset(replicaEnd, leaderStart, leaderEnd int64) (ResetAction, int64) {
	switch {
	case leaderEnd < replicaEnd:
		return ResetTruncate, leaderEnd
	case leaderStart > replicaEnd:
		return ResetTruncateFully, leaderStart
	default:
		return ResetKeep, replicaEnd
	}
}
