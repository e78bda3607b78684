package coordinator

import (
	"testing"
	"time"
)

func TestOffsetExpiration(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.OffsetsRetention = time.Hour
		c.OffsetsRetentionCheckInterval = time.Minute
	})
	// A simple group: offsets age from their commit time.
	h.commit(9, "simple", "", -1, map[string]map[int32]int64{"foo": {0: 1}})
	h.advance(30 * time.Minute)
	h.commit(9, "simple", "", -1, map[string]map[int32]int64{"foo": {1: 2}})

	// A consumer group, Stable, subscribed to foo: its foo offsets never
	// expire, its bar offsets (a topic it no longer consumes) do.
	m := h.newMember("cg", "c")
	wantCode(t, "join", m.join().ErrorCode, 0)
	wantCode(t, "sync", m.sync(nil).ErrorCode, 0)
	h.commit(9, "cg", m.id, 1, map[string]map[int32]int64{"foo": {0: 5}, "bar": {0: 6}})

	// An Empty consumer group: offsets age from when it became Empty.
	e := h.newMember("eg", "c")
	wantCode(t, "join", e.join().ErrorCode, 0)
	wantCode(t, "sync", e.sync(nil).ErrorCode, 0)
	h.commit(9, "eg", e.id, 1, map[string]map[int32]int64{"foo": {2: 7}})

	keepAlive := func(d time.Duration) {
		for step := time.Duration(0); step < d; step += 5 * time.Second {
			h.advance(5 * time.Second)
			wantCode(t, "cg heartbeat", m.heartbeat(), 0)
			if e.id != "" {
				wantCode(t, "eg heartbeat", e.heartbeat(), 0)
			}
		}
	}
	keepAlive(20 * time.Minute) // t=50m
	wantCode(t, "eg leaves", e.leave().Members[0].ErrorCode, 0)
	e.id = ""
	keepAlive(11 * time.Minute) // t=61m: simple foo/0 (committed at 0) has expired

	offs, _ := h.fetchAll("simple")
	if len(offs) != 1 || offs["foo/1"] == "" {
		t.Fatalf("simple group at 61m: %v", offs)
	}
	keepAlive(30 * time.Minute) // t=91m: simple foo/1 (30m) expired; the group is deleted
	if lg := h.listGroups(nil, nil); len(lg) != 2 || lg[0] != "cg/Stable" || lg[1] != "eg/Empty" {
		t.Fatalf("groups at 91m: %v", lg)
	}
	offs, _ = h.fetchAll("cg")
	if len(offs) != 1 || offs["foo/0"] != "5/5/m5" {
		t.Fatalf("consumer group at 91m: %v (bar/0 must expire, subscribed foo/0 must not)", offs)
	}
	if offs, _ := h.fetchAll("eg"); len(offs) != 1 {
		t.Fatalf("empty group at 91m (empty since 50m): %v", offs)
	}
	keepAlive(20 * time.Minute) // t=111m: eg empty for 61m
	if offs, _ := h.fetchAll("eg"); len(offs) != 0 {
		t.Fatalf("empty group's offsets at 111m: %v", offs)
	}
	if lg := h.listGroups(nil, nil); len(lg) != 1 || lg[0] != "cg/Stable" {
		t.Fatalf("groups at 111m: %v", lg)
	}

	// The tombstones are in the log: a restart brings nothing back.
	h.restart()
	if lg := h.listGroups(nil, nil); len(lg) != 1 || lg[0] != "cg/Stable" {
		t.Fatalf("groups after restart: %v", lg)
	}
	if offs, _ := h.fetchAll("simple"); len(offs) != 0 {
		t.Fatalf("expired offsets after restart: %v", offs)
	}
	recs := h.log.records(t, PartitionFor("simple", testPartitions))
	last := recs[len(recs)-1]
	if last.groupKey == nil || last.groupKey.Group != "simple" || last.groupValue != nil {
		t.Fatalf("last record of simple's partition: %+v", last)
	}
}

func TestPendingSyncExpiry(t *testing.T) {
	h := newHarness(t)
	a, b := h.newMember("g", "a"), h.newMember("g", "b")
	a.rebalance, b.rebalance = 20000, 20000
	wantCode(t, "a", a.join().ErrorCode, 0)
	wantCode(t, "a sync", a.sync(nil).ErrorCode, 0)
	jb := b.joinAsync()
	h.waitAwaiting("g", 1)
	ja := a.joinAsync()
	recv(t, ja)
	recv(t, jb)
	// b joined generation 2 but never sends SyncGroup; it keeps
	// heartbeating, so only the sync timeout (the rebalance timeout)
	// removes it.
	for range 3 {
		h.advance(5 * time.Second)
		wantCode(t, "b heartbeat", b.heartbeat(), 0)
		wantCode(t, "a heartbeat", a.heartbeat(), 0)
	}
	h.advance(5*time.Second - time.Millisecond)
	if _, _, n, _ := h.groupState("g"); n != 2 {
		t.Fatalf("members just before the sync timeout: %d", n)
	}
	h.advance(time.Millisecond)
	// Neither a nor b synced: both are removed, and the group, empty, is
	// Empty again after the join phase that follows.
	if st, gen, n, _ := h.groupState("g"); st != stateEmpty || n != 0 || gen != 3 {
		t.Fatalf("after the sync timeout: %s gen %d with %d members, want Empty 3 0", st, gen, n)
	}
	wantCode(t, "b removed", b.heartbeat(), unknownMemberID)
}
