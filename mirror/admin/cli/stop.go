package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/strait-io/strait/mirror/admin"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// stopPollInterval is how often stop describes the mirror while it waits
// for the barrier and for STOPPED.
const stopPollInterval = 250 * time.Millisecond

// stopFlags are stop's flags: the topics (or --all), the report format
// and how long the barrier may take.
type stopFlags struct {
	topics         listFlag
	all            bool
	json           bool
	barrierTimeout time.Duration
	// The RPO guard (issue 27): sent with StopMirrorTopics; the broker
	// measures each partition and refuses a topic over the bound.
	maxLagMs      int64
	maxLagRecords int64
	force         bool
	// The last group offset sync at the barrier (issue 27).
	offsetSyncTimeout time.Duration
	requireOffsetSync bool
}

func (f *stopFlags) check() error {
	switch {
	case f.all && len(f.topics) > 0:
		return fmt.Errorf("--all and --topic exclude each other")
	case !f.all && len(f.topics) == 0:
		return fmt.Errorf("missing --topic (or --all)")
	case f.barrierTimeout < 0:
		return fmt.Errorf("--barrier-timeout must not be negative, got %v", f.barrierTimeout)
	case f.maxLagMs < -1:
		return fmt.Errorf("--max-lag-ms must be 0 or more (-1: the mirror config), got %d", f.maxLagMs)
	case f.offsetSyncTimeout <= 0:
		return fmt.Errorf("--offset-sync-timeout must be positive, got %v", f.offsetSyncTimeout)
	case f.maxLagRecords < -1:
		return fmt.Errorf("--max-lag-records must be 0 or more, got %d", f.maxLagRecords)
	}
	return nil
}

// stopCommand is the promotion barrier (issue 27): the topics stop at one
// cut each, and only once every partition named has reached its cut does
// any become writable.
//
//  1. Barrier: PauseMirrorTopics, then wait until every partition is at
//     rest, PAUSED or FAILED: no fetcher appends, and (PAUSED) its leader
//     is alive and can write __mirror_state. Still read-only.
//  2. Fail closed: a partition not at rest by --barrier-timeout ends the
//     command with exit 1 naming it; the topics stay paused and nothing
//     became writable (`strait mirror resume` undoes the pause).
//  3. Measure the cut: per partition the destination log end (every
//     mirrored record lies below it; it is the source offset mirrored up
//     to) and the lag left behind, from a describe, which measures the
//     source for each call (unknown, never 0, when the source is gone).
//     Then group offsets are synced one last time (SyncMirrorGroupOffsets,
//     offset_sync.go): the mirror's syncer runs its consumer group round
//     now for the topics, each offset clamped to the barrier (the
//     destination's end at rest). A source that cannot be reached does not
//     fail the stop, unless --require-offset-sync: the last periodic sync
//     stands and the report says when it ran.
//  4. StopMirrorTopics, with the RPO guard's bound (--max-lag-ms,
//     --max-lag-records, --force): the broker measures the lag at the
//     barrier and refuses (POLICY_VIOLATION) the whole stop when a topic
//     is over the bound or of unknown lag: nothing is stopped, every topic
//     stays paused (fail closed). Then each
//     partition goes PAUSED → STOPPING (no fetcher
//     runs, so its stop offset is the cut), which bumps the leader epoch,
//     records the LME, writes an ABORT marker for every transaction open
//     at the cut and MIRROR_PID_RESET, then STOPPED and writable.
//  5. Wait for STOPPED and report per partition the cut, the lag
//     abandoned and the destination's high watermark and last stable
//     offset, which must be equal: a read_committed consumer is not stuck.
//
// Every step is an idempotent RPC, so an interrupted stop is finished by
// running it again.
var stopCommand = command{
	args: "NAME (--topic T [--topic T2]... | --all) [--json] [--barrier-timeout DURATION] [--max-lag-ms N] [--max-lag-records N] [--force] [--offset-sync-timeout DURATION] [--require-offset-sync]",
	npos: 1,
	flags: func(fs *flag.FlagSet) any {
		f := &stopFlags{}
		fs.Var(&f.topics, "topic", "a `TOPIC` to stop (repeatable)")
		fs.BoolVar(&f.all, "all", false, "stop every topic of the mirror that is not stopped yet")
		fs.BoolVar(&f.json, "json", false, "print the stop report as JSON")
		fs.DurationVar(&f.barrierTimeout, "barrier-timeout", 0,
			"how long every partition has to reach the barrier (paused, read-only) before the stop fails closed (default: half of --timeout)")
		fs.Int64Var(&f.maxLagMs, "max-lag-ms", -1,
			"refuse to stop a topic with a partition whose lag at the barrier is older than `N` ms or unknown (default: the mirror config mirror.failover.max.lag.ms)")
		fs.Int64Var(&f.maxLagRecords, "max-lag-records", -1,
			"refuse to stop a topic with a partition more than `N` records behind at the barrier or of unknown lag")
		fs.BoolVar(&f.force, "force", false, "stop whatever the lag (skip --max-lag-* and mirror.failover.max.lag.ms)")
		fs.DurationVar(&f.offsetSyncTimeout, "offset-sync-timeout", defaultOffsetSyncTimeout,
			"how long the last consumer group offset sync at the barrier may take")
		fs.BoolVar(&f.requireOffsetSync, "require-offset-sync", false,
			"fail closed (nothing made writable) when the group offsets cannot all be synced at the barrier (source unreachable, a group failed)")
		return f
	},
	run: func(ctx context.Context, e *env, mirror string, flags any) int {
		return e.stop(ctx, mirror, flags.(*stopFlags))
	},
}

// StopReport is what `stop --json` prints.
type StopReport struct {
	Mirror string `json:"mirror"`
	// BarrierReached: every partition was at rest (read-only, no fetcher)
	// before any was stopped. False means the stop failed closed:
	// nothing was made writable.
	BarrierReached bool `json:"barrier_reached"`
	// Stopped: every partition is STOPPED (writable) with its last
	// stable offset at its high watermark.
	Stopped    bool                  `json:"stopped"`
	Partitions []StopPartitionReport `json:"partitions"`
	// GroupOffsets is the last consumer group offset sync at the barrier;
	// nil when the barrier was not reached.
	GroupOffsets *StopGroupOffsets `json:"group_offsets"`
	// LagOverBound are the partitions whose lag at the barrier made the
	// RPO guard refuse the stop (POLICY_VIOLATION); those topics stay
	// paused.
	LagOverBound []StopLagOverBound `json:"lag_over_bound,omitempty"`
	// StoppedTopics are the topics the broker accepted to stop: every
	// topic when the stop succeeds, none when the RPO guard refused it (a
	// stop is all or nothing; a broker from before that stops the topics
	// within the bound).
	StoppedTopics []string `json:"stopped_topics"`
	// Error says why the stop failed, "" when it did not.
	Error string `json:"error,omitempty"`
}

// StopPartitionReport is one partition of a stop. Offsets and lags are −1
// when not known.
type StopPartitionReport struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	State     string `json:"state"`
	// Barrier is the cut: the destination's log end at the barrier, the
	// source offset every mirrored record lies below (the final source
	// high watermark mirrored). The stop's own ABORT markers and
	// MIRROR_PID_RESET follow it.
	Barrier int64 `json:"barrier_offset"`
	// SourceHighWatermark is the source's high watermark as last measured
	// (SourceMeasuredAt), −1 if never.
	SourceHighWatermark int64      `json:"source_high_watermark"`
	SourceMeasuredAt    *time.Time `json:"source_measured_at"`
	// LagRecords and LagMs are what the cut abandons: source high
	// watermark − barrier, and the age of the oldest source record not
	// mirrored (mirror/lag); −1 (unknown) when the source could not be
	// measured at the barrier.
	LagRecords int64 `json:"lag_abandoned_records"`
	LagMs      int64 `json:"lag_abandoned_ms"`
	// LastMirrorEpoch is the LME recorded by the stop.
	LastMirrorEpoch int32 `json:"last_mirror_epoch"`
	// DestinationHighWatermark and LastStableOffset are the destination's
	// after the stop.
	DestinationHighWatermark int64  `json:"destination_high_watermark"`
	LastStableOffset         int64  `json:"last_stable_offset"`
	Error                    string `json:"error,omitempty"`
}

// StopLagOverBound is one partition the RPO guard refused: its topic, lag
// at the barrier (−1 unknown) and the bound applied (−1 none).
type StopLagOverBound struct {
	Topic string `json:"topic"`
	admin.PartitionLagOverBound
}

func (p StopPartitionReport) name() string { return fmt.Sprintf("%s-%d", p.Topic, p.Partition) }

func (e *env) stop(ctx context.Context, mirror string, f *stopFlags) int {
	rep := &StopReport{Mirror: mirror, StoppedTopics: []string{}}
	topics := []string(f.topics)
	if f.all {
		ts, err := e.stoppableTopics(ctx, mirror)
		if err != nil {
			return e.fail(err)
		}
		if len(ts) == 0 {
			fmt.Fprintf(e.stderr, "strait mirror %s: mirror %s has no topic left to stop\n", e.cmd, mirror)
			return exitFailed
		}
		topics = ts
	}

	// 1. The barrier.
	rs, err := e.client.PauseMirrorTopics(ctx, mirror, topics...)
	if err != nil {
		return e.fail(err)
	}
	var refused []string
	for _, r := range rs.Failed() {
		if !errors.Is(r.Err, mirrormsg.MirrorTopicAlreadyPaused) {
			refused = append(refused, fmt.Sprintf("topic %s: %s: %s", r.Topic, admin.ErrorName(r.Err), r.Detail()))
		}
	}
	for _, t := range rs.Missing(topics) {
		refused = append(refused, fmt.Sprintf("topic %s: no result from the broker", t))
	}
	if len(refused) > 0 {
		rep.Error = "the barrier could not be set (nothing was made writable): " + strings.Join(refused, "; ")
		return e.stopFailed(rep, f.json)
	}
	barrierTimeout := f.barrierTimeout
	if barrierTimeout == 0 {
		barrierTimeout = e.timeout / 2
	}
	bctx, cancel := context.WithTimeout(ctx, barrierTimeout)
	parts, err := e.pollPartitions(bctx, mirror, topics, atRest)
	cancel()
	if err != nil && len(parts) == 0 {
		parts = e.describeOnce(ctx, mirror, topics)
	}
	rep.Partitions = parts
	if err != nil {
		// 2. Fail closed.
		var behind []string
		for _, p := range parts {
			if !atRest(p.State) {
				behind = append(behind, fmt.Sprintf("%s (%s%s)", p.name(), p.State, withDetail(p.Error)))
			}
		}
		rep.Error = fmt.Sprintf("fail closed, nothing was made writable (the topics stay paused; "+
			"`strait mirror resume` resumes them): partitions not at the barrier within %v: %s", barrierTimeout, strings.Join(behind, ", "))
		if len(behind) == 0 {
			rep.Error = fmt.Sprintf("fail closed, nothing was made writable (the topics stay paused): %v", err)
		}
		return e.stopFailed(rep, f.json)
	}
	rep.BarrierReached = true
	if !e.syncOffsetsAtBarrier(ctx, mirror, topics, f, rep) {
		return e.stopFailed(rep, f.json)
	}

	// 3. The cut (parts), measured at the barrier. 4. The stop.
	opts := admin.StopOptions{MaxLagMs: f.maxLagMs, MaxLagRecords: f.maxLagRecords, Force: f.force}
	rs, err = e.client.StopMirrorTopicsWith(ctx, mirror, opts, topics...)
	if err != nil {
		rep.Error = fmt.Sprintf("every partition reached the barrier, but the stop failed (the topics stay paused): %v", err)
		return e.stopFailed(rep, f.json)
	}
	refused = refused[:0]
	var overBound []admin.TopicResult
	for _, r := range rs.Failed() {
		refused = append(refused, fmt.Sprintf("topic %s: %s: %s", r.Topic, admin.ErrorName(r.Err), r.Detail()))
		for _, o := range r.LagOverBound {
			rep.LagOverBound = append(rep.LagOverBound, StopLagOverBound{Topic: r.Topic, PartitionLagOverBound: o})
		}
		if len(r.LagOverBound) > 0 {
			overBound = append(overBound, r)
		}
	}
	for _, t := range rs.Missing(topics) {
		refused = append(refused, fmt.Sprintf("topic %s: no result from the broker", t))
	}
	if len(refused) > 0 {
		// The broker refuses the whole stop (all or nothing): nothing
		// was stopped. A broker from before the all-or-nothing guard
		// stops the topics it did not refuse: name them, they are
		// becoming writable.
		for _, r := range rs {
			if r.Err == nil {
				rep.StoppedTopics = append(rep.StoppedTopics, r.Topic)
			}
		}
		what := "nothing was stopped (all or nothing: the topics stay paused, read-only: fail closed"
		if len(rep.StoppedTopics) > 0 {
			what = "the topics " + strings.Join(rep.StoppedTopics, ", ") + " were stopped, the refused ones stay paused (read-only"
		}
		rep.Error = "every partition reached the barrier, but the stop was refused: " + what +
			"; `strait mirror resume` resumes them, or stop again with --force to abandon the lag): " + strings.Join(refused, "; ")
		if len(overBound) > 0 && !f.json {
			fmt.Fprintln(e.stderr, "Partitions over the stop's lag bound (RPO guard):")
			for _, r := range overBound {
				printLagOverBound(e.stderr, r)
			}
		}
		return e.stopFailed(rep, f.json)
	}

	// 5. STOPPED, then the destination's offsets.
	stopped, err := e.pollPartitions(ctx, mirror, topics, func(s string) bool { return s == "STOPPED" })
	byName := map[string]StopPartitionReport{}
	for _, p := range stopped {
		byName[p.name()] = p
	}
	var notStopped []string
	for i := range rep.Partitions {
		p := &rep.Partitions[i]
		s, ok := byName[p.name()]
		if !ok || s.State != "STOPPED" {
			notStopped = append(notStopped, p.name())
		}
		if ok {
			p.State, p.LastMirrorEpoch, p.Error = s.State, s.LastMirrorEpoch, s.Error
		}
	}
	if err != nil || len(notStopped) > 0 {
		rep.Error = fmt.Sprintf("partitions not STOPPED within --timeout %v (still read-only, the stop retries): %s",
			e.timeout, strings.Join(notStopped, ", "))
		if err != nil {
			rep.Error += fmt.Sprintf(" (%v)", err)
		}
		return e.stopFailed(rep, f.json)
	}
	if err := e.destinationOffsets(ctx, topics, rep.Partitions); err != nil {
		rep.Error = fmt.Sprintf("stopped, but the destination's offsets could not be listed: %v", err)
		return e.stopFailed(rep, f.json)
	}
	var stuck []string
	for _, p := range rep.Partitions {
		if p.LastStableOffset != p.DestinationHighWatermark {
			stuck = append(stuck, fmt.Sprintf("%s (LSO %d, HW %d)", p.name(), p.LastStableOffset, p.DestinationHighWatermark))
		}
	}
	if len(stuck) > 0 {
		rep.Error = "stopped, but the last stable offset is below the high watermark: " + strings.Join(stuck, ", ")
		return e.stopFailed(rep, f.json)
	}
	rep.Stopped, rep.StoppedTopics = true, topics
	if f.json {
		return e.printJSON(rep)
	}
	printStopReport(e.stdout, rep)
	return exitOK
}

// atRest: a partition that no fetcher appends to, still read-only.
func atRest(state string) bool { return state == "PAUSED" || state == "FAILED" }

func withDetail(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

// stopFailed prints the report and rep.Error, and returns exitFailed.
func (e *env) stopFailed(rep *StopReport, asJSON bool) int {
	if asJSON {
		e.printJSON(rep)
	} else if len(rep.Partitions) > 0 {
		printStopReport(e.stdout, rep)
	}
	fmt.Fprintf(e.stderr, "strait mirror %s: %s\n", e.cmd, rep.Error)
	return exitFailed
}

// failClosedDescribeTimeout bounds the describe that names the partitions
// of a stop failing closed when none answered within the barrier timeout:
// a broker waits up to 5 s for the others' partitions (UNKNOWN after).
const failClosedDescribeTimeout = 10 * time.Second

// describeOnce is the topics' partitions from one describe, asked again
// until one answers within failClosedDescribeTimeout (and --timeout); nil
// if none did. A describe can take longer than a short --barrier-timeout
// when a destination broker is down (its peers wait for it), and then the
// fail-closed error must still name the partitions not at the barrier.
func (e *env) describeOnce(ctx context.Context, mirror string, topics []string) []StopPartitionReport {
	ctx, cancel := context.WithTimeout(ctx, failClosedDescribeTimeout)
	defer cancel()
	parts, _ := e.pollPartitions(ctx, mirror, topics, func(string) bool { return true })
	return parts
}

// stoppableTopics lists the mirror's topics that are not stopped (nor
// being stopped) in every partition.
func (e *env) stoppableTopics(ctx context.Context, mirror string) ([]string, error) {
	ds, err := e.client.DescribeMirrors(ctx, mirror)
	if err != nil {
		return nil, err
	}
	if ds[0].Err != nil {
		return nil, describeError(ds[0].Err)
	}
	var out []string
	for _, t := range ds[0].Topics {
		if !slices.ContainsFunc(t.Partitions, func(p admin.PartitionDescription) bool {
			return p.State == "STOPPED" || p.State == "STOPPING"
		}) {
			out = append(out, t.Name)
		}
	}
	return out, nil
}

// pollPartitions describes the mirror until every partition of topics is
// in a state done accepts, and returns their last description; with an
// error when ctx ended first (or the mirror is gone).
func (e *env) pollPartitions(ctx context.Context, mirror string, topics []string, done func(string) bool) ([]StopPartitionReport, error) {
	tick := time.NewTicker(stopPollInterval)
	defer tick.Stop()
	var last []StopPartitionReport
	var lastErr error
	for {
		ds, err := e.client.DescribeMirrors(ctx, mirror)
		switch {
		case err != nil:
			lastErr = err // a broker moving or restarting: ask again
		case ds[0].Err != nil:
			return last, describeError(ds[0].Err)
		default:
			var all bool
			last, all = stopPartitions(ds[0], topics, done)
			if all {
				return last, nil
			}
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return last, fmt.Errorf("%w (last error: %v)", ctx.Err(), lastErr)
			}
			return last, ctx.Err()
		case <-tick.C:
		}
	}
}

// stopPartitions is the report's view of topics' partitions in d, and
// whether every one is in a state done accepts. A topic described with no
// partitions (no leader answered for them) is one partition −1 in state
// "-": not done.
func stopPartitions(d admin.MirrorDescription, topics []string, done func(string) bool) ([]StopPartitionReport, bool) {
	var out []StopPartitionReport
	all := true
	for _, name := range topics {
		i := slices.IndexFunc(d.Topics, func(t admin.TopicDescription) bool { return t.Name == name })
		if i < 0 || len(d.Topics[i].Partitions) == 0 {
			out = append(out, StopPartitionReport{Topic: name, Partition: -1, State: "-", Barrier: -1, SourceHighWatermark: -1,
				LagRecords: -1, LagMs: -1, LastMirrorEpoch: -1, DestinationHighWatermark: -1, LastStableOffset: -1,
				Error: "not described: no leader answered for the topic"})
			all = false
			continue
		}
		for _, pd := range d.Topics[i].Partitions {
			p := StopPartitionReport{Topic: name, Partition: pd.Partition, State: pd.State, Barrier: pd.DestinationLogEndOffset,
				SourceHighWatermark: pd.SourceHighWatermark, SourceMeasuredAt: pd.LagMeasuredAt, LagRecords: -1, LagMs: -1,
				LastMirrorEpoch: pd.LastMirrorEpoch, DestinationHighWatermark: -1, LastStableOffset: -1, Error: pd.LastError}
			if !pd.LagUnknown && pd.Lag >= 0 && pd.SourceHighWatermark >= 0 && pd.DestinationLogEndOffset >= 0 {
				// Measured for this describe: what the source had that
				// the cut leaves behind.
				p.LagRecords, p.LagMs = max(pd.SourceHighWatermark-pd.DestinationLogEndOffset, 0), pd.LagMs
			}
			if !done(pd.State) {
				all = false
			}
			out = append(out, p)
		}
	}
	return out, all
}

// destinationOffsets fills in each partition's high watermark and last
// stable offset (ListOffsets latest, and read_committed) on the
// destination.
func (e *env) destinationOffsets(ctx context.Context, topics []string, parts []StopPartitionReport) error {
	adm := kadm.NewClient(e.client.Kgo())
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("high watermarks: %w", err)
	}
	lsos, err := adm.ListCommittedOffsets(ctx, topics...)
	if err == nil {
		err = lsos.Error()
	}
	if err != nil {
		return fmt.Errorf("last stable offsets: %w", err)
	}
	for i := range parts {
		p := &parts[i]
		if o, ok := ends.Lookup(p.Topic, p.Partition); ok {
			p.DestinationHighWatermark = o.Offset
		}
		if o, ok := lsos.Lookup(p.Topic, p.Partition); ok {
			p.LastStableOffset = o.Offset
		}
	}
	return nil
}

func printStopReport(w io.Writer, rep *StopReport) {
	tw := newTable(w)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tSTATE\tBARRIER\tSOURCE-HW\tLAG-ABANDONED\tLAG-MS\tLME\tDEST-HW\tLSO\tERROR")
	for _, p := range rep.Partitions {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Topic, p.Partition, strOrDash(p.State), orDash(p.Barrier),
			orDash(p.SourceHighWatermark), orUnknown(p.LagRecords), orUnknown(p.LagMs), orDash(p.LastMirrorEpoch),
			orDash(p.DestinationHighWatermark), orDash(p.LastStableOffset), strOrDash(p.Error))
	}
	tw.Flush()
	if rep.GroupOffsets != nil {
		printGroupOffsets(w, rep.GroupOffsets)
	}
	switch {
	case rep.Stopped:
		fmt.Fprintf(w, "Stopped %d partitions of mirror %s at one barrier; they are writable.\n", len(rep.Partitions), rep.Mirror)
	case !rep.BarrierReached:
		fmt.Fprintln(w, "Failed closed: no partition was made writable.")
	}
}
