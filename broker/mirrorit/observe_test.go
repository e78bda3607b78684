package mirrorit

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strait-io/strait/broker/brokertest"
)

// TestMirrorObserveLag: a 1+1 pair whose destination fetches one batch per
// request (replica.fetch.max.bytes=1), so catching up takes hundreds of
// fetches. Caught up, describe's LagMs and strait_mirror_lag_ms are 0.
// Batches written while the topic is PAUSED make it fall behind once
// resumed: while it catches up, describe shows Lag > 0 with a LagMs that
// is the age of data written before the resume (at least the time since
// the last batch was written, at most the time since the first), and the
// metric reports it; caught up again, both are 0.
func TestMirrorObserveLag(t *testing.T) {
	t.Parallel()
	dst := startOne(t, "destination", brokertest.WithMetrics(),
		brokertest.WithConfig("replica.fetch.max.bytes=1", "replica.fetch.response.max.bytes=1"))
	p := newPair(t, 2*time.Minute, startOne(t, "source"), dst)
	const topic, before, paused = "observed", 20, 600
	p.src.createTopic(t, p.ctx, topic, 1)
	produceBatches(t, p, p.src, topic, 0, 0, before, 10, "before")
	p.createMirror()
	p.start(topic)
	p.waitMirroring(topic, 1, 30*time.Second)
	td, err := p.describe(topic)
	if err != nil {
		t.Fatal(err)
	}
	if pd := td.Partitions[0]; pd.Lag != 0 || pd.LagMs != 0 {
		t.Fatalf("caught up: lag %d, lag ms %d; want 0 and 0", pd.Lag, pd.LagMs)
	}
	if v, ok := mirrorMetric(t, p.ctx, dst.one.MetricsAddr(), "strait_mirror_lag_ms"); !ok || v != 0 {
		t.Fatalf("caught up: strait_mirror_lag_ms = %v (present %v), want 0", v, ok)
	}

	p.pause(topic)
	p.waitState(topic, "PAUSED", 1, 30*time.Second)
	firstWritten := time.Now()
	produceBatches(t, p, p.src, topic, 0, before, paused, 1, "paused")
	lastWritten := time.Now()
	p.logf("%d one-record batches written while PAUSED in %v", paused, lastWritten.Sub(firstWritten))
	time.Sleep(200 * time.Millisecond) // every batch is at least this old

	p.resume(topic)
	var behind, metricBehind, samples int
	var minLagMs, maxLagMs int64 = -1, -1
	for {
		if p.ctx.Err() != nil {
			t.Fatalf("not caught up: %v", p.ctx.Err())
		}
		asked := time.Now()
		td, err := p.describe(topic)
		answered := time.Now()
		if err != nil || len(td.Partitions) != 1 {
			continue
		}
		pd := td.Partitions[0]
		samples++
		if pd.State == "MIRRORING" && pd.Lag == 0 && pd.DestinationLogEndOffset == before+paused {
			if pd.LagMs != 0 {
				t.Fatalf("caught up: lag ms %d, want 0", pd.LagMs)
			}
			break
		}
		if pd.Lag > 0 && pd.LagMs >= 0 {
			behind++
			lo, hi := asked.Sub(lastWritten).Milliseconds()-1, answered.Sub(firstWritten).Milliseconds()+1
			if pd.LagMs < lo || pd.LagMs > hi {
				t.Errorf("behind by %d records: lag ms %d, want within [%d, %d]", pd.Lag, pd.LagMs, lo, hi)
			}
			if minLagMs < 0 || pd.LagMs < minLagMs {
				minLagMs = pd.LagMs
			}
			maxLagMs = max(maxLagMs, pd.LagMs)
			if v, ok := mirrorMetric(t, p.ctx, dst.one.MetricsAddr(), "strait_mirror_lag_ms"); ok && v > 0 {
				metricBehind++
			}
		}
	}
	p.logf("caught up after %d describes: %d behind (lag ms %d..%d), %d metric scrapes > 0", samples, behind,
		minLagMs, maxLagMs, metricBehind)
	if behind == 0 {
		t.Fatalf("no describe showed the partition behind with a lag in ms (%d describes)", samples)
	}
	if minLagMs < 200 {
		t.Errorf("lag ms %d while behind: less than the 200 ms every batch waited before the resume", minLagMs)
	}
	if metricBehind == 0 {
		t.Errorf("strait_mirror_lag_ms never > 0 while describe showed the partition behind")
	}
	p.waitMirroring(topic, 1, 30*time.Second)
	if v, ok := mirrorMetric(t, p.ctx, dst.one.MetricsAddr(), "strait_mirror_lag_ms"); !ok || v != 0 {
		t.Fatalf("caught up again: strait_mirror_lag_ms = %v (present %v), want 0", v, ok)
	}
	if v, ok := mirrorMetric(t, p.ctx, dst.one.MetricsAddr(), "strait_mirror_lag_records"); !ok || v != 0 {
		t.Fatalf("caught up again: strait_mirror_lag_records = %v (present %v), want 0", v, ok)
	}
	p.checkIdentity(topic, before+paused)
}

// mirrorMetrics are the test mirror's samples, name{mirror="m1"} value, on
// the Prometheus endpoint at addr, by name.
func mirrorMetrics(t *testing.T, ctx context.Context, addr string) map[string]float64 {
	t.Helper()
	if addr == "" {
		t.Fatal("the broker has no metrics listener")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	suffix := fmt.Sprintf("{mirror=%q}", mirrorName)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasSuffix(name, suffix) {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			t.Fatalf("metrics: %q: %v", sc.Text(), err)
		}
		out[strings.TrimSuffix(name, suffix)] = f
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("metrics: %v", err)
	}
	return out
}

// mirrorMetric is one of mirrorMetrics, and whether it is there.
func mirrorMetric(t *testing.T, ctx context.Context, addr, name string) (float64, bool) {
	t.Helper()
	v, ok := mirrorMetrics(t, ctx, addr)[name]
	return v, ok
}
