package state

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/strait-io/strait/mirror/partition"
)

// TestMachineDrivenHistory drives the real partition state machine through
// a mirror partition's life — start, a fetch failure and its retry, pause,
// resume, a leader change, another failure, a stop from FAILED with an
// epoch bump — performing its writes with WriteMirrorStates (so the
// coordinator derives PrevState and the stored state epoch) and its reads
// with ReadState, and checks after every write that the coordinator
// stored exactly the record the machine believes it wrote.
func TestMachineDrivenHistory(t *testing.T) {
	w := newWorld(t)
	w.electAll(1)
	k := key(ordersID, 2)
	m, err := partition.New(partition.Config{Rand: rand.New(rand.NewPCG(1, 2))})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	leaderEpoch := int32(5)
	var fetcher partition.Ref
	holdRetries := false // leave FAILED's retry timer unanswered
	writes, reads := 0, 0
	var trail []string

	step := func(ev partition.Event) {
		t.Helper()
		if err := m.Step(now, ev); err != nil && !errors.Is(err, partition.ErrStale) {
			t.Fatalf("Step(%T): %v", ev, err)
		}
	}
	perform := func(e partition.Effect) {
		t.Helper()
		if e.Ref.LeaderEpoch != leaderEpoch && e.Kind != partition.RemoveFetcher {
			return // the driver drops effects of an older leader epoch
		}
		r := partition.Result{Ref: e.Ref}
		bump := int32(-1)
		switch e.Kind {
		case partition.ReadMirrorState:
			r.Record, _, r.Err = w.c.ReadState(k)
			reads++
		case partition.WriteMirrorState:
			res := w.wireWrite("m1", "orders", 2, e.Record, e.ExpectedStateEpoch)
			if res.ErrorCode != 0 {
				t.Fatalf("write %s refused: %d %v", e.Record, res.ErrorCode, *res.ErrorMessage)
			}
			stored, _, err := w.c.ReadState(k)
			if err != nil || stored != e.Record || res.StateEpoch != e.Record.StateEpoch {
				t.Fatalf("machine wrote %s, coordinator stored %s (state epoch %d, %v)", e.Record, stored, res.StateEpoch, err)
			}
			writes++
			trail = append(trail, stored.State.String())
		case partition.QueryLastMirroredEpoch:
			r.Epoch = -1
		case partition.TruncateFully, partition.TruncateAfterEpoch:
			r.LatestEpoch = -1
		case partition.RemoveFetcher:
			r.LogEndOffset, r.LatestEpoch = 100, 9
		case partition.AbortOpenTransactions:
			// Markers at the bumped epoch moved the log; nothing the
			// machine records may come from here.
			r.LogEndOffset, r.LatestEpoch = 102, 10
		case partition.AddFetcher:
			fetcher = e.Ref
		case partition.BumpLeaderEpoch:
			bump = e.Epoch
		case partition.ScheduleRetry:
			if holdRetries && e.Retry == partition.RetryFailed {
				return
			}
			if e.At.After(now) {
				now = e.At
			}
		}
		if e.Reply {
			step(r)
		}
		if bump >= 0 {
			leaderEpoch = bump
			w.setLeaderEpoch("orders", 2, bump)
			step(partition.BecomeLeader{LeaderEpoch: bump})
		}
	}
	until := func(what string, done func(partition.Status) bool) {
		t.Helper()
		for range 200 {
			if st := m.Status(); done(st) && !m.HasReady() {
				return
			}
			if !m.HasReady() {
				t.Fatalf("waiting for %s: machine idle at %+v\ntrail %v", what, m.Status(), trail)
			}
			effs := m.Ready().Effects
			m.Advance()
			for _, e := range effs {
				perform(e)
			}
		}
		t.Fatalf("waiting for %s: too many steps", what)
	}
	in := func(s partition.State) func(partition.Status) bool {
		return func(st partition.Status) bool { return st.Record.State == s && st.Waiting == nil }
	}

	step(partition.BecomeLeader{LeaderEpoch: leaderEpoch})
	step(partition.DesiredChanged{Mirror: "m1", Desired: partition.DesiredStart})
	until("mirroring", func(st partition.Status) bool { return st.Record.State == partition.StateMirroring && st.Fetching })

	step(partition.FetchFailed{Ref: fetcher, Kind: partition.FetchCorruptBatch, Err: errors.New("crc mismatch")})
	until("mirroring after the retry", func(st partition.Status) bool {
		return st.Record.State == partition.StateMirroring && st.Fetching && st.Record.RetryAttempt == 1
	})

	step(partition.DesiredChanged{Mirror: "m1", Desired: partition.DesiredPause})
	until("paused", in(partition.StatePaused))
	step(partition.DesiredChanged{Mirror: "m1", Desired: partition.DesiredStart})
	until("resumed", func(st partition.Status) bool { return st.Record.State == partition.StateMirroring && st.Fetching })

	leaderEpoch = 7 // re-elected: the machine re-reads the record
	w.setLeaderEpoch("orders", 2, 7)
	step(partition.BecomeLeader{LeaderEpoch: 7})
	until("mirroring at epoch 7", func(st partition.Status) bool {
		return st.Record.State == partition.StateMirroring && st.Fetching && st.Known
	})

	holdRetries = true
	step(partition.FetchFailed{Ref: fetcher, Kind: partition.FetchFatal, Err: errors.New("boom")})
	until("failed", func(st partition.Status) bool { return st.Record.State == partition.StateFailed })
	step(partition.DesiredChanged{Mirror: "m1", Desired: partition.DesiredStop})
	until("stopped", func(st partition.Status) bool {
		return st.Record.State == partition.StateStopped && st.Access == partition.AccessWritable
	})

	final, _, err := w.c.ReadState(k)
	if err != nil {
		t.Fatal(err)
	}
	// STOPPING from FAILED kept MIRRORING as PrevState, so the LME is the
	// epoch of the last mirrored batch and the stop offset the log end the
	// fetcher left, not where the ABORT markers took it; the stop bumped the
	// leader to 10.
	if final.LastMirrorEpoch != 9 || final.LastMirrorOffset != 100 || final.LeaderEpoch != 10 || final.PrevState != partition.StateStopping {
		t.Fatalf("final record %s", final)
	}
	wantTrail := "[PREPARING MIRRORING FAILED PREPARING MIRRORING PAUSING PAUSED MIRRORING FAILED STOPPING STOPPING STOPPED]"
	if got := fmtTrail(trail); got != wantTrail {
		t.Fatalf("writes %s\nwant   %s", got, wantTrail)
	}
	if writes != 12 || final.StateEpoch != 12 {
		t.Fatalf("%d writes, final state epoch %d; want 12 and 12", writes, final.StateEpoch)
	}
	if reads != 3 { // the first leadership, the re-election, the bump
		t.Fatalf("%d reads, want 3", reads)
	}
}

func fmtTrail(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}
