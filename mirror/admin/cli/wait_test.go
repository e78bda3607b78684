package cli_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strait-io/strait/mirror/admin/admintest"
	"github.com/strait-io/strait/raftmeta/mirrormsg"
)

// pstate is one partition as a scripted DescribeMirrors answers it.
type pstate struct {
	state      string
	lag, lagMs int64
}

// scriptedDescribe answers DescribeMirrors for mirror m1, topic "orders",
// with the steps in order (the last one repeats); each step is the
// partitions of orders. An empty step describes the topic with no
// partitions (not led anywhere yet).
func scriptedDescribe(steps ...[]pstate) (admintest.HandlerFunc, func() int) {
	var mu sync.Mutex
	calls := 0
	h := func(_ context.Context, req kmsg.Request) kmsg.Response {
		mu.Lock()
		step := steps[min(calls, len(steps)-1)]
		calls++
		mu.Unlock()
		var parts []mirrormsg.DescribeMirrorsResponsePartitionDetail
		for i, ps := range step {
			p := mirrormsg.NewDescribeMirrorsResponsePartitionDetail()
			p.PartitionIndex, p.State, p.Lag, p.LagMs = int32(i), ps.state, ps.lag, ps.lagMs
			p.CommittedLag = ps.lag // no transactions
			p.SourceOffset, p.DestinationOffset = 100, 100-ps.lag
			p.DestinationHighWatermark = p.DestinationOffset
			if ps.lag < 0 {
				p.SourceOffset, p.DestinationOffset, p.DestinationHighWatermark = -1, -1, -1
			}
			if ps.state == "FAILED" {
				p.ErrorMessage, p.RetryCount = kmsg.StringPtr("source unreachable"), 2
			}
			parts = append(parts, p)
		}
		return ordersDescribed(req, parts...)
	}
	return h, func() int { mu.Lock(); defer mu.Unlock(); return calls }
}

// ordersDescribed answers req with mirror m1's topic "orders" and its
// partitions parts.
func ordersDescribed(req kmsg.Request, parts ...mirrormsg.DescribeMirrorsResponsePartitionDetail) kmsg.Response {
	r := req.ResponseKind().(*mirrormsg.DescribeMirrorsResponse)
	m := mirrormsg.NewDescribeMirrorsResponseDescribedMirror()
	m.MirrorName = "m1"
	tp := mirrormsg.NewDescribeMirrorsResponseTopicPartitions()
	tp.TopicName = "orders"
	tp.Partitions = parts
	m.Topics = append(m.Topics, tp)
	r.Mirrors = append(r.Mirrors, m)
	return r
}

func startBroker(t *testing.T, steps ...[]pstate) (*admintest.Broker, func() int) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyStartMirrorTopics, topicsHandler(nil, nil))
	h, calls := scriptedDescribe(steps...)
	b.Handle(mirrormsg.KeyDescribeMirrors, h)
	return b, calls
}

// TestStartWait: --wait prints a progress line at each change and exits
// 0 once both partitions are MIRRORING with lag 0.
func TestStartWait(t *testing.T) {
	b, calls := startBroker(t,
		[]pstate{},
		[]pstate{{"PREPARING", -1, -1}, {"PREPARING", -1, -1}},
		[]pstate{{"MIRRORING", 40, 5000}, {"PREPARING", -1, -1}},
		[]pstate{{"MIRRORING", 40, 5000}, {"PREPARING", -1, -1}}, // unchanged: no new line
		[]pstate{{"MIRRORING", 10, 1200}, {"MIRRORING", 5, 800}},
		[]pstate{{"MIRRORING", 0, 0}, {"MIRRORING", 0, 0}},
	)
	run(t, b, "start", "m1", "--topic", "orders", "--wait", "--timeout", "8s").expect(t, 0, ""+
		"TOPIC   RESULT\norders  OK\n"+
		"waiting: 0/0 partitions MIRRORING, lag 0 records, max lag - ms, not described yet: orders\n"+
		"waiting: 0/2 partitions MIRRORING, lag 0 records, max lag - ms, lag unknown on 2\n"+
		"waiting: 1/2 partitions MIRRORING, lag 40 records, max lag 5000 ms, lag unknown on 1\n"+
		"waiting: 2/2 partitions MIRRORING, lag 15 records, max lag 1200 ms\n"+
		"waiting: 2/2 partitions MIRRORING, lag 0 records, max lag 0 ms\n"+
		"All 2 partitions of orders are MIRRORING, caught up to the source as of the start of the wait.\n", "")
	if n := calls(); n != 6 {
		t.Fatalf("%d DescribeMirrors, want 6 (one per step)", n)
	}
}

// TestStartWaitOlderBroker: a broker from before issue 33 sends no
// destination high watermark: its lag 0 ends the wait.
func TestStartWaitOlderBroker(t *testing.T) {
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyStartMirrorTopics, topicsHandler(nil, nil))
	b.Handle(mirrormsg.KeyDescribeMirrors, func(_ context.Context, req kmsg.Request) kmsg.Response {
		p := mirrormsg.NewDescribeMirrorsResponsePartitionDetail()
		p.State, p.SourceOffset, p.DestinationOffset, p.Lag, p.LagMs = "MIRRORING", 100, 100, 0, 0
		return ordersDescribed(req, p)
	})
	run(t, b, "start", "m1", "--topic", "orders", "--wait", "--timeout", "5s").expect(t, 0, ""+
		"TOPIC   RESULT\norders  OK\n"+
		"waiting: 1/1 partitions MIRRORING, lag 0 records, max lag 0 ms\n"+
		"All 1 partitions of orders are MIRRORING, caught up to the source as of the start of the wait.\n", "")
}

// TestStartWithoutWait: no --wait, no DescribeMirrors.
func TestStartWithoutWait(t *testing.T) {
	b, calls := startBroker(t, []pstate{{"PREPARING", -1, -1}})
	run(t, b, "start", "m1", "--topic", "orders").expect(t, 0, "TOPIC   RESULT\norders  OK\n", "")
	if n := calls(); n != 0 {
		t.Fatalf("%d DescribeMirrors without --wait", n)
	}
}

// TestStartWaitFailed: a FAILED partition ends the wait with exit 1 and
// the partitions' states.
func TestStartWaitFailed(t *testing.T) {
	b, _ := startBroker(t,
		[]pstate{{"MIRRORING", 3, 900}, {"PREPARING", -1, -1}},
		[]pstate{{"MIRRORING", 0, 0}, {"FAILED", -1, -1}},
	)
	run(t, b, "start", "m1", "--topic", "orders", "--wait").expect(t, 1, ""+
		"TOPIC   RESULT\norders  OK\n"+
		"waiting: 1/2 partitions MIRRORING, lag 3 records, max lag 900 ms, lag unknown on 1\n"+
		"waiting: 1/2 partitions MIRRORING, lag 0 records, max lag 0 ms, lag unknown on 1\n"+
		"Mirror m1: 1 topics, 2 partitions\n"+
		"TOPIC   PARTITION  STATE      SOURCE-HW  DEST-HW  DEST-LEO  LAG      C-LAG    LAG-MS   MEASURED  LME  RETRIES  SKIPPED  ERROR\n"+
		"orders  0          MIRRORING  100        100      100       0        0        0        -         -    0        0        -\n"+
		"orders  1          FAILED     -          -        -         unknown  unknown  unknown  -         -    2        0        source unreachable\n",
		"strait mirror start: partition(s) FAILED: orders-1\n")
}

// TestStartWaitTimeout: still behind at --timeout: exit 1 with the states
// and the last progress, in about the timeout.
func TestStartWaitTimeout(t *testing.T) {
	b, calls := startBroker(t, []pstate{{"MIRRORING", 7, 3000}})
	began := time.Now()
	r := run(t, b, "start", "m1", "--topic", "orders", "--wait", "--timeout", "700ms")
	took := time.Since(began)
	r.expect(t, 1, ""+
		"TOPIC   RESULT\norders  OK\n"+
		"waiting: 1/1 partitions MIRRORING, lag 7 records, max lag 3000 ms\n"+
		"Mirror m1: 1 topics, 1 partitions\n"+
		"TOPIC   PARTITION  STATE      SOURCE-HW  DEST-HW  DEST-LEO  LAG  C-LAG  LAG-MS  MEASURED  LME  RETRIES  SKIPPED  ERROR\n"+
		"orders  0          MIRRORING  100        93       93        7    7      3000    -         -    0        0        -\n",
		"strait mirror start: not every partition of orders was MIRRORING and caught up within --timeout 700ms"+
			" (1/1 partitions MIRRORING, lag 7 records, max lag 3000 ms)\n")
	if took < 700*time.Millisecond || took > 3*time.Second {
		t.Fatalf("took %v with --timeout 700ms", took)
	}
	if n := calls(); n < 2 {
		t.Fatalf("%d DescribeMirrors in 700ms, want polling", n)
	}
}

// TestEveryCommandHelp: --help on every subcommand prints its synopsis and
// flags to stdout and exits 0 without contacting a broker.
func TestEveryCommandHelp(t *testing.T) {
	for cmd, synopsis := range map[string]string{
		"create":   "NAME --source-bootstrap HOST:PORT[,HOST:PORT...] [--config key=value]...",
		"delete":   "NAME",
		"list":     "[--json]",
		"describe": "NAME [--json]",
		"start":    "NAME --topic T [--topic T2]... [--wait] [--dry-run [--json]] [--export-truncated DIR]",
		"stop":     "NAME (--topic T [--topic T2]... | --all) [--json] [--barrier-timeout DURATION] [--max-lag-ms N] [--max-lag-records N] [--force] [--offset-sync-timeout DURATION] [--require-offset-sync]",
		"pause":    "NAME --topic T [--topic T2]...",
		"resume":   "NAME --topic T [--topic T2]...",
	} {
		for _, h := range []string{"--help", "-h"} {
			r := run(t, nil, cmd, h)
			want := "usage: strait mirror " + cmd + " " + synopsis + "\n\nflags:\n"
			if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, want) ||
				!strings.Contains(r.stdout, "-bootstrap-server") || !strings.Contains(r.stdout, "-timeout") {
				t.Errorf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s", cmd, h, r.code, r.stdout, r.stderr)
			}
		}
	}
	if r := run(t, nil, "start", "--help"); !strings.Contains(r.stdout, "-wait") || !strings.Contains(r.stdout, "-topic TOPIC") ||
		!strings.Contains(r.stdout, "-dry-run") || !strings.Contains(r.stdout, "-export-truncated DIR") {
		t.Errorf("start --help does not list --wait, --topic, --dry-run and --export-truncated:\n%s", r.stdout)
	}
	// With NAME and flags given, --help still only prints usage.
	if r := run(t, nil, "start", "m1", "--topic", "t", "--wait", "--help"); r.code != 0 || !strings.HasPrefix(r.stdout, "usage: strait mirror start ") {
		t.Errorf("start m1 ... --help: %+v", r)
	}
}

// TestStartWaitTargetIsTheSourceAtTheStart: --wait waits for the
// destination's high watermark to reach the source's as measured after
// the wait began. A lag of 0 from a measurement older than the wait does
// not end it (the source may have moved since), and a source that keeps
// growing does not keep it going forever: once the destination's
// consumers can read what the source's could at the start, it is done.
func TestStartWaitTargetIsTheSourceAtTheStart(t *testing.T) {
	type step struct {
		srcHW, dstHW int64
		measured     time.Time
	}
	stale := time.Now().Add(-time.Minute)
	var mu sync.Mutex
	calls := 0
	steps := func() []step {
		now := time.Now().Add(time.Second)
		return []step{
			{100, 100, stale},  // lag 0, but measured before the wait
			{120, 110, now},    // the target: 120
			{130, 120, now},    // consumers read what the source had at the start
			{140, 100000, now}, // never reached if the wait did not stop above
		}
	}()
	b := admintest.NewBroker(t)
	b.Handle(mirrormsg.KeyStartMirrorTopics, topicsHandler(nil, nil))
	b.Handle(mirrormsg.KeyDescribeMirrors, func(_ context.Context, req kmsg.Request) kmsg.Response {
		mu.Lock()
		st := steps[min(calls, len(steps)-1)]
		calls++
		mu.Unlock()
		p := mirrormsg.NewDescribeMirrorsResponsePartitionDetail()
		p.State, p.SourceOffset, p.DestinationHighWatermark, p.DestinationOffset = "MIRRORING", st.srcHW, st.dstHW, st.dstHW
		p.Lag, p.LagMs, p.LagMeasuredAtMs = max(0, st.srcHW-st.dstHW), 0, st.measured.UnixMilli()
		return ordersDescribed(req, p)
	})
	run(t, b, "start", "m1", "--topic", "orders", "--wait", "--timeout", "8s").expect(t, 0, ""+
		"TOPIC   RESULT\norders  OK\n"+
		"waiting: 1/1 partitions MIRRORING, lag 0 records, max lag 0 ms\n"+
		"waiting: 1/1 partitions MIRRORING, lag 10 records, max lag 0 ms\n"+
		"All 1 partitions of orders are MIRRORING, caught up to the source as of the start of the wait.\n", "")
	mu.Lock()
	defer mu.Unlock()
	if calls != 3 {
		t.Fatalf("%d DescribeMirrors, want 3", calls)
	}
}
