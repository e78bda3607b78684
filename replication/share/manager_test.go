package share

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestManagerMembersShareAPartition: three members take turns on one
// partition; each record goes to exactly one of them, their ACCEPTs move
// the start offset, and the persister holds it.
func TestManagerMembersShareAPartition(t *testing.T) {
	h := newHarness(t, Config{}, GroupConfig{})
	for range 6 {
		h.log.produce(5, -1)
	}
	seen := map[int64]string{}
	for _, id := range []string{"a", "b", "c"} {
		mb := h.member(id)
		got := h.acquired(mb.fetch(maxRecords(10)))
		if count(got) != 10 {
			t.Fatalf("%s acquired %v, want 10 records", id, got)
		}
		for _, r := range got {
			if r.DeliveryCount != 1 {
				t.Fatalf("%s: first delivery with count %d", id, r.DeliveryCount)
			}
			for off := r.First; off <= r.Last; off++ {
				if prev, dup := seen[off]; dup {
					t.Fatalf("offset %d delivered to %s and %s", off, prev, id)
				}
				seen[off] = id
			}
			if code := ackCode(t, mb.ack(false, ackBatch(r.First, r.Last, AckAccept))); code != 0 {
				t.Fatalf("%s accepting %v: %v", id, r, kerr.ErrorForCode(code))
			}
		}
	}
	if len(seen) != 30 {
		t.Fatalf("delivered %d offsets, want 30", len(seen))
	}
	if st := h.p.state(h.key()); st.StartOffset != 30 || len(st.Batches) != 0 {
		t.Fatalf("persisted %+v, want start 30 and nothing in flight", st)
	}
}

// TestManagerReleaseRedelivers: records released by one member go to the
// next with their delivery count raised, and a parked fetch wakes for them.
func TestManagerReleaseRedelivers(t *testing.T) {
	h := newHarness(t, Config{}, GroupConfig{})
	h.log.produce(4, -1)
	a, b := h.member("a"), h.member("b")
	if got := h.acquired(a.fetch()); count(got) != 4 {
		t.Fatalf("a acquired %v", got)
	}
	b.fetch() // opens b's session; nothing to acquire
	done := make(chan *kmsg.ShareFetchResponse, 1)
	go func() { done <- b.fetch(maxWait(time.Minute)) }()
	waitParked(t, h)
	if code := ackCode(t, a.ack(false, ackBatch(0, 3, AckRelease))); code != 0 {
		t.Fatalf("release: %v", kerr.ErrorForCode(code))
	}
	select {
	case resp := <-done:
		got := h.acquired(resp)
		if len(got) != 1 || got[0] != (AcquiredRange{0, 3, 2}) {
			t.Fatalf("b acquired %v, want 0-3 on a second delivery", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the parked fetch was not woken by the release")
	}
}

// waitParked waits until a fetch is parked on the harness partition.
func waitParked(t *testing.T, h *harness) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if e := h.m.loaded(h.key()); e != nil {
			e.mu.Lock()
			n := len(e.waiters)
			e.mu.Unlock()
			if n > 0 {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no fetch parked")
}

// TestManagerLongPollWakesOnAppend: a parked fetch answers when records
// arrive, long before its MaxWaitMs.
func TestManagerLongPollWakesOnAppend(t *testing.T) {
	h := newHarness(t, Config{}, GroupConfig{})
	a := h.member("a")
	a.fetch()
	done := make(chan *kmsg.ShareFetchResponse, 1)
	go func() { done <- a.fetch(maxWait(time.Minute)) }()
	waitParked(t, h)
	h.log.produce(3, -1)
	select {
	case resp := <-done:
		if got := h.acquired(resp); count(got) != 3 {
			t.Fatalf("acquired %v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the parked fetch was not woken by the append")
	}
}

// TestManagerLockExpiry: records not acknowledged within the lock
// duration go to another member, and a record delivered
// group.share.delivery.count.limit times is archived; the start offset
// moves past it and is persisted.
func TestManagerLockExpiry(t *testing.T) {
	h := newHarness(t, Config{DeliveryCountLimit: 2}, GroupConfig{RecordLockDuration: 10 * time.Second})
	h.log.produce(2, -1)
	a, b := h.member("a"), h.member("b")
	if got := h.acquired(a.fetch()); len(got) != 1 || got[0] != (AcquiredRange{0, 1, 1}) {
		t.Fatalf("a acquired %v", got)
	}
	h.clk.Advance(9 * time.Second)
	h.m.expireLocks()
	if got := h.acquired(b.fetch()); len(got) != 0 {
		t.Fatalf("b acquired %v while a's lock holds", got)
	}
	h.clk.Advance(2 * time.Second)
	h.m.expireLocks()
	if got := h.acquired(b.fetch()); len(got) != 1 || got[0] != (AcquiredRange{0, 1, 2}) {
		t.Fatalf("b acquired %v after a's lock expired, want 0-1 on a second delivery", got)
	}
	// a's late acknowledgement is refused: a no longer holds them.
	if code := ackCode(t, a.ack(false, ackBatch(0, 1, AckAccept))); code != kerr.InvalidRecordState.Code {
		t.Fatalf("late ack: %v, want INVALID_RECORD_STATE", kerr.ErrorForCode(code))
	}
	h.clk.Advance(11 * time.Second)
	h.m.expireLocks()
	waitFor(t, "the archive to be persisted", func() bool { return h.p.state(h.key()).StartOffset == 2 })
	if got := h.acquired(a.fetch()); len(got) != 0 {
		t.Fatalf("acquired %v past the delivery count limit", got)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestManagerPiggybackedAcks: acknowledgements ride on the next fetch and
// are answered in AcknowledgeErrorCode.
func TestManagerPiggybackedAcks(t *testing.T) {
	h := newHarness(t, Config{}, GroupConfig{})
	h.log.produce(3, -1)
	a := h.member("a")
	h.acquired(a.fetch())
	h.log.produce(2, -1)
	resp := a.fetch(withAcks(h, ackBatch(0, 2, AckAccept)))
	p := h.part(resp)
	if p.AcknowledgeErrorCode != 0 {
		t.Fatalf("ack error %v", kerr.ErrorForCode(p.AcknowledgeErrorCode))
	}
	if got := h.acquired(resp); len(got) != 1 || got[0] != (AcquiredRange{3, 4, 1}) {
		t.Fatalf("acquired %v", got)
	}
	if st := h.p.state(h.key()); st.StartOffset != 3 {
		t.Fatalf("persisted start %d, want 3", st.StartOffset)
	}
	// An acknowledgement of what a does not hold fails in its own field.
	resp = a.fetch(withAcks(h, ackBatch(0, 0, AckAccept)))
	if p := h.part(resp); p.AcknowledgeErrorCode != kerr.InvalidRecordState.Code && p.AcknowledgeErrorCode != 0 {
		t.Fatalf("ack below the start: %v", kerr.ErrorForCode(p.AcknowledgeErrorCode))
	}
	resp = a.fetch(withAcks(h, ackBatch(4, 5, AckAccept)))
	if p := h.part(resp); p.AcknowledgeErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("ack past the window: %v, want INVALID_REQUEST", kerr.ErrorForCode(p.AcknowledgeErrorCode))
	}
}

// TestManagerSessions: the share session epochs and errors of KIP-932.
func TestManagerSessions(t *testing.T) {
	h := newHarness(t, Config{MaxShareSessions: 2}, GroupConfig{})
	h.log.produce(2, -1)
	a := h.member("a")
	if resp := a.fetch(epoch(3)); resp.ErrorCode != kerr.ShareSessionNotFound.Code {
		t.Fatalf("epoch 3 without a session: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	if resp := a.fetch(withAcks(h, ackBatch(0, 0, AckAccept))); resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("acknowledgements opening a session: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	h.acquired(a.fetch())
	if resp := a.fetch(epoch(7)); resp.ErrorCode != kerr.InvalidShareSessionEpoch.Code {
		t.Fatalf("wrong epoch: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	a.epoch = 0
	if code := ackCode(t, a.ack(false, ackBatch(0, 0, AckAccept))); code != kerr.InvalidShareSessionEpoch.Code {
		t.Fatalf("ShareAcknowledge at epoch 0: %v", kerr.ErrorForCode(code))
	}
	// Reopening drops the old session; a still holds 0-1.
	h.acquired(a.fetch())
	if a.epoch != 1 {
		t.Fatalf("epoch after reopening %d", a.epoch)
	}
	// The incremental fetch lists the partition only with news.
	resp := a.fetch()
	if p := h.part(resp); p != nil {
		t.Fatalf("incremental answer lists an idle partition: %+v", p)
	}
	// Forgetting the partition: its fetch stops.
	forget := func(r *kmsg.ShareFetchRequest) {
		r.Topics = nil
		ft := kmsg.NewShareFetchRequestForgottenTopicsData()
		ft.TopicID, ft.Partitions = h.tp.TopicID, []int32{h.tp.Partition}
		r.ForgottenTopicsData = append(r.ForgottenTopicsData, ft)
	}
	h.log.produce(1, -1)
	if p := h.part(a.fetch(forget)); p != nil {
		t.Fatalf("fetched a forgotten partition: %+v", p)
	}
	// Two sessions fill the cache: a third member is refused.
	h.member("b").fetch()
	if resp := h.member("c").fetch(); resp.ErrorCode != kerr.ShareSessionLimitReached.Code {
		t.Fatalf("third session: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	// The final epoch closes a's session. It gives back what a holds on
	// the session's partitions only (Kafka's releaseSession): 1 was
	// acquired through the partition a forgot, so it stays locked to a
	// until its lock expires, and then goes out on a second delivery.
	if code := ackCode(t, a.ack(false, ackBatch(0, 0, AckAccept))); code != 0 {
		t.Fatalf("ack: %v", kerr.ErrorForCode(code))
	}
	a.epoch = finalEpoch
	if code := ackCode(t, a.ack(false)); code != 0 {
		t.Fatalf("final ack: %v", kerr.ErrorForCode(code))
	}
	if n := h.m.sessions.size(); n != 1 {
		t.Fatalf("%d sessions after a closed its own, want 1", n)
	}
	c := h.member("c")
	if got := h.acquired(c.fetch()); len(got) != 0 {
		t.Fatalf("c acquired %v while a's lock on 1 holds and b holds 2", got)
	}
	h.clk.Advance(h.m.cfg.RecordLockDuration)
	h.m.expireLocks()
	if got := h.acquired(c.fetch()); len(got) != 1 || got[0] != (AcquiredRange{1, 2, 2}) {
		t.Fatalf("c acquired %v after the locks expired, want 1-2 on a second delivery", got)
	}
	for _, bad := range []string{"", "0123456789012345678901234567890123456789"} {
		mb := h.member(bad)
		if resp := mb.fetch(); resp.ErrorCode != kerr.InvalidRequest.Code {
			t.Fatalf("member id %q: %v", bad, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
}

// TestManagerConnectionClose: when the connection that opened a session
// closes, the session ends and the member's records go back, their
// delivery not counted (Kafka's DeliveryCountOps.DECREASE): b gets them
// on a first delivery.
func TestManagerConnectionClose(t *testing.T) {
	h := newHarness(t, Config{}, GroupConfig{})
	h.log.produce(3, -1)
	a := h.member("a")
	h.acquired(a.fetch())
	a.cancel()
	waitFor(t, "the session to end", func() bool { return h.m.sessions.size() == 0 })
	waitFor(t, "the lowered delivery count to be written", func() bool {
		st := h.p.state(h.key())
		return len(st.Batches) == 1 && st.Batches[0] == StateBatch{FirstOffset: 0, LastOffset: 2, DeliveryState: int8(Available), DeliveryCount: 0}
	})
	if got := h.acquired(h.member("b").fetch()); len(got) != 1 || got[0] != (AcquiredRange{0, 2, 1}) {
		t.Fatalf("b acquired %v, want a's 0-2 back on a first delivery", got)
	}
}

// TestManagerMemberLeft: the group coordinator's hook gives a departed
// member's records back at once.
func TestManagerMemberLeft(t *testing.T) {
	h := newHarness(t, Config{}, GroupConfig{})
	h.log.produce(3, -1)
	h.acquired(h.member("a").fetch())
	h.m.MemberLeft("g", "a")
	if n := h.m.sessions.size(); n != 0 {
		t.Fatalf("%d sessions left", n)
	}
	if got := h.acquired(h.member("b").fetch()); count(got) != 3 {
		t.Fatalf("b acquired %v", got)
	}
}

// TestManagerRenew: a v2 RENEW restarts the lock; v1, or v2 without
// IsRenewAck, refuses it.
func TestManagerRenew(t *testing.T) {
	h := newHarness(t, Config{}, GroupConfig{RecordLockDuration: 10 * time.Second})
	h.log.produce(2, -1)
	a := h.member("a")
	h.acquired(a.fetch())
	h.clk.Advance(8 * time.Second)
	if code := ackCode(t, a.ack(false, ackBatch(0, 1, AckRenew))); code != kerr.InvalidRequest.Code {
		t.Fatalf("RENEW without IsRenewAck: %v", kerr.ErrorForCode(code))
	}
	if code := ackCode(t, a.ack(true, ackBatch(0, 1, AckRenew))); code != 0 {
		t.Fatalf("RENEW: %v", kerr.ErrorForCode(code))
	}
	h.clk.Advance(8 * time.Second) // 16s after the acquisition, 8s after the renewal
	h.m.expireLocks()
	if got := h.acquired(h.member("b").fetch()); len(got) != 0 {
		t.Fatalf("b acquired %v while a's renewed lock holds", got)
	}
	// A renewal on ShareFetch fetches nothing and must not ask to.
	resp := a.fetch(func(r *kmsg.ShareFetchRequest) { r.IsRenewAck = true })
	if resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("renewing fetch with fetch limits: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	h.log.produce(1, -1)
	resp = a.fetch(withAcks(h, ackBatch(0, 1, AckRenew)), func(r *kmsg.ShareFetchRequest) {
		r.IsRenewAck, r.MaxBytes, r.MinBytes, r.MaxRecords = true, 0, 0, 0
	})
	p := h.part(resp)
	if p == nil || p.AcknowledgeErrorCode != 0 || len(p.AcquiredRecords) != 0 {
		t.Fatalf("renewing fetch answered %+v", p)
	}
}

// TestManagerPersisterFailures: an acknowledgement is answered only after
// its write; a failed write fails it and leaves the records with the
// member; a fenced state epoch drops the partition, which a later fetch
// loads again.
func TestManagerPersisterFailures(t *testing.T) {
	h := newHarness(t, Config{}, GroupConfig{})
	h.log.produce(4, -1)
	a := h.member("a")
	h.acquired(a.fetch())

	stall := make(chan struct{})
	h.p.set(func(p *memPersister) { p.stall = stall })
	acked := make(chan int16, 2)
	go func() { acked <- ackCode(t, a.ack(false, ackBatch(0, 0, AckAccept))) }()
	select {
	case code := <-acked:
		t.Fatalf("acknowledgement answered (%v) before its write ended", kerr.ErrorForCode(code))
	case <-time.After(50 * time.Millisecond):
	}
	close(stall)
	if code := <-acked; code != 0 {
		t.Fatalf("ack: %v", kerr.ErrorForCode(code))
	}
	h.p.set(func(p *memPersister) { p.stall = nil; p.failWrite = errors.New("disk on fire") })
	if code := ackCode(t, a.ack(false, ackBatch(1, 1, AckAccept))); code != kerr.UnknownServerError.Code {
		t.Fatalf("failed write: %v, want UNKNOWN_SERVER_ERROR", kerr.ErrorForCode(code))
	}
	h.p.set(func(p *memPersister) { p.failWrite = kerr.CoordinatorLoadInProgress })
	if code := ackCode(t, a.ack(false, ackBatch(1, 1, AckAccept))); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("coordinator loading: %v, want COORDINATOR_NOT_AVAILABLE", kerr.ErrorForCode(code))
	}
	h.p.set(func(p *memPersister) { p.failWrite = nil })
	if code := ackCode(t, a.ack(false, ackBatch(1, 1, AckAccept))); code != 0 {
		t.Fatalf("a still holds 1 after the failed writes: %v", kerr.ErrorForCode(code))
	}
	// The group's offsets were reset elsewhere: a newer state epoch fences
	// the share partition; the client hears NOT_LEADER_OR_FOLLOWER, as
	// Kafka's fetchPersisterError answers FENCED_STATE_EPOCH.
	h.p.set(func(p *memPersister) { p.stateEpoch[h.key()] = 5 })
	if code := ackCode(t, a.ack(false, ackBatch(2, 2, AckAccept))); code != kerr.NotLeaderForPartition.Code {
		t.Fatalf("fenced write: %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(code))
	}
	if e := h.m.loaded(h.key()); e != nil {
		t.Fatal("the fenced share partition is still held")
	}
	h.p.set(func(p *memPersister) {
		st := p.states[h.key()]
		st.StateEpoch = 5
		p.states[h.key()] = st
	})
	if got := h.acquired(a.fetch()); len(got) != 1 || got[0] != (AcquiredRange{2, 3, 2}) {
		t.Fatalf("after reloading acquired %v, want 2-3 again", got)
	}
}

// TestManagerFailedWriteNotRetriedAtOnce: a persister that keeps failing
// is not written to in a loop; the state a failed write left unwritten
// waits for the reaper's next round (at most a second later).
func TestManagerFailedWriteNotRetriedAtOnce(t *testing.T) {
	h := newHarness(t, Config{}, GroupConfig{})
	h.log.produce(2, -1)
	a := h.member("a")
	h.acquired(a.fetch())
	h.p.set(func(p *memPersister) { p.failWrite = kerr.CoordinatorNotAvailable })
	if code := ackCode(t, a.ack(false, ackBatch(0, 0, AckAccept))); code != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("ack: %v", kerr.ErrorForCode(code))
	}
	var before int
	h.p.set(func(p *memPersister) { before = p.attempts })
	time.Sleep(200 * time.Millisecond)
	var after int
	h.p.set(func(p *memPersister) { after = p.attempts })
	if after-before > 2 {
		t.Fatalf("%d writes in 200ms after a failed one", after-before)
	}
	h.p.set(func(p *memPersister) { p.failWrite = nil })
	if code := ackCode(t, a.ack(false, ackBatch(0, 1, AckAccept))); code != 0 {
		t.Fatalf("ack once the persister is back: %v", kerr.ErrorForCode(code))
	}
	if st := h.p.state(h.key()); st.StartOffset != 2 {
		t.Fatalf("persisted start %d, want 2", st.StartOffset)
	}
}

// TestManagerGroupCommit: acknowledgements staged while a write is out go
// out together in the next one.
func TestManagerGroupCommit(t *testing.T) {
	h := newHarness(t, Config{}, GroupConfig{})
	for range 5 {
		h.log.produce(1, -1)
	}
	members := make([]*member, 5)
	for i := range members {
		members[i] = h.member(string(rune('a' + i)))
		h.acquired(members[i].fetch(maxRecords(1)))
	}
	stall := make(chan struct{})
	h.p.set(func(p *memPersister) { p.stall = stall })
	base := h.p.writeCount()
	var wg sync.WaitGroup
	for i, mb := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code := ackCode(t, mb.ack(false, ackBatch(int64(i), int64(i), AckAccept))); code != 0 {
				t.Errorf("ack: %v", kerr.ErrorForCode(code))
			}
		}()
	}
	waitFor(t, "all acknowledgements staged", func() bool {
		e := h.m.loaded(h.key())
		e.mu.Lock()
		defer e.mu.Unlock()
		n := 0
		for _, r := range e.sp.runs {
			if r.pend.seq != 0 {
				n += int(r.size())
			}
		}
		return n == 5
	})
	close(stall)
	wg.Wait()
	if n := h.p.writeCount() - base; n > 2 {
		t.Fatalf("%d writes for 5 concurrent acknowledgements, want at most 2", n)
	}
	if st := h.p.state(h.key()); st.StartOffset != 5 {
		t.Fatalf("persisted start %d", st.StartOffset)
	}
}

// TestManagerLoadErrors: the persister's answers on load reach the
// partition's error code.
func TestManagerLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want *kerr.Error
	}{
		{kerr.GroupIDNotFound, kerr.GroupIDNotFound},
		{kerr.NotCoordinator, kerr.CoordinatorNotAvailable},
		{kerr.FencedLeaderEpoch, kerr.NotLeaderForPartition},
		{errors.New("boom"), kerr.UnknownServerError},
	} {
		h := newHarness(t, Config{}, GroupConfig{})
		h.p.set(func(p *memPersister) { p.failRead = tc.err })
		p := h.part(h.member("a").fetch())
		if p == nil || p.ErrorCode != tc.want.Code {
			t.Fatalf("read failing with %v: partition %+v, want %v", tc.err, p, tc.want)
		}
		h.p.set(func(p *memPersister) { p.failRead = nil })
	}
}

// TestManagerLeadership: a partition led elsewhere answers
// NOT_LEADER_OR_FOLLOWER with the leader; a leadership change drops the
// share partition, and the next fetch loads it in the new epoch.
func TestManagerLeadership(t *testing.T) {
	h := newHarness(t, Config{}, GroupConfig{})
	h.log.produce(2, -1)
	a := h.member("a")
	h.acquired(a.fetch())
	h.log.setLeader(2, 5)
	h.m.LeadershipChanged()
	waitFor(t, "the share partition to be dropped", func() bool { return h.m.loaded(h.key()) == nil })
	resp := a.fetch()
	p := h.part(resp)
	if p == nil || p.ErrorCode != kerr.NotLeaderForPartition.Code || p.CurrentLeader.LeaderID != 2 || p.CurrentLeader.LeaderEpoch != 5 {
		t.Fatalf("fetch from the old leader: %+v", p)
	}
	if len(resp.NodeEndpoints) != 1 || resp.NodeEndpoints[0].NodeID != 2 {
		t.Fatalf("node endpoints %+v", resp.NodeEndpoints)
	}
	if code := ackCode(t, a.ack(false, ackBatch(0, 1, AckAccept))); code != kerr.NotLeaderForPartition.Code {
		t.Fatalf("ack on the old leader: %v", kerr.ErrorForCode(code))
	}
	h.log.setLeader(1, 6)
	if got := h.acquired(a.fetch()); len(got) != 1 || got[0] != (AcquiredRange{0, 1, 1}) {
		t.Fatalf("acquired %v from the new epoch", got)
	}
	if reads := h.p.reads; reads[len(reads)-1] != 6 {
		t.Fatalf("loaded with leader epochs %v, want the last in 6", reads)
	}
}

// TestManagerReadCommitted: a read_committed group never gets an aborted
// transaction's records, nor anything past the last stable offset.
func TestManagerReadCommitted(t *testing.T) {
	h := newHarness(t, Config{}, GroupConfig{ReadCommitted: true})
	h.log.produce(2, -1)          // 0-1
	first := h.log.produce(3, 7)  // 2-4 aborted
	h.log.endTxn(7, false, first) // 5
	h.log.produce(2, 8)           // 6-7 committed
	h.log.endTxn(8, true, 0)      // 8
	h.log.produce(1, -1)          // 9
	got := h.acquired(h.member("a").fetch())
	var offs []int64
	for _, r := range got {
		for off := r.First; off <= r.Last; off++ {
			offs = append(offs, off)
		}
	}
	for _, off := range offs {
		if off >= 2 && off <= 4 {
			t.Fatalf("aborted offset %d delivered: %v", off, got)
		}
	}
	if len(offs) != 7 { // 0-1, the two markers, 6-7, 9
		t.Fatalf("acquired %v", got)
	}
}

// TestManagerAutoOffsetReset: latest (Kafka's default) skips what was
// there before the group first fetched; earliest takes it.
func TestManagerAutoOffsetReset(t *testing.T) {
	for _, tc := range []struct {
		reset string
		want  AcquiredRange
	}{{"latest", AcquiredRange{3, 4, 1}}, {"earliest", AcquiredRange{0, 4, 1}}} {
		h := newHarness(t, Config{}, GroupConfig{AutoOffsetReset: tc.reset})
		h.log.produce(3, -1)
		a := h.member("a")
		if got := h.acquired(a.fetch()); len(got) != 0 && tc.reset == "latest" {
			t.Fatalf("%s: acquired %v before anything new", tc.reset, got)
		}
		h.log.produce(2, -1)
		resp := a.fetch()
		if tc.reset == "earliest" {
			a.epoch = 0
			resp = a.fetch()
			h.m.MemberLeft("g", "a")
			a.epoch = 0
			resp = a.fetch()
		}
		got := h.acquired(resp)
		if tc.reset == "latest" && (len(got) != 1 || got[0] != tc.want) {
			t.Fatalf("%s: acquired %v, want %v", tc.reset, got, tc.want)
		}
		if tc.reset == "earliest" && (len(got) == 0 || got[0].First != 0) {
			t.Fatalf("%s: acquired %v, want from 0", tc.reset, got)
		}
		if st := h.p.state(h.key()); tc.reset == "latest" && st.StartOffset != 3 {
			t.Fatalf("latest pinned start %d, want 3", st.StartOffset)
		}
	}
}

// TestManagerMaxRecordLocks: no new records beyond
// group.share.partition.max.record.locks in flight; a parked fetch wakes
// when acknowledgements make room.
func TestManagerMaxRecordLocks(t *testing.T) {
	h := newHarness(t, Config{MaxRecordLocks: 4}, GroupConfig{})
	for range 4 {
		h.log.produce(2, -1)
	}
	a, b := h.member("a"), h.member("b")
	if got := h.acquired(a.fetch()); count(got) != 4 {
		t.Fatalf("a acquired %v, want 4", got)
	}
	b.fetch()
	done := make(chan *kmsg.ShareFetchResponse, 1)
	go func() { done <- b.fetch(maxWait(time.Minute)) }()
	waitParked(t, h)
	if code := ackCode(t, a.ack(false, ackBatch(0, 1, AckAccept))); code != 0 {
		t.Fatal(kerr.ErrorForCode(code))
	}
	select {
	case resp := <-done:
		if got := h.acquired(resp); len(got) != 1 || got[0] != (AcquiredRange{4, 5, 1}) {
			t.Fatalf("b acquired %v, want 4-5", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the parked fetch did not wake when room was made")
	}
}
