package share

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestPartitionSimulation drives SharePartitions through seeded random
// histories — acquisitions by three members, acknowledgements of every
// type, writes that fail, lock expiries, releases, log start moves and
// crashes that reload the last written state — and checks after every
// step what must always hold:
//
//   - the runs cover the window exactly, sorted and merged, with a
//     holder and a deadline exactly on acquired records;
//   - a record is handed out only while available (never to two members
//     at once), with its delivery count one higher than before, and never
//     more than the delivery count limit;
//   - a record acknowledged or archived by a successful write is never
//     handed out again, not even after a crash;
//   - what a successful write stored reloads to the same states;
//   - the start offset never moves back, except to the stored one on a
//     crash.
//
// At the end one member takes and accepts everything: every record of the
// log must end up done with (nothing lost or stuck).
func TestPartitionSimulation(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			newSim(t, seed).run(400)
		})
	}
}

type sim struct {
	t        *testing.T
	rng      *rand.Rand
	cfg      PartitionConfig
	sp       *SharePartition
	now      time.Time
	log      []LogBatch // the whole log; offsets in no batch were compacted away
	hwm      int64
	logStart int64
	epoch    int32

	stored    PersistedState // the last successful write
	out       *simWrite      // the write in flight
	done      map[int64]bool // offsets done with, durably or in memory
	durable   map[int64]bool // offsets done with in the stored state
	lastStart int64
	trace     []string
}

type simWrite struct {
	seq uint64
	st  PersistedState
}

func newSim(t *testing.T, seed uint64) *sim {
	s := &sim{t: t, rng: rand.New(rand.NewPCG(seed, 932)), now: ddBase, epoch: 1,
		cfg:  PartitionConfig{DeliveryCountLimit: 3, MaxInFlight: 25},
		done: map[int64]bool{}, durable: map[int64]bool{}}
	readCommitted := seed%2 == 0
	for off := int64(0); off < 300; {
		if s.rng.IntN(10) == 0 {
			off += int64(1 + s.rng.IntN(2)) // compacted away
		}
		n := int64(1 + s.rng.IntN(6))
		s.log = append(s.log, LogBatch{First: off, Last: off + n - 1, Aborted: readCommitted && s.rng.IntN(8) == 0})
		off += n
	}
	s.stored = PersistedState{StartOffset: -1}
	s.sp = Recover(s.cfg, s.epoch, s.stored, 0, 0)
	return s
}

func (s *sim) step(format string, args ...any) {
	s.trace = append(s.trace, fmt.Sprintf(format, args...))
	if len(s.trace) > 25 {
		s.trace = s.trace[1:]
	}
}

func (s *sim) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("%s\nlast steps:\n  %s\npartition: %s", fmt.Sprintf(format, args...), strings.Join(s.trace, "\n  "), s.sp)
}

func (s *sim) run(steps int) {
	members := []string{"a", "b", "c"}
	for range steps {
		switch p := s.rng.IntN(100); {
		case p < 8:
			s.hwm = min(s.hwm+int64(1+s.rng.IntN(15)), s.log[len(s.log)-1].Last+1)
			s.step("hwm %d", s.hwm)
		case p < 38:
			s.acquire(members[s.rng.IntN(3)])
		case p < 63:
			s.ack(members[s.rng.IntN(3)])
		case p < 78:
			s.write()
		case p < 88:
			s.now = s.now.Add(time.Duration(s.rng.IntN(12)) * time.Second)
			s.step("expire at +%s", s.now.Sub(ddBase))
			s.sp.ExpireLocks(s.now)
			s.checkExpired()
		case p < 92:
			m := members[s.rng.IntN(3)]
			s.step("release %s", m)
			s.sp.ReleaseMember(m, math.MaxUint64)
		case p < 94:
			s.logStart = min(s.logStart+int64(s.rng.IntN(10)), s.hwm)
			s.step("log start %d", s.logStart)
			s.sp.MoveStart(s.logStart)
		case p < 97:
			s.crash()
		default:
			s.ackInvalid(members[s.rng.IntN(3)])
		}
		s.check()
	}
	s.drain()
}

// read returns the log batches a fetch from off reads: at most n batches
// below the high watermark, starting with the one holding off.
func (s *sim) read(off int64, n int) []LogBatch {
	var out []LogBatch
	for _, b := range s.log {
		if b.Last < off || b.First < s.logStart {
			continue
		}
		if b.Last >= s.hwm || len(out) == n {
			break
		}
		out = append(out, b)
	}
	return out
}

func (s *sim) acquire(m string) {
	if !s.sp.CanAcquire() {
		return
	}
	req := AcquireRequest{
		Member: m, Now: s.now, Lock: time.Duration(5+s.rng.IntN(20)) * time.Second,
		MaxRecords: 1 + s.rng.IntN(12), Mode: AcquireMode(s.rng.IntN(2)), BatchSize: s.rng.IntN(5),
		From: s.sp.FetchOffset(),
	}
	req.Batches = s.read(req.From, 1+s.rng.IntN(6))
	before := s.snapshotStates()
	got := s.sp.Acquire(req)
	s.step("acquire %s max=%d mode=%d from %d: %v", m, req.MaxRecords, req.Mode, req.From, got)
	total := int64(0)
	for _, r := range got {
		if r.DeliveryCount > s.cfg.DeliveryCountLimit {
			s.fatalf("%v delivered more than %d times", r, s.cfg.DeliveryCountLimit)
		}
		for off := r.First; off <= r.Last; off++ {
			total++
			if s.done[off] {
				s.fatalf("offset %d handed out again after it was done with", off)
			}
			prev, inWindow := before[off]
			switch {
			case !inWindow && r.DeliveryCount != 1:
				s.fatalf("new offset %d handed out with delivery count %d", off, r.DeliveryCount)
			case inWindow && (prev.state != Available || prev.pend.seq != 0):
				s.fatalf("offset %d handed out while %s (pending %d)", off, prev.state, prev.pend.seq)
			case inWindow && r.DeliveryCount != prev.deliveries+1:
				s.fatalf("offset %d handed out with delivery count %d after %d", off, r.DeliveryCount, prev.deliveries)
			}
			if cur := s.stateAt(off); cur.state != Acquired || cur.member != m {
				s.fatalf("offset %d handed out but %s by %q", off, cur.state, cur.member)
			}
		}
	}
	if req.Mode == RecordLimit && total > int64(req.MaxRecords) {
		s.fatalf("record-limit acquisition took %d records, max %d", total, req.MaxRecords)
	}
}

// ack acknowledges some of the records m holds, with random types.
func (s *sim) ack(m string) {
	var held []int64
	for i := range s.sp.runs {
		r := &s.sp.runs[i]
		if r.state == Acquired && r.member == m && r.pend.seq == 0 {
			for off := r.first; off <= r.last; off++ {
				held = append(held, off)
			}
		}
	}
	if len(held) == 0 {
		return
	}
	var batches []AckBatch
	for i := 0; i < len(held); {
		j := i
		for j+1 < len(held) && held[j+1] == held[j]+1 && j-i < 6 {
			j++
		}
		if s.rng.IntN(3) > 0 {
			b := AckBatch{First: held[i], Last: held[j]}
			if s.rng.IntN(2) == 0 {
				b.Types = []AckType{s.ackType()}
			} else {
				for range held[j] - held[i] + 1 {
					b.Types = append(b.Types, s.ackType())
				}
			}
			batches = append(batches, b)
		}
		i = j + 1
	}
	_, err := s.sp.Acknowledge(s.now, m, 10*time.Second, batches)
	s.step("ack %s %v: %v", m, batches, err)
	if err != nil {
		s.fatalf("valid acknowledgement of held records failed: %v", err)
	}
}

func (s *sim) ackType() AckType {
	return []AckType{AckAccept, AckAccept, AckRelease, AckReject, AckGap, AckRenew}[s.rng.IntN(6)]
}

// ackInvalid acknowledges a record m does not hold: it must fail and
// change nothing.
func (s *sim) ackInvalid(m string) {
	if s.sp.end == s.sp.start {
		return
	}
	off := s.sp.start + s.rng.Int64N(s.sp.end-s.sp.start)
	if r := s.stateAt(off); r.state == Acquired && r.member == m && r.pend.seq == 0 {
		return
	}
	before := s.sp.String()
	_, err := s.sp.Acknowledge(s.now, m, time.Second, []AckBatch{{First: off, Last: off, Types: []AckType{AckAccept}}})
	s.step("invalid ack %s %d: %v", m, off, err)
	if err == nil || s.sp.String() != before {
		s.fatalf("acknowledgement of %d by %s, who does not hold it: err %v, before %s", off, m, err, before)
	}
}

func (s *sim) write() {
	if s.out == nil {
		seq, st, ok := s.sp.BeginWrite()
		if ok {
			s.out = &simWrite{seq, st}
			s.step("begin write %d: %s", seq, formatState(st))
			s.checkReload(st)
		}
		return
	}
	ok := s.rng.IntN(7) > 0
	s.step("end write %d ok=%t", s.out.seq, ok)
	s.sp.EndWrite(s.out.seq, ok)
	if ok {
		s.stored = s.out.st
		s.durable = map[int64]bool{}
		for off := int64(0); off < s.stored.StartOffset; off++ {
			s.durable[off] = true
		}
		for _, b := range s.stored.Batches {
			if RecordState(b.DeliveryState).terminal() {
				for off := b.FirstOffset; off <= b.LastOffset; off++ {
					s.durable[off] = true
				}
			}
		}
	}
	s.out = nil
}

// crash reloads the partition from the stored state, in a new leader
// epoch; a write in flight is lost.
func (s *sim) crash() {
	s.epoch++
	s.out = nil
	s.step("crash: reload %s", formatState(s.stored))
	s.sp = Recover(s.cfg, s.epoch, s.stored, 0, s.logStart)
	s.done = map[int64]bool{}
	for off := range s.durable {
		s.done[off] = true
	}
	if st := s.stored.StartOffset; st >= 0 && s.sp.start < st {
		s.fatalf("reloaded start %d below the stored %d", s.sp.start, st)
	}
	s.lastStart = s.sp.start
}

func (s *sim) stateAt(off int64) run {
	i := s.sp.runs.index(off)
	if i == len(s.sp.runs) || s.sp.runs[i].first > off {
		return run{state: -1}
	}
	return s.sp.runs[i]
}

func (s *sim) snapshotStates() map[int64]run {
	out := map[int64]run{}
	for _, r := range s.sp.runs {
		for off := r.first; off <= r.last; off++ {
			out[off] = r
		}
	}
	return out
}

// check verifies the structure, records what is done with, and that the
// start never moves back.
func (s *sim) check() {
	sp := s.sp
	if sp.start > sp.end {
		s.fatalf("start %d past end %d", sp.start, sp.end)
	}
	if sp.start < s.lastStart {
		s.fatalf("start moved back from %d to %d", s.lastStart, sp.start)
	}
	s.lastStart = sp.start
	next := sp.start
	for i := range sp.runs {
		r := &sp.runs[i]
		if r.first != next || r.last < r.first {
			s.fatalf("run %d-%d does not follow %d", r.first, r.last, next)
		}
		next = r.last + 1
		if i > 0 && sp.runs[i-1].sameAs(r) {
			s.fatalf("runs %d and %d not merged", i-1, i)
		}
		if (r.state == Acquired) != (r.member != "") || (r.state == Acquired) == r.deadline.IsZero() {
			s.fatalf("run %d-%d %s with holder %q deadline %v", r.first, r.last, r.state, r.member, r.deadline)
		}
		if r.pend.seq != 0 && r.state != Acquired {
			s.fatalf("run %d-%d pending while %s", r.first, r.last, r.state)
		}
		if r.deliveries > s.cfg.DeliveryCountLimit || (r.state == Available && r.deliveries >= s.cfg.DeliveryCountLimit) {
			s.fatalf("run %d-%d %s after %d deliveries", r.first, r.last, r.state, r.deliveries)
		}
		if r.state.terminal() && r.pend.seq == 0 {
			if i == 0 {
				s.fatalf("done run %d-%d at the start", r.first, r.last)
			}
			for off := r.first; off <= r.last; off++ {
				s.done[off] = true
			}
		}
	}
	if next != sp.end {
		s.fatalf("runs end at %d, window at %d", next, sp.end)
	}
	for off := int64(0); off < sp.start; off++ {
		s.done[off] = true
	}
}

func (s *sim) checkExpired() {
	for _, r := range s.sp.runs {
		if r.state == Acquired && r.pend.seq == 0 && !r.deadline.After(s.now) {
			s.fatalf("run %d-%d still held by %s after its lock expired", r.first, r.last, r.member)
		}
	}
}

// checkReload verifies, as a write begins, that the state it stores
// reloads to the partition's states once the write succeeds: held records
// come back available, or archived once delivered the limit times (their
// lock died with the leader, as if it expired).
func (s *sim) checkReload(st PersistedState) {
	rec := Recover(s.cfg, s.epoch, st, 0, 0)
	for off := s.sp.start; off < s.sp.end; off++ {
		want, got := s.stateAt(off), run{state: -1}
		if i := rec.runs.index(off); i < len(rec.runs) && rec.runs[i].first <= off {
			got = rec.runs[i]
		}
		if want.pend.seq != 0 {
			want.state = want.pend.to
		}
		if want.state == Acquired {
			want.state = s.sp.released(&want)
		}
		if off < rec.start {
			if !want.state.terminal() {
				s.fatalf("offset %d is %s but reloads below the start %d", off, want.state, rec.start)
			}
			continue
		}
		if got.state != want.state || (!got.state.terminal() && got.deliveries != want.deliveries) {
			s.fatalf("offset %d reloads as %s d%d, is %s d%d", off, got.state, got.deliveries, want.state, want.deliveries)
		}
	}
}

// drain lets member z take and accept everything: every record must end
// up done with.
func (s *sim) drain() {
	s.hwm = s.log[len(s.log)-1].Last + 1
	for range 10000 {
		if s.out != nil {
			s.sp.EndWrite(s.out.seq, true)
			s.out = nil
		}
		s.now = s.now.Add(time.Minute)
		s.sp.ExpireLocks(s.now)
		from := s.sp.FetchOffset()
		got := s.sp.Acquire(AcquireRequest{Member: "z", Now: s.now, Lock: time.Minute, MaxRecords: 50,
			From: from, Batches: s.read(from, 20)})
		var acks []AckBatch
		for _, r := range got {
			acks = append(acks, AckBatch{First: r.First, Last: r.Last, Types: []AckType{AckAccept}})
		}
		if _, err := s.sp.Acknowledge(s.now, "z", time.Minute, acks); err != nil {
			s.fatalf("drain: %v", err)
		}
		if seq, _, ok := s.sp.BeginWrite(); ok {
			s.sp.EndWrite(seq, true)
		}
		s.check()
		if s.sp.start == s.hwm {
			return
		}
	}
	s.fatalf("drain did not finish: start %d, log end %d", s.sp.start, s.hwm)
}
