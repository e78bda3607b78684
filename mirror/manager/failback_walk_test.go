package manager

import (
	"context"
	"testing"

	"github.com/strait-io/strait/replication/fetcher"
)

// epochLog is an epoch cache (epoch → start offset, ascending) and a log
// end, answering OffsetForLeaderEpoch as storage's does.
type epochLog struct {
	epochs [][2]int64 // {epoch, start}
	end    int64
}

func (l epochLog) lookup(_ context.Context, epoch int32) (fetcher.EpochEndOffset, error) {
	for i := len(l.epochs) - 1; i >= 0; i-- {
		if int32(l.epochs[i][0]) <= epoch {
			end := l.end
			if i+1 < len(l.epochs) {
				end = l.epochs[i+1][1]
			}
			return fetcher.EpochEndOffset{LeaderEpoch: int32(l.epochs[i][0]), EndOffset: end}, nil
		}
	}
	return fetcher.EpochEndOffset{LeaderEpoch: -1, EndOffset: -1}, nil
}

// TestFailbackWalk: the divergence point of each failback shape, as the
// LME alignment and the fetcher's epoch walk together find it.
func TestFailbackWalk(t *testing.T) {
	for _, tc := range []struct {
		name          string
		lme           int32
		local, source epochLog
		lastEpoch     int32
		want          int64
	}{
		// The old source wrote on in the epoch the new primary's stop
		// bumped past: the LME cuts nothing, the fetcher's check cuts at
		// the end of epoch 0 on the source (TestMirrorFailbackDryRun).
		{"same epoch written on", 0, epochLog{[][2]int64{{0, 0}}, 256}, epochLog{[][2]int64{{0, 0}, {1, 201}}, 300}, 0, 201},
		// The old source bumped its epoch before writing: the LME cuts.
		{"later local epoch", 0, epochLog{[][2]int64{{0, 0}, {3, 201}}, 256}, epochLog{[][2]int64{{0, 0}, {1, 201}}, 300}, 3, 201},
		// Nothing written on either side after the stop.
		{"no divergence", 0, epochLog{[][2]int64{{0, 0}}, 201}, epochLog{[][2]int64{{0, 0}, {1, 201}}, 201}, 0, 201},
		// No LME: the whole log goes.
		{"no LME", -1, epochLog{[][2]int64{{0, 0}}, 256}, epochLog{[][2]int64{{0, 0}}, 300}, 0, 0},
		// The source does not know the local epoch 2: it answers epoch 1,
		// which it ended at 150, before the local log did (180).
		{"earlier end of an older epoch", 2, epochLog{[][2]int64{{0, 0}, {1, 100}, {2, 180}}, 220}, epochLog{[][2]int64{{0, 0}, {1, 100}, {4, 150}}, 400}, 2, 150},
	} {
		a, err := FailbackWalk(context.Background(), tc.lme, 0, tc.local.end, tc.lastEpoch, tc.local.lookup, tc.source.lookup)
		if err != nil || a.From != tc.want {
			t.Errorf("%s: divergence %d (%+v, %v), want %d", tc.name, a.From, a, err, tc.want)
		}
	}
}
