package mirrorit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/admin"
	"github.com/strait-io/strait/mirror/admin/cli"
)

// TestMirrorStopLagGuard is issue 27's RPO guard: a stop refuses a topic
// whose lag, measured at the stop, is over the bound (the mirror config
// mirror.failover.max.lag.ms, or the request's --max-lag-ms /
// --max-lag-records) with POLICY_VIOLATION naming each partition with its
// lag and the bound, and leaves it mirrored (PAUSED here); --force stops
// it; a caught-up topic stops under the bound; a topic whose source is
// down (lag unknown) is refused even under a relaxed bound, and stops
// with --force. Describe and the metrics show the lag against the bound.
func TestMirrorStopLagGuard(t *testing.T) {
	t.Parallel()
	src, dst := startOne(t, "source"), startOne(t, "destination", brokertest.WithMetrics())
	p := newPair(t, 2*time.Minute, src, dst)
	const lagging, caught, down, partitions, behind = "rpo-lagging", "rpo-caught", "rpo-down", 2, 30
	const boundMs = 1000
	for _, topic := range []string{lagging, caught, down} {
		p.src.createTopic(t, p.ctx, topic, partitions)
		for part := range int32(partitions) {
			produceBatches(t, p, p.src, topic, part, 0, 10, 5, "before")
		}
	}
	p.createMirror(fmt.Sprintf("mirror.failover.max.lag.ms=%d", boundMs))
	p.start(lagging, caught, down)
	for _, topic := range []string{lagging, caught, down} {
		p.waitMirroring(topic, partitions, 30*time.Second)
	}

	p.pause(lagging)
	p.waitState(lagging, "PAUSED", partitions, 30*time.Second)
	for part := range int32(partitions) {
		produceBatches(t, p, p.src, lagging, part, 10, behind, 10, "behind")
	}
	// Describe and the metrics show the lag against the bound once the
	// first unmirrored records are older than it.
	p.waitFor(20*time.Second, "describe to show both partitions over the failover bound", func() string {
		ds, err := p.mirror.DescribeMirrors(p.ctx, mirrorName)
		if err != nil {
			return err.Error()
		}
		if b := ds[0].FailoverMaxLagMs; b == nil || *b != boundMs {
			return fmt.Sprintf("failover_max_lag_ms %v", b)
		}
		for _, td := range ds[0].Topics {
			for _, pd := range td.Partitions {
				if want := td.Name == lagging; pd.OverFailoverBound != want {
					return fmt.Sprintf("%s p%d: lag %d, %d ms, over_failover_bound %v", td.Name, pd.Partition, pd.Lag, pd.LagMs, pd.OverFailoverBound)
				}
			}
		}
		return ""
	})
	if got := describedColumn(t, p, "OVER-BOUND", lagging); strings.Join(got, ",") != "yes,yes" {
		t.Errorf("strait mirror describe: OVER-BOUND %q for %s, want yes on each partition", got, lagging)
	}
	p.waitFor(15*time.Second, "the metrics to count the partitions over the bound", func() string {
		m := mirrorMetrics(t, p.ctx, dst.one.MetricsAddr())
		if m["strait_mirror_failover_lag_bound_exceeded"] != partitions || m["strait_mirror_failover_max_lag_ms"] != boundMs {
			return fmt.Sprintf("failover_lag_bound_exceeded %v, failover_max_lag_ms %v", m["strait_mirror_failover_lag_bound_exceeded"],
				m["strait_mirror_failover_max_lag_ms"])
		}
		return ""
	})

	// Over the mirror config's bound: refused, named, still PAUSED.
	rs, err := p.mirror.StopMirrorTopics(p.ctx, mirrorName, lagging)
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, rs, lagging, partitions, func(o admin.PartitionLagOverBound) string {
		if o.Lag != behind || o.LagMs <= boundMs || o.MaxLagMs != boundMs || o.MaxLagRecords != -1 {
			return fmt.Sprintf("lag %d, %d ms; bound %d ms, %d records; want lag %d over %d ms", o.Lag, o.LagMs, o.MaxLagMs, o.MaxLagRecords, behind, boundMs)
		}
		return ""
	})
	// The CLI (the barrier stop, which pauses first and sends the bound
	// with its StopMirrorTopics): --max-lag-records (and the config's ms),
	// text and --json; refused, the topic stays paused (fail closed).
	var out, errb bytes.Buffer
	code := cli.Main(p.ctx, []string{"--bootstrap-server", p.dst.seeds()[0], "stop", mirrorName, "--topic", lagging, "--max-lag-records", "5"}, &out, &errb)
	p.logf("strait mirror stop --max-lag-records 5: exit %d\n%s%s", code, out.String(), errb.String())
	if code != 1 || !strings.Contains(errb.String(), "POLICY_VIOLATION") ||
		!strings.Contains(errb.String(), fmt.Sprintf("partition 0: %d records", behind)) ||
		!strings.Contains(errb.String(), fmt.Sprintf("partition 1: %d records", behind)) || !strings.Contains(errb.String(), "5 records, 1000 ms") ||
		!strings.Contains(errb.String(), "stay paused") {
		t.Errorf("strait mirror stop --max-lag-records 5: exit %d, want 1 naming both partitions, their lag and the bound\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	code = cli.Main(p.ctx, []string{"--bootstrap-server", p.dst.seeds()[0], "stop", mirrorName, "--topic", lagging, "--max-lag-records", "5", "--json"}, &out, &errb)
	var js cli.StopReport
	if err := json.Unmarshal(out.Bytes(), &js); err != nil || code != 1 || !js.BarrierReached || js.Stopped ||
		!strings.Contains(js.Error, "POLICY_VIOLATION") || len(js.LagOverBound) != partitions ||
		js.LagOverBound[0].Topic != lagging || js.LagOverBound[0].Lag != behind || js.LagOverBound[0].MaxLagRecords != 5 {
		t.Errorf("strait mirror stop --json: exit %d, %v\n%s%s", code, err, out.String(), errb.String())
	}
	if td := p.waitState(lagging, "PAUSED", partitions, 5*time.Second); td.Partitions[0].State != "PAUSED" {
		t.Fatalf("a refused stop changed %s: %s", lagging, formatPartitions(td))
	}

	// Under the bound (caught up): stopped.
	p.stop(caught)
	p.waitState(caught, "STOPPED", partitions, 30*time.Second)
	// --force through the CLI: stopped whatever the lag, the lag it
	// abandons in the report.
	out.Reset()
	errb.Reset()
	code = cli.Main(p.ctx, []string{"--bootstrap-server", p.dst.seeds()[0], "stop", mirrorName, "--topic", lagging, "--force", "--json"}, &out, &errb)
	js = cli.StopReport{}
	if err := json.Unmarshal(out.Bytes(), &js); err != nil || code != 0 || !js.Stopped || len(js.Partitions) != partitions ||
		js.Partitions[0].LagRecords != behind {
		t.Fatalf("strait mirror stop --force --json: exit %d, %v\n%s%s", code, err, out.String(), errb.String())
	}
	p.waitState(lagging, "STOPPED", partitions, 30*time.Second)

	// Source down: the lag is unknown, which no bound accepts, even one
	// relaxed by the request (10 minutes over the config's second).
	src.one.Stop(t)
	p.logf("source stopped")
	p.waitFor(30*time.Second, "describe to show "+down+"'s lag unknown", func() string {
		td, err := p.describe(down)
		if err != nil {
			return err.Error()
		}
		for _, pd := range td.Partitions {
			if !pd.LagUnknown {
				return fmt.Sprintf("p%d: lag %d", pd.Partition, pd.Lag)
			}
		}
		return ""
	})
	rs, err = p.mirror.StopMirrorTopicsWith(p.ctx, mirrorName, admin.StopOptions{MaxLagMs: 600_000, MaxLagRecords: -1}, down)
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, rs, down, partitions, func(o admin.PartitionLagOverBound) string {
		if o.Lag != -1 || o.MaxLagMs != 600_000 {
			return fmt.Sprintf("lag %d, bound %d ms; want unknown (-1) against 600000", o.Lag, o.MaxLagMs)
		}
		return ""
	})
	if r := rs[0]; !strings.Contains(r.Message, "partition 0: unknown; partition 1: unknown") {
		t.Errorf("refusal message does not say the lag is unknown: %s", r.Message)
	}
	rs, err = p.mirror.StopMirrorTopicsWith(p.ctx, mirrorName, admin.StopOptions{MaxLagMs: -1, MaxLagRecords: -1, Force: true}, down)
	if err != nil || len(rs.Failed()) > 0 {
		t.Fatalf("stop --force %s with the source down: %v %+v", down, err, rs)
	}
	p.waitState(down, "STOPPED", partitions, 30*time.Second)
}

// checkRefused checks that rs refuses topic with POLICY_VIOLATION, naming
// every partition (bad says what is wrong with one, "" if nothing).
func checkRefused(t *testing.T, rs admin.TopicResults, topic string, partitions int, bad func(admin.PartitionLagOverBound) string) {
	t.Helper()
	if len(rs) != 1 || rs[0].Topic != topic || !errors.Is(rs[0].Err, kerr.PolicyViolation) {
		t.Fatalf("stop %s: %+v; want POLICY_VIOLATION", topic, rs)
	}
	r := rs[0]
	if len(r.LagOverBound) != partitions {
		t.Fatalf("stop %s refused naming %d partitions, want %d: %+v (%s)", topic, len(r.LagOverBound), partitions, r.LagOverBound, r.Message)
	}
	for i, o := range r.LagOverBound {
		if o.Partition != int32(i) {
			t.Errorf("partition %d named as %d", i, o.Partition)
		}
		if why := bad(o); why != "" {
			t.Errorf("%s p%d: %s", topic, o.Partition, why)
		}
		if !strings.Contains(r.Message, fmt.Sprintf("partition %d:", o.Partition)) {
			t.Errorf("refusal message does not name partition %d: %s", o.Partition, r.Message)
		}
	}
}
