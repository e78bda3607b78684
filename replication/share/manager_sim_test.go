package share

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestManagerSimulation drives a Manager through seeded random histories
// over its real request paths: members fetching (both acquire modes) and
// acknowledging with every type, on ShareAcknowledge and piggybacked on
// ShareFetch, renewing locks, locks expiring, sessions closing and
// connections dropping, members leaving, the persister failing for a
// while, records produced, and leadership moving away and back in a new
// leader epoch (the share partition reloads from the persister). After
// every step it checks what must hold:
//
//   - no record is held by two members at once;
//   - no delivery count exceeds group.share.delivery.count.limit;
//   - a record whose ACCEPT, REJECT or GAP was answered successfully is
//     never delivered again, not after a leader change either;
//   - an acknowledgement of records a member holds (by the model) is
//     answered successfully while the persister works;
//   - when nothing is left to write, the persister holds the partition's
//     state: the same start offset, and every record not held by a member
//     in the same state with the same delivery count (held ones are
//     stored as available, acquisitions alone are not written);
//
// and at the end, with the persister working, one member drains the log:
// every record ends up acknowledged or archived.
func TestManagerSimulation(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			newManagerSim(t, seed).run(400)
		})
	}
}

const (
	simLimit = 3
	simLock  = 10 * time.Second
)

type managerSim struct {
	t        *testing.T
	rng      *rand.Rand
	h        *harness
	members  map[string]*simMember
	epoch    int32 // the partition's leader epoch
	away     bool  // led by another broker
	failing  bool  // the persister fails writes
	produced int64
	done     map[int64]bool // acknowledged or archived by an answered request
	closing  []closingSession
	trace    []string
}

type simMember struct {
	mb    *member
	holds map[int64]time.Time // offset -> lock deadline, as the member knows it
}

func newManagerSim(t *testing.T, seed uint64) *managerSim {
	h := newHarness(t, Config{DeliveryCountLimit: simLimit, MaxRecordLocks: 40}, GroupConfig{RecordLockDuration: simLock})
	s := &managerSim{t: t, rng: rand.New(rand.NewPCG(seed, 78)), h: h, members: map[string]*simMember{},
		epoch: 1, done: map[int64]bool{}}
	for _, id := range []string{"a", "b", "c"} {
		s.members[id] = &simMember{mb: h.member(id), holds: map[int64]time.Time{}}
	}
	return s
}

func (s *managerSim) step(format string, args ...any) {
	s.trace = append(s.trace, fmt.Sprintf(format, args...))
	if len(s.trace) > 30 {
		s.trace = s.trace[1:]
	}
}

func (s *managerSim) fatalf(format string, args ...any) {
	s.t.Helper()
	state := "not loaded"
	if e := s.h.m.loaded(s.h.key()); e != nil {
		e.mu.Lock()
		state = e.sp.String()
		e.mu.Unlock()
	}
	s.t.Fatalf("%s\nlast steps:\n  %s\npartition: %s\nstored: %s", fmt.Sprintf(format, args...),
		strings.Join(s.trace, "\n  "), state, formatState(s.h.p.state(s.h.key())))
}

func (s *managerSim) now() time.Time { return s.h.clk.Now() }

func (s *managerSim) randomMember() (string, *simMember) {
	id := []string{"a", "b", "c"}[s.rng.IntN(3)]
	return id, s.members[id]
}

func (s *managerSim) run(steps int) {
	for range steps {
		switch p := s.rng.IntN(100); {
		case p < 10:
			n := 1 + s.rng.IntN(6)
			s.h.log.produce(n, -1)
			s.produced += int64(n)
			s.step("produce %d", n)
		case p < 40:
			s.fetch(s.randomMember())
		case p < 62:
			s.ack(s.randomMember())
		case p < 74:
			d := time.Duration(s.rng.IntN(8)) * time.Second
			s.h.clk.Advance(d)
			s.step("advance %s, expire", d)
			s.h.m.expireLocks()
		case p < 78:
			id, m := s.randomMember()
			s.step("%s closes its connection", id)
			s.closeConnection(id, m)
		case p < 81:
			id, m := s.randomMember()
			s.step("%s leaves the group", id)
			s.h.m.MemberLeft(s.h.group, id)
			m.holds = map[int64]time.Time{}
			m.mb.epoch = 0
		case p < 86:
			s.leaderChange()
		case p < 90:
			s.failing = !s.failing
			s.step("persister failing: %t", s.failing)
			var err error
			if s.failing {
				err = kerr.CoordinatorNotAvailable
			}
			s.h.p.set(func(p *memPersister) { p.failWrite = err })
		default:
			s.checkStored()
		}
	}
	s.drain()
}

// closeConnection closes m's connection; m gets a new one, which may
// open its next session before the old one's close (which runs on its own
// goroutine) has given anything back.
func (s *managerSim) closeConnection(id string, m *simMember) {
	c := s.h.m.sessions
	key := sessionKey{s.h.group, id}
	c.mu.Lock()
	if old := c.byKey[key]; old != nil {
		s.closing = append(s.closing, closingSession{key, old})
	}
	c.mu.Unlock()
	m.mb.cancel()
	m.holds = map[int64]time.Time{}
	m.mb = s.h.member(id)
}

// closingSession is a session whose connection closed.
type closingSession struct {
	key sessionKey
	s   *session
}

// awaitCloses waits until the sessions of closed connections are gone
// (the release comes with the removal).
func (s *managerSim) awaitCloses() {
	c := s.h.m.sessions
	waitFor(s.t, "closed connections' sessions to end", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, cs := range s.closing {
			if c.byKey[cs.key] == cs.s {
				return false
			}
		}
		return true
	})
	s.closing = nil
}

// fetch sends a ShareFetch for m, sometimes with acknowledgements of some
// of what it holds.
func (s *managerSim) fetch(id string, m *simMember) {
	opts := []fetchOpt{maxRecords(int32(1 + s.rng.IntN(10))), func(r *kmsg.ShareFetchRequest) {
		r.ShareAcquireMode = int8(s.rng.IntN(2))
		r.BatchSize = int32(s.rng.IntN(4))
	}}
	var acks []simAck
	if m.mb.epoch != 0 && s.rng.IntN(3) == 0 {
		acks = s.pickAcks(m, false)
		var batches []kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch
		for _, a := range acks {
			batches = append(batches, ackBatch(a.first, a.last, a.typ))
		}
		opts = append(opts, withAcks(s.h, batches...))
	}
	resp := m.mb.fetch(opts...)
	s.step("%s fetch (acks %v): error %v", id, acks, kerr.ErrorForCode(resp.ErrorCode))
	switch resp.ErrorCode {
	case 0:
	case kerr.ShareSessionNotFound.Code, kerr.InvalidShareSessionEpoch.Code:
		m.mb.epoch = 0 // open a new session next time
		return
	default:
		s.fatalf("ShareFetch failed: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	p := s.h.part(resp)
	if p == nil {
		if len(acks) > 0 {
			s.fatalf("acknowledged partition missing from the answer")
		}
		return
	}
	s.ackAnswered(id, m, acks, p.AcknowledgeErrorCode)
	switch p.ErrorCode {
	case 0:
	case kerr.NotLeaderForPartition.Code:
		if !s.away {
			s.fatalf("NOT_LEADER_OR_FOLLOWER while leading")
		}
		return
	case kerr.CoordinatorNotAvailable.Code:
		if !s.failing {
			s.fatalf("COORDINATOR_NOT_AVAILABLE with a working persister")
		}
		return
	default:
		s.fatalf("partition error %v", kerr.ErrorForCode(p.ErrorCode))
	}
	got := s.h.acquired(resp)
	s.step("%s acquired %v", id, got)
	for _, r := range got {
		if r.DeliveryCount < 1 || r.DeliveryCount > simLimit {
			s.fatalf("%v delivered with count %d, limit %d", r, r.DeliveryCount, simLimit)
		}
		for off := r.First; off <= r.Last; off++ {
			if s.done[off] {
				s.fatalf("offset %d delivered again after it was done with", off)
			}
			for oid, o := range s.members {
				if d, ok := o.holds[off]; ok && oid != id && s.now().Before(d) {
					s.fatalf("offset %d acquired by %s while %s holds it until +%s", off, id, oid, d.Sub(ddBase))
				}
			}
			m.holds[off] = s.now().Add(simLock)
		}
	}
}

// simAck is one acknowledgement batch of one type.
type simAck struct {
	first, last int64
	typ         AckType
}

// pickAcks chooses runs of what m holds, unexpired, with random types
// (RENEW only when renew).
func (s *managerSim) pickAcks(m *simMember, renew bool) []simAck {
	var held []int64
	for off, d := range m.holds {
		if s.now().Before(d) {
			held = append(held, off)
		}
	}
	slices.Sort(held)
	types := []AckType{AckAccept, AckAccept, AckRelease, AckReject, AckGap}
	if renew {
		types = append(types, AckRenew)
	}
	var out []simAck
	for i := 0; i < len(held); {
		j := i
		for j+1 < len(held) && held[j+1] == held[j]+1 && j-i < 4 {
			j++
		}
		if s.rng.IntN(2) == 0 {
			out = append(out, simAck{held[i], held[j], types[s.rng.IntN(len(types))]})
		}
		i = j + 1
	}
	return out
}

// ack sends a ShareAcknowledge of some of what m holds.
func (s *managerSim) ack(id string, m *simMember) {
	if m.mb.epoch == 0 {
		return // no session yet: only a ShareFetch opens one
	}
	renew := s.rng.IntN(4) == 0
	acks := s.pickAcks(m, renew)
	if len(acks) == 0 {
		return
	}
	var batches []kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch
	for _, a := range acks {
		batches = append(batches, ackBatch(a.first, a.last, a.typ))
	}
	resp := m.mb.ack(renew, batches...)
	s.step("%s ack %v: error %v", id, acks, kerr.ErrorForCode(resp.ErrorCode))
	switch resp.ErrorCode {
	case 0:
	case kerr.ShareSessionNotFound.Code, kerr.InvalidShareSessionEpoch.Code:
		m.mb.epoch = 0
		return
	default:
		s.fatalf("ShareAcknowledge failed: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	s.ackAnswered(id, m, acks, ackCode(s.t, resp))
}

// ackAnswered applies an acknowledgement's answer to the model.
func (s *managerSim) ackAnswered(id string, m *simMember, acks []simAck, code int16) {
	if len(acks) == 0 {
		return
	}
	switch code {
	case 0:
	case kerr.NotLeaderForPartition.Code, kerr.UnknownTopicOrPartition.Code:
		if !s.away && code == kerr.NotLeaderForPartition.Code {
			s.fatalf("acknowledgement answered NOT_LEADER_OR_FOLLOWER while leading")
		}
		return
	case kerr.CoordinatorNotAvailable.Code:
		if !s.failing {
			s.fatalf("acknowledgement failed with a working persister")
		}
		return
	default:
		s.fatalf("%s's acknowledgement of records it holds: %v", id, kerr.ErrorForCode(code))
	}
	for _, a := range acks {
		for off := a.first; off <= a.last; off++ {
			switch a.typ {
			case AckRenew:
				m.holds[off] = s.now().Add(simLock)
			case AckRelease:
				delete(m.holds, off)
			default:
				delete(m.holds, off)
				s.done[off] = true
			}
		}
	}
}

// leaderChange moves the partition's leadership away (sometimes) and back
// in a new leader epoch, after checking the stored state.
func (s *managerSim) leaderChange() {
	s.checkStored()
	if s.away {
		s.epoch++
		s.h.log.setLeader(1, s.epoch)
		s.away = false
		s.step("leadership back in epoch %d", s.epoch)
	} else {
		s.epoch++
		leader := int32(1)
		if s.rng.IntN(2) == 0 {
			leader, s.away = 2, true
		}
		s.h.log.setLeader(leader, s.epoch)
		s.step("leader %d in epoch %d", leader, s.epoch)
	}
	s.h.m.LeadershipChanged()
	// Whatever members held, they held on the old leader.
	for _, m := range s.members {
		m.holds = map[int64]time.Time{}
	}
}

// settle waits until the partition has nothing left to write, flushing
// what a failed write left; false when the persister fails.
func (s *managerSim) settle() (*entry, bool) {
	s.awaitCloses()
	e := s.h.m.loaded(s.h.key())
	if e == nil || s.failing {
		return e, false
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		e.mu.Lock()
		quiet := e.gone == nil && !e.flushing && !e.sp.Dirty() && !e.sp.Writing()
		gone := e.gone != nil
		e.mu.Unlock()
		if quiet || gone {
			return e, quiet
		}
		if time.Now().After(deadline) {
			s.fatalf("the partition never settled")
		}
		s.h.m.flush(e)
		time.Sleep(time.Millisecond)
	}
}

// checkStored compares the stored state with the partition's.
func (s *managerSim) checkStored() {
	e, ok := s.settle()
	if !ok {
		return
	}
	st := s.h.p.state(s.h.key())
	e.mu.Lock()
	start, runs := e.sp.start, slices.Clone(e.sp.runs)
	e.mu.Unlock()
	if st.StartOffset != start {
		s.fatalf("stored start %d, partition start %d", st.StartOffset, start)
	}
	stored := map[int64]StateBatch{}
	for _, b := range st.Batches {
		for off := b.FirstOffset; off <= b.LastOffset; off++ {
			stored[off] = b
		}
	}
	for _, r := range runs {
		for off := r.first; off <= r.last; off++ {
			b, ok := stored[off]
			if r.state == Acquired {
				if ok && (RecordState(b.DeliveryState) != Available || b.DeliveryCount > r.deliveries) {
					s.fatalf("held offset %d stored as %s d%d, is d%d", off, RecordState(b.DeliveryState), b.DeliveryCount, r.deliveries)
				}
				continue
			}
			if !ok || RecordState(b.DeliveryState) != r.state || b.DeliveryCount != r.deliveries {
				s.fatalf("offset %d is %s d%d, stored %v (%t)", off, r.state, r.deliveries, b, ok)
			}
		}
	}
}

// drain has member z take and accept everything with a working
// persister and the partition led here: every record must end up done.
func (s *managerSim) drain() {
	s.h.p.set(func(p *memPersister) { p.failWrite = nil })
	s.failing = false
	if s.away {
		s.leaderChange()
	}
	z := s.h.member("z")
	for range 500 {
		s.h.clk.Advance(time.Minute)
		s.h.m.expireLocks()
		resp := z.fetch(maxRecords(50))
		if resp.ErrorCode != 0 {
			s.fatalf("drain fetch: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		var batches []kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch
		for _, r := range s.h.acquired(resp) {
			batches = append(batches, ackBatch(r.First, r.Last, AckAccept))
		}
		if len(batches) > 0 {
			if code := ackCode(s.t, z.ack(false, batches...)); code != 0 {
				s.fatalf("drain ack: %v", kerr.ErrorForCode(code))
			}
		}
		if e, _ := s.settle(); e != nil {
			e.mu.Lock()
			start := e.sp.start
			e.mu.Unlock()
			if start == s.produced {
				s.checkStored()
				return
			}
		}
	}
	s.fatalf("the drain did not finish: %d records produced", s.produced)
}
