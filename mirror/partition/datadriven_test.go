package partition

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/strait-io/strait/raftmeta/mirrorstate"
)

// TestDatadriven runs the scripts in testdata/. Each drives one machine
// through commands that step it and prints what it emitted; see
// ddDriver.run for the commands. Regenerate with -rewrite and read the diff.
func TestDatadriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		d := &ddDriver{}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			return d.run(t, td)
		})
	})
}

var ddBase = time.Unix(1_000_000, 0).UTC()

type ddDriver struct {
	m       *Machine
	now     time.Time
	effects map[uint64]Effect
	fetcher Ref // the last AddFetcher
}

func (d *ddDriver) run(t *testing.T, td *datadriven.TestData) string {
	if td.Cmd != "new" && d.m == nil && td.Cmd != "transitions" && td.Cmd != "validate" && td.Cmd != "parse" {
		td.Fatalf(t, "use new first")
	}
	var ev Event
	switch td.Cmd {
	case "new":
		cfg := Config{
			RetryInitialBackoff: ddDur(t, td, "retry-initial", 0),
			RetryMaxBackoff:     ddDur(t, td, "retry-max", 0),
			RetryMaxAttempts:    int32(ddInt(t, td, "max-attempts", 0)),
			RetryResetAfter:     ddDur(t, td, "reset-after", 0),
			StepInitialBackoff:  ddDur(t, td, "step-initial", 0),
			StepMaxBackoff:      ddDur(t, td, "step-max", 0),
			WaitAllReplicas:     td.HasArg("all-replicas"),
			Rand:                rand.New(rand.NewPCG(uint64(ddInt(t, td, "seed", 1)), 7)),
		}
		m, err := New(cfg)
		if err != nil {
			return "error: " + err.Error()
		}
		d.m, d.now, d.effects = m, ddBase, map[uint64]Effect{}
		return ""
	case "transitions":
		return transitionTable()
	case "validate":
		return validationTable()
	case "parse":
		var b strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			v := strings.Trim(line, `"`)
			mirror, des := mirrorstate.ParseMirrorName(v)
			fmt.Fprintf(&b, "%q -> mirror=%q desired=%s format=%q\n", v, mirror, des, mirrorstate.FormatMirrorName(mirror, des))
		}
		return b.String()
	case "status":
		st := d.m.Status()
		s := d.statusLine() + "\nrecord: " + st.Record.String()
		if st.LastError != "" {
			s += "\nlast-error: " + st.LastError
		}
		return s
	case "tick":
		d.now = d.now.Add(ddDur(t, td, "d", 0))
		return fmt.Sprintf("now=+%s", d.now.Sub(ddBase))
	case "leader":
		ev = BecomeLeader{LeaderEpoch: int32(ddInt(t, td, "epoch", 0))}
	case "follower":
		ev = BecomeFollower{LeaderEpoch: int32(ddInt(t, td, "epoch", 0))}
	case "desired":
		if td.HasArg("none") {
			ev = DesiredChanged{Desired: DesiredNone}
		} else {
			var v string
			td.ScanArgs(t, "name", &v)
			mirror, des := mirrorstate.ParseMirrorName(v)
			ev = DesiredChanged{Mirror: mirror, Desired: des}
		}
	case "ok", "fail", "fire":
		eff, ok := d.target(t, td)
		if !ok {
			return "nothing to answer\n" + d.statusLine()
		}
		r := Result{Ref: eff.Ref}
		switch td.Cmd {
		case "fire":
			if eff.At.After(d.now) {
				d.now = eff.At
			}
		case "fail":
			msg := "boom"
			if td.HasArg("msg") {
				td.ScanArgs(t, "msg", &msg)
			}
			var kind string
			td.ScanArgs(t, "err", &kind)
			switch kind {
			case "retriable":
				r.Err = errors.New(msg)
			case "fenced":
				r.Err = fmt.Errorf("%w: %s", ErrFenced, msg)
			case "failed":
				r.Err = fmt.Errorf("%w: %s", ErrFailed, msg)
			case "nonretryable":
				r.Err = fmt.Errorf("%w: %s", ErrNonRetryable, msg)
			default:
				td.Fatalf(t, "unknown err=%s", kind)
			}
		default:
			r.Record = EmptyRecord()
			if td.HasArg("state") {
				var s string
				td.ScanArgs(t, "state", &s)
				st, err := ParseState(s)
				if err != nil {
					td.Fatalf(t, "%v", err)
				}
				r.Record.State = st
			}
			if td.HasArg("prev") {
				var s string
				td.ScanArgs(t, "prev", &s)
				st, err := ParseState(s)
				if err != nil {
					td.Fatalf(t, "%v", err)
				}
				r.Record.PrevState = st
			}
			r.Record.StateEpoch = int32(ddInt(t, td, "se", int64(r.Record.StateEpoch)))
			r.Record.LeaderEpoch = int32(ddInt(t, td, "le", int64(r.Record.LeaderEpoch)))
			r.Record.LastMirrorEpoch = int32(ddInt(t, td, "rec-lme", int64(r.Record.LastMirrorEpoch)))
			r.Record.LastMirrorOffset = ddInt(t, td, "lmo", r.Record.LastMirrorOffset)
			r.Record.RetryAttempt = int32(ddInt(t, td, "attempt", int64(r.Record.RetryAttempt)))
			if td.HasArg("error") {
				td.ScanArgs(t, "error", &r.Record.ErrorMessage)
			}
			r.Epoch = int32(ddInt(t, td, "lme", -1))
			r.LogStartOffset = ddInt(t, td, "log-start", 0)
			r.LogEndOffset = ddInt(t, td, "leo", 0)
			r.LatestEpoch = int32(ddInt(t, td, "epoch", -1))
		}
		ev = r
	case "fetch-error":
		var kind string
		td.ScanArgs(t, "kind", &kind)
		ff := FetchFailed{Ref: d.fetcherRef(t, td), Err: errors.New("source says no")}
		for k := FetchRetriable; k <= FetchFatal; k++ {
			if k.String() == kind {
				ff.Kind = k
			}
		}
		if ff.Kind == 0 {
			td.Fatalf(t, "unknown kind=%s", kind)
		}
		ev = ff
	case "epoch-ahead":
		ev = SourceEpochAhead{Ref: d.fetcherRef(t, td), Epoch: int32(ddInt(t, td, "epoch", 0))}
	default:
		td.Fatalf(t, "unknown command %s", td.Cmd)
	}
	return d.step(ev)
}

// step feeds ev and prints the outcome: the error, the effects, the status.
func (d *ddDriver) step(ev Event) string {
	var b strings.Builder
	if err := d.m.Step(d.now, ev); err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	if d.m.HasReady() {
		for _, e := range d.m.Ready().Effects {
			d.effects[e.Ref.Seq] = e
			if e.Kind == AddFetcher {
				d.fetcher = e.Ref
			}
			fmt.Fprintf(&b, "-> %s\n", e.Format(ddBase))
		}
		d.m.Advance()
	}
	b.WriteString(d.statusLine())
	return b.String()
}

func (d *ddDriver) statusLine() string {
	st := d.m.Status()
	role := "follower"
	if st.Leader {
		role = "leader"
	}
	s := fmt.Sprintf("= %s se=%d %s@e%d desired=%s access=%s", st.Record.State, st.Record.StateEpoch, role, st.LeaderEpoch, st.Desired, st.Access)
	if !st.Known {
		s += " (unread)"
	}
	if st.Fetching {
		s += " fetching"
	}
	if st.Waiting != nil {
		s += fmt.Sprintf(" waiting=#%d %s", st.Waiting.Ref.Seq, st.Waiting.Kind)
	}
	return s
}

// target is the effect a completion answers: seq=N, or what the machine
// waits on.
func (d *ddDriver) target(t *testing.T, td *datadriven.TestData) (Effect, bool) {
	if td.HasArg("seq") {
		seq := uint64(ddInt(t, td, "seq", 0))
		e, ok := d.effects[seq]
		if !ok {
			td.Fatalf(t, "no effect #%d", seq)
		}
		return e, true
	}
	w := d.m.Status().Waiting
	if w == nil {
		return Effect{}, false
	}
	return *w, true
}

func (d *ddDriver) fetcherRef(t *testing.T, td *datadriven.TestData) Ref {
	if td.HasArg("seq") {
		e, _ := d.target(t, td)
		return e.Ref
	}
	return d.fetcher
}

func ddInt(t *testing.T, td *datadriven.TestData, key string, def int64) int64 {
	if !td.HasArg(key) {
		return def
	}
	var s string
	td.ScanArgs(t, key, &s)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		td.Fatalf(t, "%s: %v", key, err)
	}
	return n
}

func ddDur(t *testing.T, td *datadriven.TestData, key string, def time.Duration) time.Duration {
	if !td.HasArg(key) {
		return def
	}
	var s string
	td.ScanArgs(t, key, &s)
	v, err := time.ParseDuration(s)
	if err != nil {
		td.Fatalf(t, "%s: %v", key, err)
	}
	return v
}

// transitionTable prints ValidTransition for every pair: rows are the
// state a record is in, columns the state written.
func transitionTable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s", "from\\to")
	for _, to := range States() {
		fmt.Fprintf(&b, " %-9s", to)
	}
	b.WriteString("\n")
	for _, from := range States() {
		fmt.Fprintf(&b, "%-10s", from)
		for _, to := range States() {
			mark := "."
			if ValidTransition(from, to) {
				mark = "yes"
			}
			fmt.Fprintf(&b, " %-9s", mark)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// validationTable prints the admin RPC validation for every state.
func validationTable() string {
	var b strings.Builder
	short := func(err error) string {
		if err == nil {
			return "ok"
		}
		s := err.Error()
		return s[:strings.Index(s, ":")]
	}
	for _, s := range States() {
		fmt.Fprintf(&b, "%-9s start=%s stop=%s pause=%s resume=%s\n", s,
			short(mirrorstate.ValidateStart(s)), short(mirrorstate.ValidateStop(s)), short(mirrorstate.ValidatePause(s)), short(mirrorstate.ValidateResume(s)))
	}
	return b.String()
}
