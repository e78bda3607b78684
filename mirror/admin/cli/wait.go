package cli

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/strait-io/strait/mirror/admin"
	"github.com/strait-io/strait/mirror/lag"
)

// waitPollInterval is how often `start --wait` describes the mirror.
const waitPollInterval = 250 * time.Millisecond

// waitFlags wraps a command's flags with --wait.
type waitFlags struct {
	inner any
	wait  bool
}

func (f *waitFlags) check() error { return checkFlags(f.inner) }

// topicLister is implemented by flags that name the topics a command
// started.
type topicLister interface{ listTopics() []string }

func (f *topicsFlags) listTopics() []string { return []string(f.topics) }

// withWait adds --wait to c (start): once c succeeded, wait until every
// partition of its topics is MIRRORING and the destination's consumers
// can read everything the source's consumers could when the wait began
// (mirror/lag: destination high watermark ≥ the source high watermark
// measured at the start), printing a progress line at each change,
// within the command's --timeout. A partition going FAILED ends the wait
// at once: it does not retry its way to MIRRORING fast enough to be
// waited for (mirror.failed.retry.* backs off up to minutes), and the
// operator needs to see why.
func withWait(c command) command {
	flags, run := c.flags, c.run
	c.args += " [--wait]"
	c.flags = func(fs *flag.FlagSet) any {
		f := &waitFlags{inner: flags(fs)}
		fs.BoolVar(&f.wait, "wait", false, "wait until every partition of the topics is MIRRORING and the destination's consumers can read what the source's could when the wait began (bounded by --timeout), printing progress")
		return f
	}
	c.run = func(ctx context.Context, e *env, mirror string, flags any) int {
		f := flags.(*waitFlags)
		began := time.Now()
		if code := run(ctx, e, mirror, f.inner); code != exitOK || !f.wait {
			return code
		}
		var topics []string
		if l, ok := f.inner.(topicLister); ok {
			topics = l.listTopics()
		}
		return e.waitMirroring(ctx, mirror, topics, began)
	}
	return c
}

// waitTargets are the source high watermarks the wait must reach, one
// per partition ("topic-partition"), captured from the first measurement
// of each taken after the wait began.
type waitTargets struct {
	began time.Time
	hw    map[string]int64
}

// target returns the partition's target, capturing it from pd when pd
// carries a measurement taken since the wait began. The measurement's
// time is the broker's clock, the start the CLI's: the clocks are assumed
// synchronized (NTP); a broker that sends no time is taken as fresh.
func (w *waitTargets) target(key string, pd admin.PartitionDescription) (int64, bool) {
	if hw, ok := w.hw[key]; ok {
		return hw, true
	}
	if pd.SourceHighWatermark < 0 || pd.LagUnknown || (pd.LagMeasuredAt != nil && pd.LagMeasuredAt.Before(w.began)) {
		return lag.Unknown, false
	}
	w.hw[key] = pd.SourceHighWatermark
	return pd.SourceHighWatermark, true
}

// progress is one look at the waited partitions.
type progress struct {
	mirroring, total int
	lag              int64 // summed over the partitions whose lag is known
	unknown          int   // partitions whose lag is unknown
	maxLagMs         int64 // -1 when no partition's is known
	failed           []string
	missing          []string // topics not described (yet)
	done             bool
}

func (p progress) String() string {
	maxLag := "-"
	if p.maxLagMs >= 0 {
		maxLag = fmt.Sprint(p.maxLagMs)
	}
	s := fmt.Sprintf("%d/%d partitions MIRRORING, lag %d records, max lag %s ms", p.mirroring, p.total, p.lag, maxLag)
	if p.unknown > 0 && p.total > 0 {
		s += fmt.Sprintf(", lag unknown on %d", p.unknown)
	}
	if len(p.missing) > 0 {
		s += ", not described yet: " + strings.Join(p.missing, ", ")
	}
	return s
}

// measure looks at topics' partitions in d (every topic of the mirror
// when topics is empty: a start by pattern names none).
func measure(d admin.MirrorDescription, topics []string, w *waitTargets) (progress, admin.MirrorDescription) {
	if len(topics) == 0 {
		for _, t := range d.Topics {
			topics = append(topics, t.Name)
		}
	}
	p := progress{maxLagMs: -1}
	caughtUp := true // every partition's destination HW at its target
	shown := admin.MirrorDescription{Name: d.Name}
	for _, name := range topics {
		i := slices.IndexFunc(d.Topics, func(t admin.TopicDescription) bool { return t.Name == name })
		if i < 0 || len(d.Topics[i].Partitions) == 0 {
			p.missing = append(p.missing, name)
			continue
		}
		t := d.Topics[i]
		shown.Topics = append(shown.Topics, t)
		for _, pd := range t.Partitions {
			p.total++
			if pd.State == "MIRRORING" {
				p.mirroring++
			}
			if pd.State == "FAILED" {
				p.failed = append(p.failed, fmt.Sprintf("%s-%d", t.Name, pd.Partition))
			}
			if pd.Lag >= 0 {
				p.lag += pd.Lag
			} else {
				p.unknown++
			}
			hw, ok := w.target(fmt.Sprintf("%s-%d", t.Name, pd.Partition), pd)
			switch {
			case pd.DestinationHighWatermark < 0 && pd.Lag == 0:
				// A broker from before issue 33 sends no destination
				// HW (and a lag to its log end): its lag 0 is all it
				// tells. A current one sends an unknown lag instead.
			case !ok || !lag.CaughtUpTo(pd.DestinationHighWatermark, hw):
				caughtUp = false
			}
			p.maxLagMs = max(p.maxLagMs, pd.LagMs)
		}
	}
	p.done = len(p.missing) == 0 && p.total > 0 && p.mirroring == p.total && caughtUp
	return p, shown
}

// waitMirroring polls DescribeMirrors until every partition of topics is
// MIRRORING with its destination high watermark at the source's when the
// wait began (exit 0), one is FAILED or ctx ends (exit 1, with the
// partitions' states).
func (e *env) waitMirroring(ctx context.Context, mirror string, topics []string, began time.Time) int {
	var last string
	var shown admin.MirrorDescription
	var lastErr error
	targets := &waitTargets{began: began, hw: map[string]int64{}}
	tick := time.NewTicker(waitPollInterval)
	defer tick.Stop()
	for {
		ds, err := e.client.DescribeMirrors(ctx, mirror)
		switch {
		case err != nil:
			lastErr = err // a broker moving or restarting: ask again
		case ds[0].Err != nil:
			return e.fail(fmt.Errorf("describe %s: %w", mirror, ds[0].Err))
		default:
			var p progress
			p, shown = measure(ds[0], topics, targets)
			if line := p.String(); line != last {
				fmt.Fprintf(e.stdout, "waiting: %s\n", line)
				last = line
			}
			switch {
			case p.done:
				fmt.Fprintf(e.stdout, "All %d partitions of %s are MIRRORING, caught up to the source as of the start of the wait.\n",
					p.total, topicNames(shown))
				return exitOK
			case len(p.failed) > 0:
				printDescription(e.stdout, shown)
				fmt.Fprintf(e.stderr, "strait mirror %s: partition(s) FAILED: %s\n", e.cmd, strings.Join(p.failed, ", "))
				return exitFailed
			}
		}
		select {
		case <-ctx.Done():
			if len(shown.Topics) > 0 {
				printDescription(e.stdout, shown)
			}
			msg := fmt.Sprintf("strait mirror %s: not every partition of %s was MIRRORING and caught up within --timeout %v",
				e.cmd, waitedFor(topics), e.timeout)
			if last != "" {
				msg += " (" + last + ")"
			} else if lastErr != nil {
				msg += fmt.Sprintf(" (last error: %v)", lastErr)
			}
			fmt.Fprintln(e.stderr, msg)
			return exitFailed
		case <-tick.C:
		}
	}
}

func topicNames(d admin.MirrorDescription) string {
	names := make([]string, len(d.Topics))
	for i, t := range d.Topics {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

func waitedFor(topics []string) string {
	if len(topics) == 0 {
		return "the mirror's topics"
	}
	return strings.Join(topics, ", ")
}
