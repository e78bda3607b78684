package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/strait-io/strait/mirror/admin"
)

// defaultOffsetSyncTimeout bounds the barrier's group offset sync: a
// source that is gone makes its group listing wait for the client's
// retries, and the stop must not wait for them.
const defaultOffsetSyncTimeout = 10 * time.Second

// StopGroupOffsets is the barrier's last consumer group offset sync in
// the stop report (issue 27: "group offsets are synced one last time").
type StopGroupOffsets struct {
	// Synced: the round ran through, every group without a failure.
	// False means the offsets that stand on the destination are the last
	// sync's (LastSync), up to one mirror.metadata.refresh.interval.ms
	// older than the barrier, for the groups not synced now.
	Synced bool `json:"synced"`
	// SyncerBroker is the broker that ran the round (-1 none).
	SyncerBroker int32 `json:"syncer_broker"`
	// LastSync is when the syncer last completed a group round without a
	// failure (this one when Synced), nil if never.
	LastSync *time.Time        `json:"last_sync"`
	Groups   []StopGroupReport `json:"groups"`
	Error    string            `json:"error,omitempty"`
}

// StopGroupReport is one group of the sync: how many of its partitions
// now equal the source's offset clamped to the barrier (synced now or
// already), how many were skipped and why, and how many failed.
type StopGroupReport struct {
	admin.GroupOffsetResult
	Synced  int `json:"partitions_synced"`
	Skipped int `json:"partitions_skipped"`
	Failed  int `json:"partitions_failed"`
}

// syncOffsetsAtBarrier runs the last group offset sync, every partition
// at rest, and records it in rep. It returns false (rep.Error set) only
// when the stop must fail closed: --require-offset-sync and the sync did
// not run through.
func (e *env) syncOffsetsAtBarrier(ctx context.Context, mirror string, topics []string, f *stopFlags, rep *StopReport) bool {
	sctx, cancel := context.WithTimeout(ctx, f.offsetSyncTimeout)
	defer cancel()
	res, err := e.client.SyncMirrorGroupOffsets(sctx, mirror, topics...)
	g := &StopGroupOffsets{SyncerBroker: -1}
	rep.GroupOffsets = g
	var problems []string
	switch {
	case err != nil:
		problems = append(problems, err.Error())
	case res.Err != nil:
		problems = append(problems, res.Err.Error())
	}
	if res != nil {
		g.SyncerBroker, g.LastSync = res.SyncerBroker, res.LastSync
		for _, gr := range res.Groups {
			r := StopGroupReport{GroupOffsetResult: gr}
			for _, p := range gr.Partitions {
				switch p.Outcome {
				case "synced", "unchanged":
					r.Synced++
				case "failed":
					r.Failed++
				default:
					r.Skipped++
				}
			}
			if gr.Error != "" {
				problems = append(problems, fmt.Sprintf("group %s: %s", gr.Group, gr.Error))
			}
			g.Groups = append(g.Groups, r)
		}
	}
	if len(problems) == 0 {
		g.Synced = true
		return true
	}
	g.Error = strings.Join(problems, "; ")
	if f.requireOffsetSync {
		rep.Error = "every partition reached the barrier, but the group offsets could not all be synced and --require-offset-sync " +
			"was given: fail closed, nothing was made writable (the topics stay paused; `strait mirror resume` resumes them): " + g.Error
		return false
	}
	fmt.Fprintf(e.stderr, "strait mirror %s: warning: group offsets not synced at the barrier (%s); %s\n", e.cmd, g.Error, lastSyncNote(g.LastSync))
	return true
}

// lastSyncNote says which offsets stand when the barrier's sync did not
// run through.
func lastSyncNote(last *time.Time) string {
	if last == nil {
		return "no earlier sync completed: the destination's group offsets may not be synced at all"
	}
	return fmt.Sprintf("the last completed sync (%s) stands: offsets may be up to one mirror.metadata.refresh.interval.ms older than the barrier",
		last.UTC().Format(time.RFC3339))
}

// printGroupOffsets prints the barrier's group offset sync after the
// partitions table.
func printGroupOffsets(w io.Writer, g *StopGroupOffsets) {
	// A blank line ends the partitions table above, for readers and for
	// scripts that read the table up to it.
	fmt.Fprintln(w)
	switch {
	case g.Synced && len(g.Groups) == 0:
		fmt.Fprintf(w, "Group offsets synced at the barrier by broker %d: no group has offsets on these topics.\n", g.SyncerBroker)
	case g.Synced:
		fmt.Fprintf(w, "Group offsets synced at the barrier by broker %d (%d groups):\n", g.SyncerBroker, len(g.Groups))
	default:
		fmt.Fprintf(w, "Group offsets NOT synced at the barrier: %s\n  %s\n", g.Error, lastSyncNote(g.LastSync))
	}
	if len(g.Groups) == 0 {
		return
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "GROUP\tSYNCED\tSKIPPED\tFAILED\tNOTE")
	for _, r := range g.Groups {
		note := r.Error
		if r.SkipReason != "" {
			note = "skipped: " + r.SkipReason
		} else if r.Skipped > 0 && note == "" {
			note = "destination-ahead (forward-only: not moved back)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", r.Group, r.Synced, r.Skipped, r.Failed, strOrDash(note))
	}
	tw.Flush()
}
