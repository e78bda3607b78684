package state

import (
	"errors"
	"testing"

	"github.com/strait-io/strait/mirror/partition"
)

// TestFenceMatrix runs every fencing rule of WriteMirrorStates, through
// the wire and through the local API, against a stored record MIRRORING
// at state epoch 2 and leader epoch 5 (orders-0, whose leader epoch in
// metadata is 5), and checks the exact code, the stored state epoch, and
// that a rejected write changed neither memory nor the log.
func TestFenceMatrix(t *testing.T) {
	const (
		ok      = 0
		fenced  = 74  // FENCED_LEADER_EPOCH
		future  = 75  // UNKNOWN_LEADER_EPOCH
		invalid = 145 // INVALID_CLUSTER_MIRROR_STATES
		badReq  = 42  // INVALID_REQUEST
		unknown = 3   // UNKNOWN_TOPIC_OR_PARTITION
	)
	if fenced != codeFencedLeaderEpoch || future != codeUnknownLeaderEpoch || invalid != codeInvalidClusterMirrorStates ||
		badReq != codeInvalidRequest || unknown != codeUnknownTopicOrPartition {
		t.Fatal("code constants drifted")
	}
	cases := []struct {
		name     string
		topic    string
		part     int32
		metaLE   int32 // orders-0's leader epoch in metadata (0: unchanged 5)
		state    partition.State
		le, se   int32
		wantCode int16
		wantSE   int32
		wantLE   int32 // stored leader epoch after a success
	}{
		{"valid transition", "orders", 0, 0, partition.StatePausing, 5, 2, ok, 3, 5},
		{"zombie leader", "orders", 0, 0, partition.StatePausing, 4, 2, fenced, -1, 0},
		{"zombie with a stale state epoch is told it is fenced", "orders", 0, 0, partition.StatePausing, 4, 99, fenced, -1, 0},
		{"writer ahead of the coordinator's metadata", "orders", 0, 0, partition.StatePausing, 6, 2, future, -1, 0},
		{"stale state epoch", "orders", 0, 0, partition.StatePausing, 5, 1, invalid, -1, 0},
		{"future state epoch", "orders", 0, 0, partition.StatePausing, 5, 3, invalid, -1, 0},
		{"invalid transition MIRRORING→PAUSED", "orders", 0, 0, partition.StatePaused, 5, 2, invalid, -1, 0},
		{"invalid transition MIRRORING→STOPPED", "orders", 0, 0, partition.StateStopped, 5, 2, invalid, -1, 0},
		{"UNKNOWN is not written", "orders", 0, 0, partition.StateUnknown, 5, 2, invalid, -1, 0},
		{"EPOCH_FENCING is not ours", "orders", 0, 0, partition.State(1), 5, 2, invalid, -1, 0},
		{"leader epoch -1 skips its check", "orders", 0, 0, partition.StatePausing, -1, 2, ok, 3, 5},
		{"state epoch -1 skips its check", "orders", 0, 0, partition.StateStopping, 5, -1, ok, 3, 5},
		{"leader epoch below -1", "orders", 0, 0, partition.StatePausing, -2, 2, badReq, -1, 0},
		{"state epoch below -1", "orders", 0, 0, partition.StatePausing, 5, -2, badReq, -1, 0},
		{"record's leader superseded in metadata", "orders", 0, 7, partition.StatePausing, 5, 2, fenced, -1, 0},
		{"new leader continues the record", "orders", 0, 7, partition.StatePausing, 7, 2, ok, 3, 7},
		{"no record: first write expects 0", "orders", 1, 0, partition.StatePreparing, 5, 0, ok, 1, 5},
		{"no record: expecting 1", "orders", 1, 0, partition.StatePreparing, 5, 1, invalid, -1, 0},
		{"no record: UNKNOWN→MIRRORING", "orders", 1, 0, partition.StateMirroring, 5, 0, invalid, -1, 0},
		{"no record: UNKNOWN→STOPPING", "orders", 1, 0, partition.StateStopping, 5, 0, ok, 1, 5},
		{"unknown topic", "nope", 0, 0, partition.StatePausing, 5, 2, unknown, -1, 0},
		{"unknown partition", "orders", 9, 0, partition.StatePausing, 5, 2, unknown, -1, 0},
	}
	for _, path := range []string{"wire", "local"} {
		for _, c := range cases {
			t.Run(path+"/"+c.name, func(t *testing.T) {
				w := newWorld(t)
				w.electAll(1)
				k0 := key(ordersID, 0)
				w.mustWrite(k0, rec(partition.StatePreparing, 5), 0)
				w.mustWrite(k0, rec(partition.StateMirroring, 5), 1)
				if c.metaLE != 0 {
					w.setLeaderEpoch("orders", 0, c.metaLE)
				}
				before := w.view()
				appendsBefore := w.log.appends

				r := rec(c.state, c.le)
				r.LastMirrorOffset = 77
				var code int16
				var se int32
				switch path {
				case "wire":
					res := w.wireWrite("m1", c.topic, c.part, r, c.se)
					code, se = res.ErrorCode, res.StateEpoch
					if (code == 0) != (res.ErrorMessage == nil) {
						t.Errorf("error code %d with message %v", code, res.ErrorMessage)
					}
				case "local":
					id := ordersID
					if c.topic != "orders" {
						id = [16]byte{0x99}
					}
					var err error
					se, err = w.c.WriteState(t.Context(), Write{Key: key(id, c.part), Record: r, ExpectedStateEpoch: c.se})
					if err != nil && !isCode(err, c.wantCode) {
						t.Fatalf("err %v, want code %d", err, c.wantCode)
					}
					if err != nil {
						code = c.wantCode
						if want := c.wantCode == fenced || c.wantCode == invalid; errors.Is(err, partition.ErrFenced) != want {
							t.Errorf("errors.Is(%v, ErrFenced) = %v, want %v", err, !want, want)
						}
					}
				}
				if code != c.wantCode || se != c.wantSE {
					t.Fatalf("code %d state epoch %d, want %d and %d", code, se, c.wantCode, c.wantSE)
				}
				after := w.view()
				if c.wantCode != ok {
					if len(after) != len(before) || after[k0] != before[k0] || w.log.appends != appendsBefore {
						t.Fatalf("a rejected write changed something: %d→%d records, %s→%s, %d→%d appends",
							len(before), len(after), before[k0], after[k0], appendsBefore, w.log.appends)
					}
					return
				}
				got := after[key(ordersID, c.part)]
				if got.State != c.state || got.StateEpoch != c.wantSE || got.LeaderEpoch != c.wantLE || got.LastMirrorOffset != 77 {
					t.Fatalf("stored %s", got)
				}
				if w.log.appends != appendsBefore+1 {
					t.Fatalf("%d appends, want 1", w.log.appends-appendsBefore)
				}
			})
		}
	}
}

// TestFenceDuplicateKeyInOneRequest: the second write of a key in one
// request is fenced against the first, and both land in one batch.
func TestFenceDuplicateKeyInOneRequest(t *testing.T) {
	w := newWorld(t)
	w.electAll(1)
	k := key(ordersID, 2)
	res := w.c.WriteStates(t.Context(), []Write{
		{Key: k, Record: rec(partition.StatePreparing, 5), ExpectedStateEpoch: 0},
		{Key: k, Record: rec(partition.StateMirroring, 5), ExpectedStateEpoch: 1},
		{Key: k, Record: rec(partition.StatePausing, 5), ExpectedStateEpoch: 1}, // stale
	})
	if res[0].Err != nil || res[0].StateEpoch != 1 || res[1].Err != nil || res[1].StateEpoch != 2 ||
		!isCode(res[2].Err, codeInvalidClusterMirrorStates) || res[2].StateEpoch != -1 {
		t.Fatalf("results %+v", res)
	}
	if w.log.appends != 1 {
		t.Fatalf("%d appends, want 1", w.log.appends)
	}
	if got := w.view()[k]; got.State != partition.StateMirroring || got.StateEpoch != 2 || got.PrevState != partition.StateUnknown {
		t.Fatalf("stored %s", got)
	}
}

// TestDerivePrevState: PrevState as the machine writes it, derived from
// the record replaced (WriteMirrorStates v0 does not carry it).
func TestDerivePrevState(t *testing.T) {
	stored := func(st, prev partition.State) partition.Record {
		r := rec(st, 1)
		r.PrevState = prev
		return r
	}
	cases := []struct {
		from partition.Record
		to   partition.State
		want partition.State
	}{
		{partition.EmptyRecord(), partition.StatePreparing, partition.StateUnknown},
		{stored(partition.StatePreparing, partition.StateUnknown), partition.StateMirroring, partition.StatePreparing},
		{stored(partition.StateMirroring, partition.StatePreparing), partition.StateStopping, partition.StateMirroring},
		{stored(partition.StateStopping, partition.StateMirroring), partition.StateStopping, partition.StateMirroring},
		{stored(partition.StateStopping, partition.StatePaused), partition.StateStopped, partition.StateStopping},
		{stored(partition.StateFailed, partition.StateMirroring), partition.StateStopping, partition.StateMirroring},
		{stored(partition.StateFailed, partition.StatePreparing), partition.StatePreparing, partition.StateFailed},
		// A retry of a log that failed from MIRRORING keeps saying so.
		{stored(partition.StateFailed, partition.StateMirroring), partition.StatePreparing, partition.StateMirroring},
		{stored(partition.StatePreparing, partition.StateMirroring), partition.StateFailed, partition.StateMirroring},
		{stored(partition.StatePreparing, partition.StateMirroring), partition.StateMirroring, partition.StatePreparing},
		{stored(partition.StatePreparing, partition.StateFailed), partition.StateFailed, partition.StatePreparing},
		{stored(partition.StatePreparing, partition.StateMirroring), partition.StateStopping, partition.StateMirroring},
		{stored(partition.StatePreparing, partition.StateUnknown), partition.StateStopping, partition.StatePreparing},
	}
	for _, c := range cases {
		if got := derivePrevState(c.from, c.to); got != c.want {
			t.Errorf("%s → %s: PrevState %s, want %s", c.from, c.to, got, c.want)
		}
	}
}
