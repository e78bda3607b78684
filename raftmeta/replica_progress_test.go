package raftmeta

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// The tracker keeps what the followers' AppendEntries answers say: a
// successful answer moves the log end (never past the leader's) and, when
// it covers what the leader had at sending, the caught-up time; a refused
// one counts as a fetch only.
func TestProgressTracker(t *testing.T) {
	now := time.Unix(1000, 0)
	leaderEnd := uint64(100)
	tr := newProgressTracker(func() time.Time { return now }, func() uint64 { return leaderEnd })
	if _, ok := tr.get("2"); ok {
		t.Fatal("progress of a replica never heard from")
	}
	sent := now.Add(-time.Second)

	tr.observe("2", sent, 100, &raft.AppendEntriesResponse{Success: true, LastLog: 90})
	if p, _ := tr.get("2"); p.LogEnd != 90 || !p.LastFetch.Equal(now) || !p.LastCaughtUp.IsZero() {
		t.Fatalf("behind: %+v", p)
	}
	tr.observe("2", sent, 100, &raft.AppendEntriesResponse{Success: true, LastLog: 100})
	if p, _ := tr.get("2"); p.LogEnd != 100 || !p.LastCaughtUp.Equal(sent) {
		t.Fatalf("caught up: %+v", p)
	}
	// An old leader's tail the follower has not truncated yet.
	tr.observe("2", sent, 100, &raft.AppendEntriesResponse{Success: true, LastLog: 120})
	if p, _ := tr.get("2"); p.LogEnd != 100 {
		t.Fatalf("log end past the leader's: %+v", p)
	}
	now = now.Add(time.Second)
	tr.observe("2", now, 100, &raft.AppendEntriesResponse{Success: false, LastLog: 50})
	if p, _ := tr.get("2"); p.LogEnd != 100 || !p.LastFetch.Equal(now) || !p.LastCaughtUp.Equal(sent) {
		t.Fatalf("refused: %+v", p)
	}
	if p, ok := tr.get("3"); ok {
		t.Fatalf("replica 3: %+v", p)
	}
}

// sentEndOf is the last entry a request carries, else (a heartbeat) the
// leader's log end.
func TestSentEndOf(t *testing.T) {
	end := func() uint64 { return 42 }
	if got := sentEndOf(&raft.AppendEntriesRequest{}, end); got != 42 {
		t.Errorf("heartbeat: %d", got)
	}
	if got := sentEndOf(&raft.AppendEntriesRequest{Entries: []*raft.Log{{Index: 7}, {Index: 8}}}, end); got != 8 {
		t.Errorf("entries: %d", got)
	}
}
