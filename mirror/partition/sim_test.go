package partition

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strait-io/strait/raftmeta/mirrorstate"
)

var (
	simSeed  = flag.Uint64("sim.seed", 0, "run only this seed (0: the range)")
	simSeeds = flag.Int("sim.seeds", 1000, "how many seeds to run")
	simSteps = flag.Int("sim.steps", 600, "random steps per seed before the final drain")
)

// TestSimulation drives three replicas' machines for one mirror partition
// through random histories: leadership flaps delivered to each broker at its
// own pace, desired-state changes (mostly validated, some not), effects
// started in order but answered in any order, duplicated and stale answers,
// injected errors, fetch failures, source epochs racing ahead of the leader
// epoch, and time. The source holds plain records and transactions
// (committed, aborted, and open when a stop comes); a stop's ABORT markers
// may be cut short midway. The world checks the machines' outputs against
// the invariants below after every step (a stop records the LME and the
// stop offset of the mirrored log, however far it got before; STOPPED
// leaves no transaction open, keeps every mirrored batch, and a
// read_committed consumer sees what the source had committed at the stop
// point), then stops the faults, sets a final desired state and checks the
// partition reaches it. A failure prints the
// seed; rerun it alone with -sim.seed=N.
func TestSimulation(t *testing.T) {
	runSimSeeds(t, 1, uint64(*simSeeds))
}

func runSimSeeds(t *testing.T, first, count uint64) {
	if *simSeed != 0 {
		first, count = *simSeed, 1
	}
	var total simStats
	for seed := first; seed < first+count; seed++ {
		s := newSim(seed)
		if err := s.run(*simSteps); err != nil {
			t.Fatalf("seed %d: %v\nrecent:\n%s\nrerun: go test ./mirror/partition -run TestSimulation -sim.seed=%d",
				seed, err, strings.Join(s.trace[max(0, len(s.trace)-40):], "\n"), seed)
		}
		total.add(s.stats)
	}
	t.Logf("%d seeds: %+v", count, total)
	// The runs must have exercised what the invariants are about.
	if count >= 100 {
		for name, n := range map[string]int{
			"stopped": total.Stopped, "failed": total.Failed, "failedRetries": total.FailedRetries, "exhausted": total.Exhausted, "bumps": total.Bumps,
			"staleAnswers": total.Stale, "zombieWrites": total.Fenced, "pauses": total.Paused, "appends": total.Appends,
			"abortedTxns": total.AbortedTxns, "partialAborts": total.PartialAborts, "stopsWithOpenTxns": total.StopsWithOpenTxns,
			"abortReruns": total.AbortReruns, "alignedRetries": total.AlignedRetries,
		} {
			if n == 0 {
				t.Errorf("no %s in %d seeds", name, count)
			}
		}
		// Full jitter: the drawn delays spread over [0, ceiling].
		if total.JitterLow == 0 || total.JitterHigh == 0 {
			t.Errorf("retry delays not jittered: %d below a quarter of the ceiling, %d above three quarters", total.JitterLow, total.JitterHigh)
		}
	}
}

type simStats struct {
	Steps, Effects, Stale, Fenced, Appends, Bumps, Paused, Stopped, Failed, FailedRetries, Exhausted int
	JitterLow, JitterHigh                                                                            int
	// AbortedTxns counts the transactions stops aborted, PartialAborts
	// the abort runs that failed after writing some of their markers, and
	// StopsWithOpenTxns the STOPPED records whose stop point left a
	// transaction open.
	AbortedTxns, PartialAborts, StopsWithOpenTxns int
	// AbortReruns counts abort runs that found the stop's own batches
	// already in the log: a repeat after a partial run or a takeover.
	AbortReruns int
	// AlignedRetries counts the retries (FAILED → PREPARING) of a log
	// that had finished alignment, which must keep it.
	AlignedRetries                                         int
	FinalMirroring, FinalPaused, FinalStopped, FinalFailed int
}

func (s *simStats) add(o simStats) {
	s.Steps += o.Steps
	s.Effects += o.Effects
	s.Stale += o.Stale
	s.Fenced += o.Fenced
	s.Appends += o.Appends
	s.Bumps += o.Bumps
	s.Paused += o.Paused
	s.Stopped += o.Stopped
	s.Failed += o.Failed
	s.FailedRetries += o.FailedRetries
	s.Exhausted += o.Exhausted
	s.JitterLow += o.JitterLow
	s.JitterHigh += o.JitterHigh
	s.AbortedTxns += o.AbortedTxns
	s.PartialAborts += o.PartialAborts
	s.StopsWithOpenTxns += o.StopsWithOpenTxns
	s.AbortReruns += o.AbortReruns
	s.AlignedRetries += o.AlignedRetries
	s.FinalMirroring += o.FinalMirroring
	s.FinalPaused += o.FinalPaused
	s.FinalStopped += o.FinalStopped
	s.FinalFailed += o.FinalFailed
}

// The kinds of batch a log holds. A source holds data and markers; the
// destination also holds what its stops write (local): ABORT markers for
// the transactions the source left open, and MIRROR_PID_RESET.
const (
	entryData = iota
	entryCommit
	entryAbort
	entryPIDReset
)

// simEntry is one batch. pid 0 is a plain (non-transactional) batch; a data
// batch of pid > 0 is transactional and opens its producer's transaction,
// which the producer's next COMMIT or ABORT marker closes.
type simEntry struct {
	epoch int32
	kind  int
	pid   int
	local bool // written by the destination's stop, not mirrored
}

// simProducers is how many transactional producers write to the source.
const simProducers = 3

// openTxns lists the producers with a transaction open in log, ascending.
func openTxns(log []simEntry) []int {
	var open [simProducers + 1]bool
	for _, e := range log {
		switch {
		case e.pid == 0:
		case e.kind == entryData:
			open[e.pid] = true
		case e.kind == entryCommit, e.kind == entryAbort:
			open[e.pid] = false
		}
	}
	var out []int
	for pid, o := range open {
		if o {
			out = append(out, pid)
		}
	}
	return out
}

// readCommitted lists the offsets of the data batches a read_committed
// consumer of log sees: plain ones, and those of committed transactions.
// A transaction still open hides its data (the last stable offset stops
// at it), as an aborted one does.
func readCommitted(log []simEntry) []int {
	var out []int
	pending := map[int][]int{}
	for i, e := range log {
		switch {
		case e.kind == entryData && e.pid == 0:
			out = append(out, i)
		case e.kind == entryData:
			pending[e.pid] = append(pending[e.pid], i)
		case e.kind == entryCommit:
			out = append(out, pending[e.pid]...)
			delete(pending, e.pid)
		case e.kind == entryAbort:
			delete(pending, e.pid)
		}
	}
	slices.Sort(out)
	return out
}

type simBroker struct {
	id     int
	m      *Machine
	leader bool
	epoch  int32
	meta   []Event  // metadata, delivered in order
	queue  []Effect // emitted, not yet started (started in order)
	inbox  []Event  // answers and reports, delivered in any order
	past   []Event  // delivered answers, for duplicates
	// fetcher is the mirror fetcher running on this broker (world side).
	fetcher  *Ref
	reported int32 // highest SourceEpochAhead sent for this fetcher
	// emitted maps an effect's identity to the broker's reset count at its
	// emission: the same effect again needs a reason (an error, a timer, a
	// desired change, a fetcher report) in between.
	emitted map[string]int
	resets  int
	access  Access
}

type simTimer struct {
	b  int
	at time.Time
	r  Result
}

type sim struct {
	seed    uint64
	rng     *rand.Rand
	cfg     Config
	now     time.Time
	brokers []*simBroker
	// The controller's truth.
	leader  int
	epoch   int32
	desired Desired
	// The __mirror_state coordinator's record.
	store Record
	log   []simEntry
	// source holds the source partition's batches (offset = index).
	source []simEntry
	// stopLog is the log as the last LME record found it (the mirrored
	// log the stop must keep whole) and stopTrusted whether that record's
	// LME is trusted (lmeTrusted).
	stopLog     []simEntry
	stopTrusted bool
	// stopEnd is the log end offset before the current STOPPING first
	// changed the log, -1 until it does, and stopMirrored the log then:
	// the mirrored log the LME record must describe whenever the stop
	// records it.
	stopEnd      int
	stopMirrored []simEntry
	timers       []simTimer
	faults       bool
	stats        simStats
	trace        []string
}

func newSim(seed uint64) *sim {
	s := &sim{seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5eed)), now: time.Unix(0, 0).UTC(), store: EmptyRecord(),
		leader: -1, desired: DesiredNone, faults: true, stopEnd: -1}
	s.cfg = Config{RetryInitialBackoff: 100 * time.Millisecond, RetryMaxBackoff: 2 * time.Second,
		RetryMaxAttempts: 1 + s.rng.Int32N(3), RetryResetAfter: 30 * time.Second,
		StepInitialBackoff: 50 * time.Millisecond, StepMaxBackoff: time.Second}
	for i := range 3 {
		cfg := s.cfg
		cfg.Rand = rand.New(rand.NewPCG(seed, uint64(i)))
		m, err := New(cfg)
		if err != nil {
			panic(err)
		}
		s.brokers = append(s.brokers, &simBroker{id: i, m: m, epoch: -1, emitted: map[string]int{}})
	}
	return s
}

func (s *sim) tracef(format string, args ...any) {
	s.trace = append(s.trace, fmt.Sprintf("%6d ", s.stats.Steps)+fmt.Sprintf(format, args...))
}

func (s *sim) run(steps int) error {
	s.elect()
	s.setDesired(DesiredStart, true)
	for range steps {
		s.stats.Steps++
		if err := s.randomStep(); err != nil {
			return err
		}
	}
	return s.drain()
}

// randomStep performs one random action of the world.
func (s *sim) randomStep() error {
	switch n := s.rng.IntN(200); {
	case n < 3:
		s.elect()
	case n < 8:
		s.setDesired(Desired(s.rng.IntN(3)), s.rng.IntN(100) < 85)
	case n < 40:
		return s.deliverMeta(s.pick(func(b *simBroker) int { return len(b.meta) }))
	case n < 95:
		return s.startEffect(s.pick(func(b *simBroker) int { return len(b.queue) }))
	case n < 150:
		return s.deliverAnswer(s.pick(func(b *simBroker) int { return len(b.inbox) + len(b.past)/8 }), s.rng.IntN(100) < 8)
	case n < 165:
		s.tick(time.Duration(s.rng.IntN(400)) * time.Millisecond)
	case n < 185:
		return s.fetch()
	case n < 193:
		s.growSource()
	default:
		s.injectFetchError()
	}
	return nil
}

// pick chooses a broker with something to do, weighted by how much.
func (s *sim) pick(work func(*simBroker) int) int {
	total := 0
	for _, b := range s.brokers {
		total += work(b)
	}
	if total == 0 {
		return s.rng.IntN(len(s.brokers))
	}
	k := s.rng.IntN(total)
	for i, b := range s.brokers {
		if k -= work(b); k < 0 {
			return i
		}
	}
	return 0
}

// elect moves leadership (or bumps the epoch of the same leader) and queues
// the news for every broker.
func (s *sim) elect() {
	s.setLeader(s.rng.IntN(len(s.brokers)), s.epoch+1)
}

func (s *sim) setLeader(leader int, epoch int32) {
	s.leader, s.epoch = leader, epoch
	s.tracef("controller: leader %d epoch %d", leader, epoch)
	for _, b := range s.brokers {
		if b.id == leader {
			b.meta = append(b.meta, BecomeLeader{LeaderEpoch: epoch})
		} else {
			b.meta = append(b.meta, BecomeFollower{LeaderEpoch: epoch})
		}
	}
}

// setDesired changes mirror.name as the controller would: validated against
// the partition's recorded state, or (validate false) regardless.
func (s *sim) setDesired(d Desired, validate bool) {
	if validate {
		var err error
		switch {
		case d == DesiredStart && (s.desired == DesiredPause):
			err = mirrorstate.ValidateResume(s.store.State)
		case d == DesiredStart:
			err = mirrorstate.ValidateStart(s.store.State)
		case d == DesiredStop:
			err = mirrorstate.ValidateStop(s.store.State)
		case d == DesiredPause:
			err = mirrorstate.ValidatePause(s.store.State)
		}
		if err != nil {
			return
		}
	}
	s.desired = d
	s.tracef("controller: desired %s (validated %v, record %s)", d, validate, s.store.State)
	for _, b := range s.brokers {
		b.meta = append(b.meta, DesiredChanged{Mirror: "m", Desired: d})
	}
}

func (s *sim) deliverMeta(i int) error {
	b := s.brokers[i]
	if len(b.meta) == 0 {
		return nil
	}
	ev := b.meta[0]
	b.meta = b.meta[1:]
	switch ev := ev.(type) {
	case BecomeLeader:
		b.leader, b.epoch = true, ev.LeaderEpoch
	case BecomeFollower:
		b.leader, b.epoch = false, ev.LeaderEpoch
		b.access = AccessUnknown
	case DesiredChanged:
		b.resets++
	}
	return s.step(b, ev)
}

// step feeds one event to a broker's machine and checks what comes out.
func (s *sim) step(b *simBroker, ev Event) error {
	before := b.m.Status()
	var answers *Ref
	switch ev := ev.(type) {
	case Result:
		answers = &ev.Ref
	case FetchFailed:
		b.resets++
	case SourceEpochAhead:
		b.resets++
	}
	err := b.m.Step(s.now, ev)
	s.tracef("b%d <- %s: %v", b.id, evString(ev), err)
	if answers != nil {
		awaited := before.Waiting != nil && before.Waiting.Ref == *answers
		if awaited == errors.Is(err, ErrStale) {
			return fmt.Errorf("b%d: answer %s awaited=%v but Step returned %v", b.id, answers, awaited, err)
		}
	}
	if err != nil && !errors.Is(err, ErrStale) {
		return fmt.Errorf("b%d: Step(%s): %w", b.id, evString(ev), err)
	}
	if errors.Is(err, ErrStale) {
		s.stats.Stale++
		if b.m.HasReady() {
			return fmt.Errorf("b%d: a stale event emitted %v", b.id, b.m.Ready().Effects)
		}
		return nil
	}
	return s.collect(b)
}

// collect takes a broker's Ready and checks each effect as it is emitted.
func (s *sim) collect(b *simBroker) error {
	if !b.m.HasReady() {
		return nil
	}
	rd := b.m.Ready()
	b.m.Advance()
	st := b.m.Status()
	for _, e := range rd.Effects {
		s.stats.Effects++
		s.tracef("b%d -> %s", b.id, e.Format(time.Unix(0, 0).UTC()))
		if e.Ref.LeaderEpoch != st.LeaderEpoch {
			return fmt.Errorf("b%d: effect %s stamped with epoch %d, machine at %d", b.id, e.Kind, e.Ref.LeaderEpoch, st.LeaderEpoch)
		}
		if !st.Leader && e.Kind != RemoveFetcher {
			return fmt.Errorf("b%d: a follower emitted %s", b.id, e.Kind)
		}
		key := fmt.Sprintf("%d/%s/%s/%d/%d/%d/%s", e.Ref.LeaderEpoch, e.Kind, e.Record, e.ExpectedStateEpoch, e.Epoch, e.Offset, e.Retry)
		if r, ok := b.emitted[key]; ok && r == b.resets && e.Kind != RemoveFetcher {
			return fmt.Errorf("b%d: %s emitted twice in one generation with no retry in between", b.id, e.Format(time.Time{}))
		}
		b.emitted[key] = b.resets
		switch e.Kind {
		case WriteMirrorState:
			from := st.Record.State // the record the write replaces, as the machine knows it
			if !ValidTransition(from, e.Record.State) {
				return fmt.Errorf("b%d: invalid transition %s -> %s emitted", b.id, from, e.Record.State)
			}
			if e.Record.State == StatePreparing && from == StateFailed {
				if n := e.Record.RetryAttempt; n < 1 || n > s.cfg.RetryMaxAttempts {
					return fmt.Errorf("b%d: automatic retry %d of %d", b.id, n, s.cfg.RetryMaxAttempts)
				}
				s.stats.FailedRetries++
			}
		case AddFetcher:
			if !st.Known || st.Record.State != StateMirroring {
				return fmt.Errorf("b%d: AddFetcher while the record is %s (known %v)", b.id, st.Record.State, st.Known)
			}
		case ClearReadOnly:
			if st.Record.State != StateStopped {
				return fmt.Errorf("b%d: ClearReadOnly while the record is %s", b.id, st.Record.State)
			}
		case ScheduleRetry:
			delay := e.At.Sub(s.now)
			ceiling := Backoff(s.cfg.StepInitialBackoff, s.cfg.StepMaxBackoff, 1<<20)
			if e.Retry == RetryFailed {
				n := st.Record.RetryAttempt
				if st.Record.State != StateFailed || n < 1 || n > s.cfg.RetryMaxAttempts {
					return fmt.Errorf("b%d: FAILED retry scheduled for %s", b.id, st.Record)
				}
				ceiling = Backoff(s.cfg.RetryInitialBackoff, s.cfg.RetryMaxBackoff, int(n))
				switch {
				case delay*4 < ceiling:
					s.stats.JitterLow++
				case delay*4 > ceiling*3:
					s.stats.JitterHigh++
				}
			}
			if delay < 0 || delay > ceiling {
				return fmt.Errorf("b%d: retry in %s, ceiling %s", b.id, delay, ceiling)
			}
		}
		b.queue = append(b.queue, e)
	}
	return nil
}

// startEffect starts the next queued effect of broker i: the driver
// performs it against the world (fenced by the broker's leader epoch) and
// the answer goes to the inbox.
func (s *sim) startEffect(i int) error {
	b := s.brokers[i]
	if len(b.queue) == 0 {
		return nil
	}
	e := b.queue[0]
	b.queue = b.queue[1:]
	if e.Kind == RemoveFetcher {
		b.fetcher = nil
		if e.Reply {
			b.inbox = append(b.inbox, Result{Ref: e.Ref, LogEndOffset: int64(len(s.log)), LatestEpoch: s.latestEpoch()})
		}
		return nil
	}
	if !b.leader || b.epoch != e.Ref.LeaderEpoch {
		return nil // the driver drops an effect of an older leadership
	}
	// zombie: the broker believes it leads at this epoch, the controller has
	// moved on; the replication layer and the coordinator reject it.
	zombie := s.leader != b.id || s.epoch != e.Ref.LeaderEpoch
	r := Result{Ref: e.Ref}
	fault := func(p int) bool { return s.faults && s.rng.IntN(100) < p }
	fenced := fmt.Errorf("%w: leader epoch %d is not current", ErrFenced, e.Ref.LeaderEpoch)
	switch e.Kind {
	case ReadMirrorState:
		if fault(8) {
			r.Err = errors.New("coordinator load in progress")
		} else {
			r.Record = s.store
		}
	case WriteMirrorState:
		switch {
		case fault(6):
			r.Err = errors.New("request timed out")
		case e.Record.LeaderEpoch != s.epoch || s.store.StateEpoch != e.ExpectedStateEpoch:
			r.Err = fmt.Errorf("%w: write at le %d se %d, record at se %d, leader epoch %d", ErrFenced,
				e.Record.LeaderEpoch, e.ExpectedStateEpoch, s.store.StateEpoch, s.epoch)
			s.stats.Fenced++
		default:
			if err := s.applyWrite(b, e.Record); err != nil {
				return err
			}
			if fault(4) {
				r.Err = errors.New("response lost")
			}
		}
	case SetReadOnly:
		b.access = AccessReadOnly
	case ClearReadOnly:
		if zombie {
			r.Err = fenced
			break
		}
		if s.store.State != StateStopped {
			return fmt.Errorf("b%d: read-only cleared while the record is %s", b.id, s.store.State)
		}
		if err := s.checkStoppedLog(); err != nil {
			return fmt.Errorf("b%d: read-only cleared: %w", b.id, err)
		}
		b.access = AccessWritable
	case QueryLastMirroredEpoch, CheckExistingRecords:
		// The check is the same query; the world's log holds only
		// mirrored records and PID resets, which it lets through.
		if fault(10) {
			r.Err = errors.New("source unreachable")
			break
		}
		r.Epoch = -1
		if s.rng.IntN(2) == 0 {
			r.Epoch = s.maxMirroredEpoch()
		}
	case TruncateFully, TruncateAfterEpoch:
		if zombie {
			r.Err = fenced
			break
		}
		if fault(3) {
			r.Err = fmt.Errorf("%w: injected", ErrFailed)
			break
		}
		if RetryOfAligned(s.store) {
			// The world's source never deletes records: a retry of a log
			// that finished alignment has nothing to cut.
			return fmt.Errorf("b%d: %s of the retry of an aligned log (%s)", b.id, e.Kind, s.store)
		}
		if e.Kind == TruncateFully {
			s.log = nil
		} else {
			n := 0
			for n < len(s.log) && s.log[n].epoch <= e.Epoch {
				n++
			}
			s.log = s.log[:n]
		}
		r.LogEndOffset, r.LatestEpoch = int64(len(s.log)), s.latestEpoch()
	case WaitForISRTruncation:
		if fault(5) {
			r.Err = errors.New("not leader")
		}
	case AddFetcher:
		if zombie {
			r.Err = fenced
			break
		}
		if s.store.State != StateMirroring {
			return fmt.Errorf("b%d: fetcher started while the record is %s", b.id, s.store.State)
		}
		if fault(4) {
			r.Err = errors.New("cannot reach source")
			break
		}
		ref := e.Ref
		b.fetcher, b.reported = &ref, 0
	case BumpLeaderEpoch:
		if zombie {
			r.Err = fenced
			break
		}
		if fault(5) {
			r.Err = errors.New("controller moved")
			break
		}
		s.stats.Bumps++
		s.setLeader(b.id, max(s.epoch+1, e.Epoch))
	case AbortOpenTransactions:
		if zombie {
			r.Err = fenced
			break
		}
		if s.anyFetcher() {
			return fmt.Errorf("b%d: transactions aborted while a fetcher runs", b.id)
		}
		if s.store.State != StateStopping {
			return fmt.Errorf("b%d: ABORT markers written while the record is %s", b.id, s.store)
		}
		if fault(5) {
			r.Err = errors.New("not enough replicas")
			break
		}
		if m := s.maxMirroredEpoch(); s.epoch <= m {
			return fmt.Errorf("b%d: ABORT markers at epoch %d, not above mirrored epoch %d", b.id, s.epoch, m)
		}
		// One marker per open transaction, each appended on its own; a
		// fault stops the run midway (the broker died, the ISR wait timed
		// out) and the stop must finish the job later.
		if len(s.log) > s.stopWritesFrom() {
			s.stats.AbortReruns++
		}
		for _, pid := range openTxns(s.log) {
			if fault(15) {
				r.Err = errors.New("request timed out")
				s.stats.PartialAborts++
				break
			}
			s.appendLocal(simEntry{epoch: s.epoch, kind: entryAbort, pid: pid, local: true})
			s.stats.AbortedTxns++
		}
	case AppendMirrorPIDReset:
		if zombie {
			r.Err = fenced
			break
		}
		if s.anyFetcher() {
			return fmt.Errorf("b%d: PID reset appended while a fetcher runs", b.id)
		}
		if fault(5) {
			r.Err = errors.New("not enough replicas")
			break
		}
		if m := s.maxMirroredEpoch(); s.epoch <= m {
			return fmt.Errorf("b%d: PID reset at epoch %d, not above mirrored epoch %d", b.id, s.epoch, m)
		}
		s.appendLocal(simEntry{epoch: s.epoch, kind: entryPIDReset, local: true})
	case ScheduleRetry:
		s.timers = append(s.timers, simTimer{b: b.id, at: e.At, r: r})
		return nil
	}
	b.inbox = append(b.inbox, r)
	return nil
}

// applyWrite stores a record the coordinator accepted, checking the
// persisted-transition invariants.
func (s *sim) applyWrite(b *simBroker, rec Record) error {
	from := s.store
	if !ValidTransition(from.State, rec.State) {
		return fmt.Errorf("b%d: coordinator accepted %s -> %s", b.id, from.State, rec.State)
	}
	if rec.StateEpoch != from.StateEpoch+1 {
		return fmt.Errorf("b%d: state epoch %d after %d", b.id, rec.StateEpoch, from.StateEpoch)
	}
	if rec.State == StatePreparing && from.State == StateFailed && from.PrevState == StateMirroring {
		if rec.PrevState != StateMirroring {
			return fmt.Errorf("b%d: the retry of a log that failed from MIRRORING wrote PrevState %s", b.id, rec.PrevState)
		}
		s.stats.AlignedRetries++
	}
	switch rec.State {
	case StateStopping:
		if rec.LastMirrorOffset >= 0 { // the LME record
			if s.anyFetcher() {
				return fmt.Errorf("b%d: LME recorded while a fetcher runs", b.id)
			}
			// The stop offset is the log end before this stop wrote
			// anything, however far it got before recording it (a crash
			// between its first marker and this record included).
			end := s.stopWritesFrom()
			if end > len(s.log) {
				return fmt.Errorf("b%d: the stop removed batches [%d, %d) before recording the LME", b.id, len(s.log), end)
			}
			if rec.LastMirrorOffset != int64(end) {
				return fmt.Errorf("b%d: LME recorded at offset %d, the mirrored log ends at %d (log end %d)", b.id,
					rec.LastMirrorOffset, end, len(s.log))
			}
			want := int32(-1)
			if lmeTrusted(rec.PrevState) {
				// The epoch of the last mirrored batch: a trusted log holds
				// nothing else below the stop offset.
				for i, e := range s.log[:end] {
					if e.local {
						return fmt.Errorf("b%d: a trusted stop offset %d covers a stop's batch at %d", b.id, end, i)
					}
				}
				if end > 0 {
					want = s.log[end-1].epoch
				}
			}
			if rec.LastMirrorEpoch != want {
				return fmt.Errorf("b%d: LME %d recorded, want %d, the last mirrored batch's (prev %s)", b.id, rec.LastMirrorEpoch,
					want, rec.PrevState)
			}
			s.stopLog, s.stopTrusted = slices.Clone(s.log[:end]), lmeTrusted(rec.PrevState)
			if s.stopEnd >= 0 {
				s.stopLog = s.stopMirrored
			}
		}
		if from.State != StateStopping {
			s.stopEnd = -1 // a new stop: it has written nothing yet
		}
	case StateStopped:
		if from.LastMirrorOffset < 0 {
			return fmt.Errorf("b%d: STOPPED before the LME was recorded", b.id)
		}
		if err := s.checkStoppedLog(); err != nil {
			return fmt.Errorf("b%d: STOPPED: %w", b.id, err)
		}
		if rec.LastMirrorOffset != from.LastMirrorOffset || rec.LastMirrorEpoch != from.LastMirrorEpoch {
			return fmt.Errorf("b%d: STOPPED with lme %d at %d, the stop recorded lme %d at %d", b.id, rec.LastMirrorEpoch,
				rec.LastMirrorOffset, from.LastMirrorEpoch, from.LastMirrorOffset)
		}
		if len(openTxns(s.stopLog)) > 0 {
			s.stats.StopsWithOpenTxns++
		}
		s.stats.Stopped++
	case StateFailed:
		s.stats.Failed++
		if rec.RetryAttempt > s.cfg.RetryMaxAttempts {
			s.stats.Exhausted++
		}
	case StatePaused:
		s.stats.Paused++
	}
	s.tracef("store: %s", rec)
	s.store = rec
	return nil
}

// checkStoppedLog: the log ends with a MIRROR_PID_RESET after every
// mirrored batch, at an epoch above all of them, and nothing fetches; the
// stop kept the whole log its LME record found and added only its own
// batches after it, no transaction is left open (the last stable offset is
// the log end), and when the stop trusted the log (a source prefix) a
// read_committed consumer sees exactly the records the source had
// committed at the stop point.
func (s *sim) checkStoppedLog() error {
	if s.anyFetcher() {
		return errors.New("a fetcher runs")
	}
	last := -1
	for i, e := range s.log {
		if e.kind == entryPIDReset {
			last = i
		}
	}
	if last < 0 {
		return errors.New("no MIRROR_PID_RESET in the log")
	}
	for _, e := range s.log[last:] {
		if !e.local {
			return errors.New("mirrored data after the MIRROR_PID_RESET")
		}
	}
	if m := s.maxMirroredEpoch(); s.log[last].epoch <= m || s.epoch <= m {
		return fmt.Errorf("epoch not above the mirrored epoch %d (reset at %d, leader at %d)", m, s.log[last].epoch, s.epoch)
	}
	stop := len(s.stopLog)
	if len(s.log) < stop || !slices.Equal(s.log[:stop], s.stopLog) {
		return fmt.Errorf("the stop changed the log below its stop offset %d (log end %d)", stop, len(s.log))
	}
	for i, e := range s.log[stop:] {
		if !e.local {
			return fmt.Errorf("mirrored batch at %d after the stop offset %d", stop+i, stop)
		}
	}
	if open := openTxns(s.log); len(open) > 0 {
		return fmt.Errorf("transactions of producers %v still open", open)
	}
	if s.stopTrusted {
		if stop > len(s.source) || !slices.Equal(s.log[:stop], s.source[:stop]) {
			return fmt.Errorf("a trusted stop's log is not the source's first %d batches", stop)
		}
		if got, want := readCommitted(s.log), readCommitted(s.source[:stop]); !slices.Equal(got, want) {
			return fmt.Errorf("read_committed sees batches %v, the source had committed %v at the stop point %d", got, want, stop)
		}
	}
	return nil
}

// appendLocal appends a batch the stop writes.
func (s *sim) appendLocal(e simEntry) {
	s.stopChangesLog()
	s.log = append(s.log, e)
}

// stopChangesLog notes the log as it was before a stop first changes it.
func (s *sim) stopChangesLog() {
	if s.store.State == StateStopping && s.stopEnd < 0 {
		s.stopEnd, s.stopMirrored = len(s.log), slices.Clone(s.log)
	}
}

// stopWritesFrom is the log end before the current stop first changed the
// log, or the log end while it has changed nothing.
func (s *sim) stopWritesFrom() int {
	if s.store.State == StateStopping && s.stopEnd >= 0 {
		return s.stopEnd
	}
	return len(s.log)
}

func (s *sim) anyFetcher() bool {
	for _, b := range s.brokers {
		if b.fetcher != nil && b.fetcher.LeaderEpoch == s.epoch && b.id == s.leader {
			return true
		}
	}
	return false
}

func (s *sim) latestEpoch() int32 {
	if len(s.log) == 0 {
		return -1
	}
	return s.log[len(s.log)-1].epoch
}

func (s *sim) maxMirroredEpoch() int32 {
	m := int32(-1)
	for _, e := range s.log {
		if !e.local {
			m = max(m, e.epoch)
		}
	}
	return m
}

// deliverAnswer delivers a random answer from broker i's inbox (any order),
// or a duplicate of one delivered before.
func (s *sim) deliverAnswer(i int, duplicate bool) error {
	b := s.brokers[i]
	if duplicate && len(b.past) > 0 {
		return s.step(b, b.past[s.rng.IntN(len(b.past))])
	}
	if len(b.inbox) == 0 {
		return nil
	}
	k := s.rng.IntN(len(b.inbox))
	ev := b.inbox[k]
	b.inbox = slices.Delete(b.inbox, k, k+1)
	if r, ok := ev.(Result); ok && r.Err != nil {
		b.resets++
	}
	if len(b.past) < 64 {
		b.past = append(b.past, ev)
	} else {
		b.past[s.rng.IntN(len(b.past))] = ev
	}
	return s.step(b, ev)
}

func (s *sim) tick(d time.Duration) {
	s.now = s.now.Add(d)
	kept := s.timers[:0]
	for _, tm := range s.timers {
		if tm.at.After(s.now) {
			kept = append(kept, tm)
			continue
		}
		b := s.brokers[tm.b]
		b.resets++
		b.inbox = append(b.inbox, tm.r)
	}
	s.timers = kept
}

// fetch lets the running mirror fetcher copy one source batch, or report a
// batch whose epoch is above the leader epoch.
func (s *sim) fetch() error {
	for _, b := range s.brokers {
		if b.fetcher == nil || b.fetcher.LeaderEpoch != s.epoch || b.id != s.leader {
			continue // not running, or fenced by the partition's leader epoch
		}
		n := len(s.log)
		if n > 0 && s.log[n-1].local {
			return fmt.Errorf("b%d: fetching into a log that ends with a stop's batch (record %s)", b.id, s.store)
		}
		if n >= len(s.source) {
			return nil
		}
		if ep := s.source[n].epoch; ep > s.epoch {
			if ep > b.reported {
				b.reported = ep
				b.inbox = append(b.inbox, SourceEpochAhead{Ref: *b.fetcher, Epoch: ep})
			}
			return nil
		}
		switch st := s.store; {
		case st.State == StatePreparing, st.State == StatePaused, st.State == StateStopped, st.State == StateUnknown,
			st.State == StateStopping && st.LastMirrorOffset >= 0:
			return fmt.Errorf("b%d: mirrored append while the record is %s", b.id, st)
		}
		s.log = append(s.log, s.source[n])
		s.stats.Appends++
	}
	return nil
}

// growSource appends source batches; now and then their epoch jumps above
// the destination's leader epoch. Each is plain, a transactional producer's
// data, or a COMMIT or ABORT marker closing a producer's open transaction,
// so a stop finds transactions open, committed and aborted ones before
// them and plain and committed records after them.
func (s *sim) growSource() {
	ep := int32(0)
	if len(s.source) > 0 {
		ep = s.source[len(s.source)-1].epoch
	}
	switch n := s.rng.IntN(10); {
	case n < 6:
	case n < 9:
		ep++
	default:
		ep = max(ep, s.epoch) + 1 + int32(s.rng.IntN(5))
	}
	for range 1 + s.rng.IntN(4) {
		e := simEntry{epoch: ep}
		open := openTxns(s.source)
		switch n := s.rng.IntN(10); {
		case n < 4:
		case n < 7 || len(open) == 0:
			e.pid = 1 + s.rng.IntN(simProducers)
		default:
			e.pid = open[s.rng.IntN(len(open))]
			e.kind = entryCommit
			if s.rng.IntN(3) == 0 {
				e.kind = entryAbort
			}
		}
		s.source = append(s.source, e)
	}
}

func (s *sim) injectFetchError() {
	for _, b := range s.brokers {
		if b.fetcher == nil {
			continue
		}
		kind := FetchErrorKind(1 + s.rng.IntN(int(FetchFatal)))
		if kind == FetchSourceTopicIDChanged && s.rng.IntN(4) != 0 {
			kind = FetchCorruptBatch
		}
		b.inbox = append(b.inbox, FetchFailed{Ref: *b.fetcher, Kind: kind, Err: errors.New("injected")})
	}
}

// drain stops the faults, settles leadership, sets a final desired state
// and runs the world until nothing is left to do; the partition must then
// be where the desired state says.
func (s *sim) drain() error {
	s.faults = false
	s.setLeader(s.rng.IntN(len(s.brokers)), s.epoch+1)
	final := Desired(s.rng.IntN(3))
	s.setDesired(final, false)
	for round := 0; ; round++ {
		if round > 5000 {
			return errors.New("the world did not settle")
		}
		busy := false
		for i, b := range s.brokers {
			for len(b.meta) > 0 {
				busy = true
				if err := s.deliverMeta(i); err != nil {
					return err
				}
			}
			for len(b.queue) > 0 {
				busy = true
				if err := s.startEffect(i); err != nil {
					return err
				}
			}
			for len(b.inbox) > 0 {
				busy = true
				if err := s.deliverAnswer(i, false); err != nil {
					return err
				}
			}
		}
		before := len(s.log)
		if err := s.fetch(); err != nil {
			return err
		}
		if len(s.log) != before {
			busy = true
		}
		for _, b := range s.brokers {
			busy = busy || len(b.meta)+len(b.queue)+len(b.inbox) > 0
		}
		if busy {
			continue
		}
		if len(s.timers) == 0 {
			break
		}
		next := s.timers[0].at
		for _, tm := range s.timers {
			if tm.at.Before(next) {
				next = tm.at
			}
		}
		s.tick(max(next.Sub(s.now), 0))
	}
	st := s.brokers[s.leader].m.Status()
	terminal := st.Record.State == StateFailed && (st.Record.RetryAttempt < 0 || st.Record.RetryAttempt > s.cfg.RetryMaxAttempts)
	switch {
	case !st.Leader || !st.Known || st.Waiting != nil:
		return fmt.Errorf("final: leader not settled: %+v", st)
	case final == DesiredStop:
		if st.Record.State != StateStopped || st.Access != AccessWritable || s.store.State != StateStopped {
			return fmt.Errorf("final: stop ended in %s, access %s", st.Record, st.Access)
		}
		if err := s.checkStoppedLog(); err != nil {
			return fmt.Errorf("final: %w", err)
		}
		s.stats.FinalStopped++
	case terminal:
		s.stats.FinalFailed++
	case final == DesiredStart:
		if st.Record.State != StateMirroring || !st.Fetching || st.Access != AccessReadOnly || len(s.log) != len(s.source) {
			return fmt.Errorf("final: start ended in %s, fetching %v, access %s, log %d of %d", st.Record, st.Fetching, st.Access,
				len(s.log), len(s.source))
		}
		s.stats.FinalMirroring++
	case final == DesiredPause:
		if st.Record.State != StatePaused || st.Fetching || st.Access != AccessReadOnly {
			return fmt.Errorf("final: pause ended in %s, fetching %v, access %s", st.Record, st.Fetching, st.Access)
		}
		s.stats.FinalPaused++
	}
	if st.Record != s.store {
		return fmt.Errorf("final: machine holds %s, coordinator %s", st.Record, s.store)
	}
	for _, b := range s.brokers {
		if b.id != s.leader && (b.m.Status().Leader || b.fetcher != nil) {
			return fmt.Errorf("final: follower b%d still leads or fetches", b.id)
		}
	}
	return nil
}

func evString(ev Event) string {
	switch ev := ev.(type) {
	case Result:
		if ev.Err != nil {
			return fmt.Sprintf("result %s err=%v", ev.Ref, ev.Err)
		}
		return fmt.Sprintf("result %s rec=[%s] epoch=%d leo=%d latest=%d", ev.Ref, ev.Record, ev.Epoch, ev.LogEndOffset, ev.LatestEpoch)
	}
	return fmt.Sprintf("%T%+v", ev, ev)
}
