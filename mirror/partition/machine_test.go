package partition

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/strait-io/strait/raftmeta/mirrorstate"
)

func newTestMachine(t *testing.T, seed uint64) *Machine {
	t.Helper()
	m, err := New(Config{Rand: rand.New(rand.NewPCG(seed, 1))})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var t0 = time.Unix(1_000, 0).UTC()

// drive steps ev and answers what the machine waits on with the given
// results, one per effect, failing the test on any error.
func mustStep(t *testing.T, m *Machine, ev Event) []Effect {
	t.Helper()
	if err := m.Step(t0, ev); err != nil {
		t.Fatalf("Step(%T%+v): %v", ev, ev, err)
	}
	rd := m.Ready()
	m.Advance()
	return rd.Effects
}

func answer(t *testing.T, m *Machine, r Result) []Effect {
	t.Helper()
	w := m.Status().Waiting
	if w == nil {
		t.Fatal("nothing to answer")
	}
	r.Ref = w.Ref
	return mustStep(t, m, r)
}

// toMirroring brings a fresh machine to MIRRORING with a running fetcher
// and returns the fetcher's Ref.
func toMirroring(t *testing.T, m *Machine) Ref {
	t.Helper()
	mustStep(t, m, DesiredChanged{Mirror: "m", Desired: DesiredStart})
	mustStep(t, m, BecomeLeader{LeaderEpoch: 3})
	rec := EmptyRecord()
	rec.State, rec.StateEpoch, rec.LeaderEpoch = StateMirroring, 2, 3
	answer(t, m, Result{Record: rec})
	effs := answer(t, m, Result{}) // SetReadOnly
	if len(effs) != 1 || effs[0].Kind != AddFetcher {
		t.Fatalf("want AddFetcher, got %v", effs)
	}
	answer(t, m, Result{})
	return effs[0].Ref
}

func TestNewValidatesConfig(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Rand: rand.New(rand.NewPCG(1, 1)), RetryInitialBackoff: time.Second, RetryMaxBackoff: time.Millisecond},
		{Rand: rand.New(rand.NewPCG(1, 1)), StepInitialBackoff: time.Microsecond},
		{Rand: rand.New(rand.NewPCG(1, 1)), RetryResetAfter: -1},
	} {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("New(%+v) = %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

func TestStepRejectsMalformedEvents(t *testing.T) {
	m := newTestMachine(t, 1)
	toMirroring(t, m)
	before := m.Status()
	for _, ev := range []Event{nil, DesiredChanged{Mirror: "m", Desired: 9}} {
		if err := m.Step(t0, ev); !errors.Is(err, ErrInvalidEvent) {
			t.Errorf("Step(%v) = %v, want ErrInvalidEvent", ev, err)
		}
	}
	if m.HasReady() || m.Status() != before {
		t.Fatalf("a malformed event changed the machine: %+v", m.Status())
	}
	// A record in a state this machine does not know is read again later.
	m2 := newTestMachine(t, 1)
	mustStep(t, m2, DesiredChanged{Mirror: "m", Desired: DesiredStart})
	mustStep(t, m2, BecomeLeader{LeaderEpoch: 1})
	rec := EmptyRecord()
	rec.State = 1 // EPOCH_FENCING
	effs := answer(t, m2, Result{Record: rec})
	if len(effs) != 1 || effs[0].Kind != ScheduleRetry || m2.Status().Known {
		t.Fatalf("unknown record state: got %v, status %+v", effs, m2.Status())
	}
}

// TestFailureStaysInItsPartition: one partition's corrupt source batch
// fails that partition only; its neighbour keeps its fetcher and emits
// nothing.
func TestFailureStaysInItsPartition(t *testing.T) {
	a, b := newTestMachine(t, 1), newTestMachine(t, 2)
	refA := toMirroring(t, a)
	toMirroring(t, b)
	effs := mustStep(t, a, FetchFailed{Ref: refA, Kind: FetchCorruptBatch, Err: errors.New("crc")})
	if len(effs) != 1 || effs[0].Kind != WriteMirrorState || effs[0].Record.State != StateFailed {
		t.Fatalf("a: want the FAILED write, got %v", effs)
	}
	if b.HasReady() || b.Status().Record.State != StateMirroring || !b.Status().Fetching {
		t.Fatalf("b was affected: %+v", b.Status())
	}
}

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{{1, 100 * time.Millisecond}, {2, 200 * time.Millisecond}, {4, 800 * time.Millisecond}, {5, time.Second}, {60, time.Second}, {0, 100 * time.Millisecond}} {
		if got := Backoff(100*time.Millisecond, time.Second, tc.n); got != tc.want {
			t.Errorf("Backoff(attempt %d) = %s, want %s", tc.n, got, tc.want)
		}
	}
}

// TestRetryJitterIsSeeded: the retry delays depend only on the injected
// source, and full jitter spreads them over [0, ceiling].
func TestRetryJitterIsSeeded(t *testing.T) {
	delays := func(seed uint64) []time.Duration {
		m := newTestMachine(t, seed)
		ref := toMirroring(t, m)
		mustStep(t, m, FetchFailed{Ref: ref, Kind: FetchFatal})
		answer(t, m, Result{}) // FAILED written
		var out []time.Duration
		for _, e := range answer(t, m, Result{}) { // fetcher removed
			if e.Kind == ScheduleRetry {
				out = append(out, e.At.Sub(t0))
			}
		}
		return out
	}
	seen := map[time.Duration]bool{}
	for seed := uint64(1); seed <= 50; seed++ {
		a, b := delays(seed), delays(seed)
		if len(a) != 1 || a[0] != b[0] {
			t.Fatalf("seed %d: delays %v then %v", seed, a, b)
		}
		if a[0] < 0 || a[0] > DefaultRetryInitialBackoff {
			t.Fatalf("seed %d: first retry in %s, ceiling %s", seed, a[0], DefaultRetryInitialBackoff)
		}
		seen[a[0]] = true
	}
	if len(seen) < 20 {
		t.Fatalf("50 seeds drew only %d distinct delays", len(seen))
	}
}

// TestValidTransitionCount pins the table: 18 transitions, as printed in
// testdata/tables.
func TestValidTransitionCount(t *testing.T) {
	n := 0
	for _, from := range States() {
		for _, to := range States() {
			if ValidTransition(from, to) {
				n++
			}
		}
		if ValidTransition(from, StateUnknown) {
			t.Errorf("%s -> UNKNOWN is valid", from)
		}
	}
	if n != 18 {
		t.Fatalf("%d valid transitions, want 18", n)
	}
}

func TestParseMirrorNameRoundTrip(t *testing.T) {
	for _, d := range []Desired{DesiredStart, DesiredStop, DesiredPause} {
		v := mirrorstate.FormatMirrorName("east", d)
		if m, got := mirrorstate.ParseMirrorName(v); m != "east" || got != d {
			t.Errorf("mirrorstate.ParseMirrorName(%q) = %q, %s; want east, %s", v, m, got, d)
		}
	}
	for _, s := range States() {
		if got, err := ParseState(s.String()); err != nil || got != s {
			t.Errorf("ParseState(%s) = %s, %v", s, got, err)
		}
	}
}
