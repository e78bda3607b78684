package share

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestPartitionDatadriven runs the scripts in testdata/partition: each
// drives one SharePartition and prints it after every step. Commands:
//
//	new [limit=5] [max-inflight=100] [start=N] [reset=N] [log-start=N] [state-epoch=N]
//	    (input: persisted batches "first last STATE count")
//	acquire member=a [session=N] [max=N] [mode=record] [batch-size=N] [lock=30s] [from=N]
//	    (input: log batches "first-last [aborted]"; from: where the read
//	    started, the fetch offset by default)
//	ack member=a [lock=30s]           (input: "first last TYPE[,TYPE...]")
//	tick d=10s | expire | release member=a [session=N] | move-start to=N
//	begin | end seq=N [fail] | state
//
// Regenerate with -rewrite and read the diff.
func TestPartitionDatadriven(t *testing.T) {
	datadriven.Walk(t, "testdata/partition", func(t *testing.T, path string) {
		d := &ddPartition{}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			return d.run(t, td)
		})
	})
}

var ddBase = time.Unix(1_000_000, 0).UTC()

type ddPartition struct {
	sp  *SharePartition
	now time.Time
}

func (d *ddPartition) run(t *testing.T, td *datadriven.TestData) string {
	if td.Cmd != "new" && d.sp == nil {
		td.Fatalf(t, "use new first")
	}
	switch td.Cmd {
	case "new":
		cfg := PartitionConfig{
			DeliveryCountLimit: int16(ddInt(t, td, "limit", 5)),
			MaxInFlight:        int64(ddInt(t, td, "max-inflight", 100)),
		}
		st := PersistedState{
			StateEpoch:  int32(ddInt(t, td, "state-epoch", 0)),
			StartOffset: int64(ddInt(t, td, "start", -1)),
		}
		for _, f := range ddLines(td.Input) {
			if len(f) != 4 {
				td.Fatalf(t, "batch line %q: want first last STATE count", f)
			}
			st.Batches = append(st.Batches, StateBatch{
				FirstOffset: ddAtoi(t, td, f[0]), LastOffset: ddAtoi(t, td, f[1]),
				DeliveryState: int8(ddState(t, td, f[2])), DeliveryCount: int16(ddAtoi(t, td, f[3])),
			})
		}
		d.now = ddBase
		d.sp = Recover(cfg, 3, st, int64(ddInt(t, td, "reset", 0)), int64(ddInt(t, td, "log-start", 0)))
		return d.state()
	case "acquire":
		req := AcquireRequest{
			Member:     ddStr(td, "member", "a"),
			Session:    uint64(ddInt(t, td, "session", 0)),
			Now:        d.now,
			Lock:       ddDur(t, td, "lock", 30*time.Second),
			MaxRecords: ddInt(t, td, "max", 500),
			BatchSize:  ddInt(t, td, "batch-size", 0),
			From:       int64(ddInt(t, td, "from", int(d.sp.FetchOffset()))),
		}
		if ddStr(td, "mode", "batch") == "record" {
			req.Mode = RecordLimit
		}
		for _, f := range ddLines(td.Input) {
			first, last, ok := strings.Cut(f[0], "-")
			if !ok {
				last = first
			}
			req.Batches = append(req.Batches, LogBatch{
				First: ddAtoi(t, td, first), Last: ddAtoi(t, td, last),
				Aborted: len(f) > 1 && f[1] == "aborted",
			})
		}
		got := d.sp.Acquire(req)
		var b strings.Builder
		b.WriteString("acquired:")
		for _, r := range got {
			fmt.Fprintf(&b, " %d-%d(d%d)", r.First, r.Last, r.DeliveryCount)
		}
		return b.String() + "\n" + d.state()
	case "ack":
		var batches []AckBatch
		for _, f := range ddLines(td.Input) {
			b := AckBatch{First: ddAtoi(t, td, f[0]), Last: ddAtoi(t, td, f[1])}
			for _, s := range strings.Split(f[2], ",") {
				b.Types = append(b.Types, ddAckType(t, td, s))
			}
			batches = append(batches, b)
		}
		seq, err := d.sp.Acknowledge(d.now, ddStr(td, "member", "a"), ddDur(t, td, "lock", 30*time.Second), batches)
		if err != nil {
			return "error: " + err.Message + "\n" + d.state()
		}
		if seq == 0 {
			return "nothing staged\n" + d.state()
		}
		return fmt.Sprintf("staged for write %d\n%s", seq, d.state())
	case "tick":
		d.now = d.now.Add(ddDur(t, td, "d", 0))
		return fmt.Sprintf("now=+%s", d.now.Sub(ddBase))
	case "expire":
		return fmt.Sprintf("changed=%t\n%s", d.sp.ExpireLocks(d.now), d.state())
	case "release":
		upTo := uint64(math.MaxUint64)
		if td.HasArg("session") {
			upTo = uint64(ddInt(t, td, "session", 0))
		}
		return fmt.Sprintf("changed=%t\n%s", d.sp.ReleaseMember(ddStr(td, "member", "a"), upTo), d.state())
	case "move-start":
		d.sp.MoveStart(int64(ddInt(t, td, "to", 0)))
		return d.state()
	case "begin":
		seq, st, ok := d.sp.BeginWrite()
		if !ok {
			return "nothing to write\n" + d.state()
		}
		return fmt.Sprintf("write %d: %s\n%s", seq, formatState(st), d.state())
	case "end":
		changed := d.sp.EndWrite(uint64(ddInt(t, td, "seq", 0)), !td.HasArg("fail"))
		return fmt.Sprintf("changed=%t\n%s", changed, d.state())
	case "state":
		return d.state()
	}
	td.Fatalf(t, "unknown command %q", td.Cmd)
	return ""
}

// state prints the partition with lock deadlines relative to the script's
// start.
func (d *ddPartition) state() string {
	sp := d.sp
	var b strings.Builder
	fmt.Fprintf(&b, "start=%d end=%d fetch=%d can-acquire=%t", sp.start, sp.end, sp.FetchOffset(), sp.CanAcquire())
	if sp.dirty {
		b.WriteString(" dirty")
	}
	if sp.writing {
		b.WriteString(" writing")
	}
	for i := range sp.runs {
		r := &sp.runs[i]
		fmt.Fprintf(&b, "\n  %d-%d %s d%d", r.first, r.last, r.state, r.deliveries)
		if r.member != "" {
			fmt.Fprintf(&b, " %s until +%s", r.member, r.deadline.Sub(ddBase))
		}
		if r.session != 0 {
			fmt.Fprintf(&b, " in session %d", r.session)
		}
		if r.pend.seq != 0 {
			fmt.Fprintf(&b, " (-> %s on write %d)", r.pend.to, r.pend.seq)
		}
	}
	return b.String()
}

func formatState(st PersistedState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "state-epoch=%d leader-epoch=%d start=%d", st.StateEpoch, st.LeaderEpoch, st.StartOffset)
	for _, bt := range st.Batches {
		fmt.Fprintf(&b, " [%d-%d %s d%d]", bt.FirstOffset, bt.LastOffset, RecordState(bt.DeliveryState), bt.DeliveryCount)
	}
	return b.String()
}

func ddLines(input string) [][]string {
	var out [][]string
	for _, l := range strings.Split(strings.TrimSpace(input), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}

func ddAtoi(t *testing.T, td *datadriven.TestData, s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		td.Fatalf(t, "%q: %v", s, err)
	}
	return v
}

func ddInt(t *testing.T, td *datadriven.TestData, key string, def int) int {
	if !td.HasArg(key) {
		return def
	}
	var v int
	td.ScanArgs(t, key, &v)
	return v
}

func ddStr(td *datadriven.TestData, key, def string) string {
	for _, a := range td.CmdArgs {
		if a.Key == key && len(a.Vals) > 0 {
			return a.Vals[0]
		}
	}
	return def
}

func ddDur(t *testing.T, td *datadriven.TestData, key string, def time.Duration) time.Duration {
	s := ddStr(td, key, "")
	if s == "" {
		return def
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		td.Fatalf(t, "%s=%q: %v", key, s, err)
	}
	return v
}

func ddState(t *testing.T, td *datadriven.TestData, s string) RecordState {
	for _, st := range []RecordState{Available, Acquired, Acknowledged, Archived} {
		if st.String() == s {
			return st
		}
	}
	td.Fatalf(t, "unknown state %q", s)
	return 0
}

func ddAckType(t *testing.T, td *datadriven.TestData, s string) AckType {
	switch s {
	case "gap":
		return AckGap
	case "accept":
		return AckAccept
	case "release":
		return AckRelease
	case "reject":
		return AckReject
	case "renew":
		return AckRenew
	}
	v := ddAtoi(t, td, s) // raw numbers test validation
	return AckType(v)
}
