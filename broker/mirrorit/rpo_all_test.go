package mirrorit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/mirror/admin"
	"github.com/strait-io/strait/mirror/admin/cli"
)

// TestMirrorStopLagGuardAllOrNothing: the RPO guard decides a failover of
// several topics as one. With one topic over the bound, a stop of both
// (admin API, CLI --topic a --topic b, CLI --all) stops neither: the
// broker answers POLICY_VIOLATION for both, naming the lagging topic's
// partitions with their lag and the bound, and says the other was held
// back; both stay mirrored (the CLI's barrier leaves them PAUSED), and the
// CLI's text and --json say nothing was stopped. --force stops both.
// Before, the broker refused only the lagging topic and stopped the other.
func TestMirrorStopLagGuardAllOrNothing(t *testing.T) {
	t.Parallel()
	p := newPair(t, 2*time.Minute, startOne(t, "source"), startOne(t, "destination"))
	const within, over, partitions, behind = "rpo-within", "rpo-over", 2, 30
	for _, topic := range []string{within, over} {
		p.src.createTopic(t, p.ctx, topic, partitions)
		for part := range int32(partitions) {
			produceBatches(t, p, p.src, topic, part, 0, 10, 5, "before")
		}
	}
	p.createMirror()
	p.start(within, over)
	p.waitMirroring(within, partitions, 30*time.Second)
	p.waitMirroring(over, partitions, 30*time.Second)
	p.pause(over)
	p.waitState(over, "PAUSED", partitions, 30*time.Second)
	for part := range int32(partitions) {
		produceBatches(t, p, p.src, over, part, 10, behind, 10, "behind")
	}
	bound := admin.StopOptions{MaxLagMs: -1, MaxLagRecords: 5}

	// Admin API: both refused, nothing stopped.
	rs, err := p.mirror.StopMirrorTopicsWith(p.ctx, mirrorName, bound, within, over)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("stop %s %s: %+v, want a result for each", within, over, rs)
	}
	for _, r := range rs {
		if !errors.Is(r.Err, kerr.PolicyViolation) {
			t.Fatalf("stop %s %s: %s: %v (%s), want POLICY_VIOLATION for both", within, over, r.Topic, r.Err, r.Message)
		}
		switch r.Topic {
		case over:
			if len(r.LagOverBound) != partitions || r.LagOverBound[0].Lag != behind || r.LagOverBound[0].MaxLagRecords != 5 ||
				!strings.Contains(r.Message, fmt.Sprintf("partition 1: %d records", behind)) {
				t.Errorf("%s refused with %+v (%s), want both partitions %d records behind against 5", over, r.LagOverBound, r.Message, behind)
			}
		case within:
			if len(r.LagOverBound) != 0 || !strings.Contains(r.Message, "all or nothing") || !strings.Contains(r.Message, over) {
				t.Errorf("%s held back with %+v (%s), want a message naming %s", within, r.LagOverBound, r.Message, over)
			}
		}
	}
	notStopped := func(topic, want string) {
		t.Helper()
		td, err := p.describe(topic)
		if err != nil {
			t.Fatal(err)
		}
		for _, pd := range td.Partitions {
			if pd.State != want {
				t.Fatalf("after a refused stop %s is%s, want every partition %s", topic, formatPartitions(td), want)
			}
		}
	}
	time.Sleep(500 * time.Millisecond) // a stop the broker forwarded would be STOPPING by now
	notStopped(within, "MIRRORING")
	notStopped(over, "PAUSED")

	// CLI, both named, and --all: exit 1, nothing stopped, both PAUSED.
	cliStop := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := cli.Main(p.ctx, append([]string{"--bootstrap-server", p.dst.seeds()[0], "stop", mirrorName}, args...), &out, &errb)
		p.logf("strait mirror stop %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
		return code, out.String(), errb.String()
	}
	code, _, stderr := cliStop("--topic", within, "--topic", over, "--max-lag-records", "5")
	if code != 1 || !strings.Contains(stderr, "nothing was stopped") || !strings.Contains(stderr, "POLICY_VIOLATION") ||
		!strings.Contains(stderr, over+" partition 0: lag 30 records") {
		t.Errorf("stop --topic %s --topic %s: exit %d, want 1 saying nothing was stopped and naming %s's partitions\n%s", within, over, code, over, stderr)
	}
	code, stdout, _ := cliStop("--all", "--max-lag-records", "5", "--json")
	var js cli.StopReport
	if err := json.Unmarshal([]byte(stdout), &js); err != nil || code != 1 || !js.BarrierReached || js.Stopped ||
		js.StoppedTopics == nil || len(js.StoppedTopics) != 0 || len(js.LagOverBound) != partitions || js.LagOverBound[0].Topic != over ||
		!strings.Contains(js.Error, "nothing was stopped") {
		t.Errorf("stop --all --json: exit %d, %v, report %+v", code, err, js)
	}
	time.Sleep(500 * time.Millisecond)
	notStopped(within, "PAUSED")
	notStopped(over, "PAUSED")

	// --force: both stop.
	code, stdout, _ = cliStop("--all", "--max-lag-records", "5", "--force", "--json")
	js = cli.StopReport{}
	if err := json.Unmarshal([]byte(stdout), &js); err != nil || code != 0 || !js.Stopped ||
		!slices.Equal(js.StoppedTopics, []string{over, within}) && !slices.Equal(js.StoppedTopics, []string{within, over}) {
		t.Fatalf("stop --all --force --json: exit %d, %v, report %+v", code, err, js)
	}
	p.waitState(within, "STOPPED", partitions, 30*time.Second)
	p.waitState(over, "STOPPED", partitions, 30*time.Second)
}
