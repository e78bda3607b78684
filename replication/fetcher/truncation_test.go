package fetcher

import (
	"testing"
)

// The KIP tables as pure decisions: the leader's answer, the follower's
// log, and the offset the follower must truncate to.
func TestOffsetTruncation(t *testing.T) {
	c := newClock()
	for _, tc := range []struct {
		name        string
		follower    string
		fetchOffset int64
		leader      EpochEndOffset
		want        OffsetTruncationState
	}{
		// KIP-101 scenario 1: the follower has what the leader has; no
		// truncation to the high watermark.
		{"kip101-1 same epoch, same end", "0-1:e0", 2, EpochEndOffset{LeaderEpoch: 0, EndOffset: 2}, OffsetTruncationState{2, true}},
		// KIP-101 scenario 2: the new leader's epoch 0 ends at 1.
		{"kip101-2 leader's epoch ends earlier", "0-1:e0", 2, EpochEndOffset{LeaderEpoch: 0, EndOffset: 1}, OffsetTruncationState{1, true}},
		// The follower's epoch ends before the leader's.
		{"follower's epoch ends earlier", "0-1:e1 2-3:e2", 4, EpochEndOffset{LeaderEpoch: 1, EndOffset: 3}, OffsetTruncationState{2, true}},
		// KIP-279: the leader answers an epoch the follower never had;
		// truncate to the end of the follower's largest epoch below it and
		// ask again.
		{"kip279 unknown epoch", "0:e1 1-2:e3", 3, EpochEndOffset{LeaderEpoch: 2, EndOffset: 3}, OffsetTruncationState{1, false}},
		// The follower has no epoch at or below the leader's answer.
		{"no epoch below", "0:e2", 1, EpochEndOffset{LeaderEpoch: 1, EndOffset: 1}, OffsetTruncationState{0, true}},
		// The leader knows no epoch: truncate to the fetch offset.
		{"undefined offset", "0-3:e1", 2, EpochEndOffset{LeaderEpoch: -1, EndOffset: -1}, OffsetTruncationState{2, true}},
		// An old leader without epochs in its answer.
		{"undefined epoch", "0-3:e1", 4, EpochEndOffset{LeaderEpoch: -1, EndOffset: 3}, OffsetTruncationState{3, true}},
		// The leader is ahead: never truncate past the log end.
		{"leader ahead", "0-1:e1", 2, EpochEndOffset{LeaderEpoch: 1, EndOffset: 9}, OffsetTruncationState{2, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := logWith(t, c, tc.follower)
			if got := OffsetTruncation(tc.leader, tc.fetchOffset, l); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResetFetchOffset(t *testing.T) {
	for _, tc := range []struct {
		replicaEnd, leaderStart, leaderEnd int64
		action                             ResetAction
		offset                             int64
	}{
		{10, 0, 5, ResetTruncate, 5},         // ahead of the leader (unclean election)
		{10, 20, 30, ResetTruncateFully, 20}, // the leader deleted past us
		{10, 5, 30, ResetKeep, 10},           // in range after all (the leader moved)
		{10, 10, 10, ResetKeep, 10},
	} {
		a, off := ResetFetchOffset(tc.replicaEnd, tc.leaderStart, tc.leaderEnd)
		if a != tc.action || off != tc.offset {
			t.Fatalf("%+v: got %d %d", tc, a, off)
		}
	}
}
