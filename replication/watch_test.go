package replication

import "testing"

// TestPartitionWatchersWakeByKind checks which kinds of parked requests
// each change wakes: appends wake fetches only, unless the high watermark
// moved with them; a high watermark move alone wakes what waits for it and
// consumer fetches, not follower fetches; role and other changes wake all.
func TestPartitionWatchersWakeByKind(t *testing.T) {
	cases := []struct {
		name   string
		notify func(*partitionWatchers)
		want   [numWatchKinds]bool // by watchKind: high watermark, consumer fetch, follower fetch
	}{
		{"append", func(pw *partitionWatchers) { pw.notifyAppend(false) }, [numWatchKinds]bool{false, true, true}},
		{"append moving the high watermark", func(pw *partitionWatchers) { pw.notifyAppend(true) }, [numWatchKinds]bool{true, true, true}},
		{"high watermark", func(pw *partitionWatchers) { pw.notifyHighWatermark() }, [numWatchKinds]bool{true, true, false}},
		{"all", func(pw *partitionWatchers) { pw.notifyAll() }, [numWatchKinds]bool{true, true, true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var pw partitionWatchers
			var ws [numWatchKinds]*waiter
			for k := range ws {
				ws[k] = newWaiter()
				pw[k].add(ws[k])
			}
			tc.notify(&pw)
			for k, w := range ws {
				woken := len(w.ch) == 1
				if woken != tc.want[k] {
					t.Errorf("kind %d woken = %v, want %v", k, woken, tc.want[k])
				}
			}
			// A removed waiter is not woken, and the count goes back to 0.
			for k, w := range ws {
				select {
				case <-w.ch:
				default:
				}
				pw[k].remove(w)
				if n := pw[k].n.Load(); n != 0 {
					t.Errorf("kind %d: %d waiters after remove, want 0", k, n)
				}
			}
			pw.notifyAll()
			for k, w := range ws {
				if len(w.ch) != 0 {
					t.Errorf("kind %d: removed waiter woken", k)
				}
			}
		})
	}
}
