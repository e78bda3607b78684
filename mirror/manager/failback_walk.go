package manager

import (
	"context"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/replication/fetcher"
)

// EpochLookup answers OffsetForLeaderEpoch for one partition: the largest
// epoch ≤ epoch a log knows and where it ends (LeaderEpoch and EndOffset
// −1 when it knows none).
type EpochLookup func(ctx context.Context, epoch int32) (fetcher.EpochEndOffset, error)

// maxWalkRounds bounds the fetcher's epoch walk: each round moves to a
// lower epoch, and a log holds few (a real walk ends in one or two).
const maxWalkRounds = 64

// FailbackWalk is where a start truncates a partition, computed without
// truncating: the two steps a failback runs, with the same rules.
//
//  1. PREPARING's log alignment (partition.Align): the source's last
//     mirrored epoch (lme) and the local epoch cache give the divergence
//     point; TruncateAfterEpoch cuts there (TruncateFully, lme −1, cuts
//     everything and the walk ends).
//  2. The mirror fetcher's first fetches (KIP-320/KIP-595: LastFetchedEpoch,
//     the leader's DivergingEpoch, fetcher.OffsetTruncation): the source
//     may end the log's last epoch earlier than the log does, e.g. when
//     the local log kept writing in the very epoch the source stopped
//     mirroring in (the old source of a failover writes on in its own
//     epoch, which the new primary's stop bumped past). The walk asks the
//     source where the log's last epoch ends and truncates as a replica
//     would, round after round, until the answer is final.
//
// lastEpoch is the epoch of the local log's last batch (what AddFetcher
// sends as LastFetchedEpoch when nothing was truncated); local looks up
// the local log, source the source's.
func FailbackWalk(ctx context.Context, lme int32, logStart, logEnd int64, lastEpoch int32, local, source EpochLookup) (partition.Alignment, error) {
	var lookupErr error
	var lmeEpoch int32 = -1
	a := partition.Align(lme, logStart, logEnd, func(e int32) (int32, int64, bool) {
		ans, err := local(ctx, e)
		if err != nil {
			lookupErr = err
			return -1, -1, false
		}
		lmeEpoch = ans.LeaderEpoch
		return ans.LeaderEpoch, ans.EndOffset, ans.LeaderEpoch >= 0 && ans.EndOffset >= 0
	})
	if lookupErr != nil || a.Full() || a.From <= logStart {
		return a, lookupErr
	}
	epoch := lastEpoch
	if a.Truncates() {
		epoch = lmeEpoch // the log now ends in the LME's epoch
	}
	for range maxWalkRounds {
		if epoch < 0 || a.From <= logStart {
			break
		}
		leader, err := source(ctx, epoch)
		if err != nil {
			return a, err
		}
		view := &truncatedLog{end: a.From, local: local, ctx: ctx}
		ts := fetcher.OffsetTruncation(leader, a.From, view)
		if view.err != nil {
			return a, view.err
		}
		a.From = min(a.From, ts.Offset)
		if ts.TruncationCompleted {
			break
		}
		epoch = view.lastAnswer // KIP-279: ask again with the epoch the log now ends in
	}
	return a, nil
}

// truncatedLog is the local log as if truncated at end: the view a
// replica's next truncation round reads.
type truncatedLog struct {
	end        int64
	local      EpochLookup
	ctx        context.Context
	err        error
	lastAnswer int32
}

func (l *truncatedLog) LogEndOffset() int64 { return l.end }

func (l *truncatedLog) EndOffsetForEpoch(epoch int32) (int32, int64, bool) {
	ans, err := l.local(l.ctx, epoch)
	if err != nil {
		l.err = err
		return -1, -1, false
	}
	if ans.LeaderEpoch < 0 || ans.EndOffset < 0 {
		return -1, -1, false
	}
	l.lastAnswer = ans.LeaderEpoch
	return ans.LeaderEpoch, min(ans.EndOffset, l.end), true
}
