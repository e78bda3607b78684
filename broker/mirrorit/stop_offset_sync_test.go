package mirrorit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/mirror/admin/cli"
)

// stopJSON runs `strait mirror stop` with args and decodes its --json
// report.
func stopJSON(t *testing.T, p *pair, args ...string) (int, cli.StopReport, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(p.ctx, append([]string{"--bootstrap-server", strings.Join(p.dst.seeds(), ","), "stop", mirrorName, "--json"}, args...), &out, &errb)
	p.logf("stop %v: exit %d\n%s%s", args, code, out.String(), errb.String())
	var rep cli.StopReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("stop --json: %v\n%s", err, out.String())
	}
	return code, rep, errb.String()
}

// TestMirrorStopSyncsGroupOffsets: groups commit on the source after the
// last periodic sync (the interval is an hour), the mirror is paused and
// the source writes on past the destination's end; `stop --topic --json`
// syncs the offsets one last time at the barrier: the destination's
// committed offsets equal the source's, clamped to the barrier (the
// destination's log end), a group active on the destination is left
// alone, skipped as group-active (the default mode) or, in forward-only
// mode, per partition as destination-ahead, and the report says so per
// group.
func TestMirrorStopSyncsGroupOffsets(t *testing.T) {
	t.Parallel()
	testMirrorStopSyncsGroupOffsets(t, "skip")
}

func TestMirrorStopSyncsGroupOffsetsForwardOnly(t *testing.T) {
	t.Parallel()
	testMirrorStopSyncsGroupOffsets(t, "forward-only")
}

func testMirrorStopSyncsGroupOffsets(t *testing.T, activeMode string) {
	p := newPair(t, 2*time.Minute, startOne(t, "source"), startOne(t, "destination"))
	const topic, partitions, mirrored, beyond = "last-sync", 2, 50, 40
	p.src.createTopic(t, p.ctx, topic, partitions)
	writeEach(t, p, p.src, topic, partitions, mirrored, "m")
	p.createMirror(oneHourSync, "mirror.consumer.offsets.sync.active.groups="+activeMode)
	p.start(topic)
	p.waitMirroring(topic, partitions, time.Minute)

	// live stays a member on the destination: the default mode skips it.
	live := p.dst.client(t, kgo.ConsumerGroup("live"), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(100*time.Millisecond))
	for read := 0; read < partitions*mirrored; {
		fs := live.PollFetches(p.ctx)
		if p.ctx.Err() != nil {
			t.Fatalf("live read %d records: %v", read, p.ctx.Err())
		}
		read += fs.NumRecords()
	}
	if err := live.CommitUncommittedOffsets(p.ctx); err != nil {
		t.Fatal(err)
	}

	// The barrier will be at `mirrored`: the source writes on while the
	// mirror is paused.
	p.pause(topic)
	p.waitState(topic, "PAUSED", partitions, 30*time.Second)
	writeEach(t, p, p.src, topic, partitions, beyond, "b")
	commitOn(t, p, p.src, "inside", topic, map[int32]int64{0: 30, 1: 20})
	commitOn(t, p, p.src, "beyond", topic, map[int32]int64{0: mirrored + beyond, 1: 45})
	commitOn(t, p, p.src, "live", topic, map[int32]int64{0: 3, 1: 4})
	for _, g := range []string{"inside", "beyond"} {
		if got := committedOn(t, p, p.dst, g, topic); len(got) != 0 {
			t.Fatalf("%s is on the destination before the stop (%v): a periodic sync ran, the test proves nothing", g, got)
		}
	}

	code, rep, stderr := stopJSON(t, p, "--topic", topic)
	if code != 0 || !rep.Stopped {
		t.Fatalf("stop: exit %d, stopped %v: %s", code, rep.Stopped, stderr)
	}
	for _, pr := range rep.Partitions {
		if pr.Barrier != mirrored {
			t.Fatalf("p%d barrier %d, want %d (what was mirrored before the pause)", pr.Partition, pr.Barrier, mirrored)
		}
	}

	// The destination's offsets: the source's, clamped to the barrier.
	want := map[string]map[int32]int64{
		"inside": {0: 30, 1: 20},
		"beyond": {0: mirrored, 1: 45},
		"live":   {0: mirrored, 1: mirrored}, // its own, untouched
	}
	for g, w := range want {
		if got := committedOn(t, p, p.dst, g, topic); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("group %s on the destination: %v, want %v", g, got, w)
		}
	}

	// The report.
	g := rep.GroupOffsets
	if g == nil || !g.Synced || g.Error != "" || g.SyncerBroker < 0 || g.LastSync == nil {
		t.Fatalf("group_offsets: %+v", g)
	}
	byGroup := map[string]cli.StopGroupReport{}
	for _, r := range g.Groups {
		byGroup[r.Group] = r
	}
	if r := byGroup["inside"]; r.Synced != 2 || r.Skipped != 0 || r.Failed != 0 {
		t.Errorf("inside: %+v, want 2 partitions synced", r)
	}
	if r := byGroup["beyond"]; r.Synced != 2 || len(r.Partitions) != 2 || r.Partitions[0].CommittedOffset != mirrored ||
		r.Partitions[0].SourceOffset != mirrored+beyond {
		t.Errorf("beyond: %+v, want 2 synced, p0 source %d committed %d (clamped to the barrier)", r, mirrored+beyond, mirrored)
	}
	switch r := byGroup["live"]; activeMode {
	case "skip":
		if r.SkipReason != "group-active" || len(r.Partitions) != 0 {
			t.Errorf("live: %+v, want skipped: group-active", r)
		}
	case "forward-only":
		if r.SkipReason != "" || r.Skipped != 2 || r.Synced != 0 || r.Partitions[0].Outcome != "destination-ahead" ||
			r.Partitions[0].CommittedOffset != mirrored || r.Partitions[0].SourceOffset != 3 {
			t.Errorf("live: %+v, want 2 partitions skipped: destination-ahead (committed %d, source 3 and 4)", r, mirrored)
		}
	}
}

// TestMirrorStopOffsetSyncSourceDown: with the source gone, the barrier's
// sync cannot run; the stop does not fail for it, and reports the offsets
// not synced and when the last sync completed (what stands). With
// --require-offset-sync it fails closed instead: the topic stays paused.
func TestMirrorStopOffsetSyncSourceDown(t *testing.T) {
	t.Parallel()
	p := newPair(t, 2*time.Minute, startOne(t, "source"), startOne(t, "destination"))
	const topic, partitions = "sync-down", 2
	p.src.createTopic(t, p.ctx, topic, partitions)
	writeEach(t, p, p.src, topic, partitions, 20, "m")
	p.createMirror(syncInterval)
	p.start(topic)
	p.waitMirroring(topic, partitions, time.Minute)
	commitOn(t, p, p.src, "g", topic, map[int32]int64{0: 7, 1: 9})
	p.waitFor(30*time.Second, "g synced periodically", func() string {
		if got := committedOn(t, p, p.dst, "g", topic); got[0] != 7 || got[1] != 9 {
			return fmt.Sprint(got)
		}
		return ""
	})

	p.logf("killing the source")
	p.src.one.Crash(t)

	code, rep, stderr := stopJSON(t, p, "--topic", topic, "--offset-sync-timeout", "3s", "--require-offset-sync")
	if code != 1 || rep.Stopped || !rep.BarrierReached || rep.GroupOffsets == nil || rep.GroupOffsets.Synced ||
		!strings.Contains(stderr, "--require-offset-sync was given: fail closed") {
		t.Fatalf("--require-offset-sync: exit %d, report %+v: %s", code, rep, stderr)
	}
	td, err := p.describe(topic)
	if err != nil {
		t.Fatal(err)
	}
	for _, pd := range td.Partitions {
		if pd.State != "PAUSED" {
			t.Fatalf("after a stop that failed closed: %s", formatPartitions(td))
		}
	}

	code, rep, stderr = stopJSON(t, p, "--topic", topic, "--offset-sync-timeout", "3s")
	if code != 0 || !rep.Stopped {
		t.Fatalf("stop with the source down: exit %d: %s", code, stderr)
	}
	g := rep.GroupOffsets
	if g == nil || g.Synced || g.Error == "" || g.LastSync == nil || time.Since(*g.LastSync) > time.Minute ||
		!strings.Contains(stderr, "group offsets not synced at the barrier") || !strings.Contains(stderr, "the last completed sync (") {
		t.Fatalf("group_offsets %+v, stderr %s: want not synced, with an error and the last sync's time", g, stderr)
	}
	if got := committedOn(t, p, p.dst, "g", topic); got[0] != 7 || got[1] != 9 {
		t.Errorf("g on the destination after the stop: %v, want the last sync's {0:7 1:9}", got)
	}
}
