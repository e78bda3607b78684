package txn

import (
	"strings"
	"testing"
)

// TestMarkerSendersAreReused: one producer's transactions, one after
// another, have their markers and completions written by one sender that
// goes on to the next, not a goroutine each (whose stack grew through the
// append path every time); transactions prepared at once still get a
// sender each, so one's markers never wait for another's.
func TestMarkerSendersAreReused(t *testing.T) {
	e := newEnv(t)
	e.elect(1)
	pid, epoch, _ := e.init("app", 60000)
	for i := range 20 {
		e.addOK("app", pid, epoch, tp("a", int32(i%2)))
		if code := e.end("app", pid, epoch, true); code != 0 {
			t.Fatalf("EndTxn %d: %s", i, codeName(code))
		}
		e.waitFor("CompleteCommit", func() bool { return strings.HasPrefix(e.describe("app"), "CompleteCommit") })
		e.waitFor("a sender idle", func() bool { return e.c.sendersIdle.Load() >= 1 })
	}
	// One sender does them all; a sender counted idle just before it
	// waits may miss a hand-off on a loaded machine, so allow a couple.
	if n := e.c.sendersStarted.Load(); n > 3 {
		t.Fatalf("20 transactions one after another started %d marker senders, want them to reuse one", n)
	}
	before := e.c.sendersStarted.Load()

	// Three transactions prepared while the leaders hold their markers:
	// the idle sender takes at most one, the others start their own.
	gate := make(chan struct{})
	e.markers.mu.Lock()
	e.markers.gate = gate
	e.markers.mu.Unlock()
	ids := []string{"x", "y", "z"}
	for _, id := range ids {
		pid, epoch, _ := e.init(id, 60000)
		e.addOK(id, pid, epoch, tp("b", 0))
		if code := e.end(id, pid, epoch, true); code != 0 {
			t.Fatalf("EndTxn %s: %s", id, codeName(code))
		}
	}
	if n := e.c.sendersStarted.Load() - before; n < 2 {
		t.Fatalf("three transactions completing at once started %d more senders, want at least 2", n)
	}
	close(gate)
	for _, id := range ids {
		e.waitFor(id+" CompleteCommit", func() bool { return strings.HasPrefix(e.describe(id), "CompleteCommit") })
	}
}
