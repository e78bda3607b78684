package mirrorit

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/broker/brokertest"
	"github.com/strait-io/strait/mirror/admin/cli"
)

// TestMirrorCommittedLag: the committed lag (source LSO − destination
// LSO: what read_committed consumers of the source read that those of the
// destination cannot yet) is in describe's text table (C-LAG) and in the
// metrics (strait_mirror_lag_committed_records), apart from the lag in
// records: a transaction left open on the source while the mirror is
// paused holds the source's LSO back, not its HW. Once resumed, the open
// transaction is mirrored too and both lags read 0.
func TestMirrorCommittedLag(t *testing.T) {
	t.Parallel()
	src, dst := startOne(t, "source"), startOne(t, "destination", brokertest.WithMetrics())
	p := newPair(t, 2*time.Minute, src, dst)
	const topic, partitions, before, plain, open = "committedlag", 2, 10, 5, 8
	p.src.createTopic(t, p.ctx, topic, partitions)
	w := &txnWorkload{t: t, ctx: p.ctx, src: p.src, topic: topic, partitions: partitions, committed: map[int32][]string{}}
	w.plain("before", before)
	p.createMirror()
	p.start(topic)
	p.waitMirroring(topic, partitions, 30*time.Second)

	p.pause(topic)
	p.waitState(topic, "PAUSED", partitions, 30*time.Second)
	w.plain("plain", plain)
	txn := w.txn("open", open) // left open: the source LSO stays at its first record
	defer txn.Close()
	const lag, committed = plain + open, plain
	p.waitFor(15*time.Second, fmt.Sprintf("describe to show a lag of %d and a committed lag of %d", lag, committed), func() string {
		td, err := p.describe(topic)
		if err != nil {
			return err.Error()
		}
		for _, pd := range td.Partitions {
			if pd.Lag != lag || pd.CommittedLag != committed {
				return fmt.Sprintf("p%d: lag %d, committed lag %d", pd.Partition, pd.Lag, pd.CommittedLag)
			}
		}
		return ""
	})
	if got := describedColumn(t, p, "C-LAG", topic); !slices.Equal(got, []string{fmt.Sprint(committed), fmt.Sprint(committed)}) {
		t.Errorf("strait mirror describe: C-LAG %q, want %d on each partition", got, committed)
	}
	p.waitFor(15*time.Second, "the metrics to show the committed lag", func() string {
		m := mirrorMetrics(t, p.ctx, dst.one.MetricsAddr())
		if m["strait_mirror_lag_records"] != partitions*lag || m["strait_mirror_lag_committed_records"] != partitions*committed {
			return fmt.Sprintf("lag_records %v, lag_committed_records %v; want %d and %d", m["strait_mirror_lag_records"],
				m["strait_mirror_lag_committed_records"], partitions*lag, partitions*committed)
		}
		return ""
	})

	p.resume(topic)
	p.waitFor(30*time.Second, "both lags to read 0 once resumed", func() string {
		td, err := p.describe(topic)
		if err != nil {
			return err.Error()
		}
		for _, pd := range td.Partitions {
			if pd.State != "MIRRORING" || pd.Lag != 0 || pd.CommittedLag != 0 {
				return fmt.Sprintf("p%d %s: lag %d, committed lag %d", pd.Partition, pd.State, pd.Lag, pd.CommittedLag)
			}
		}
		m := mirrorMetrics(t, p.ctx, dst.one.MetricsAddr())
		if m["strait_mirror_lag_records"] != 0 || m["strait_mirror_lag_committed_records"] != 0 {
			return fmt.Sprintf("metrics: lag_records %v, lag_committed_records %v", m["strait_mirror_lag_records"],
				m["strait_mirror_lag_committed_records"])
		}
		return ""
	})
	if got := describedColumn(t, p, "C-LAG", topic); !slices.Equal(got, []string{"0", "0"}) {
		t.Errorf("strait mirror describe once resumed: C-LAG %q, want 0 on each partition", got)
	}
	if err := txn.EndTransaction(p.ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
}

// describedColumn runs `strait mirror describe` and returns the column
// named name of topic's rows, in partition order.
func describedColumn(t *testing.T, p *pair, name, topic string) []string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main(p.ctx, []string{"--bootstrap-server", p.dst.seeds()[0], "describe", mirrorName}, &out, &errb); code != 0 {
		t.Fatalf("strait mirror describe: exit %d\n%s%s", code, out.String(), errb.String())
	}
	p.logf("strait mirror describe:\n%s", out.String())
	col := -1
	var got []string
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "TOPIC":
			col = slices.Index(f, name)
		case col >= 0 && len(f) > col && f[0] == topic:
			got = append(got, f[col])
		}
	}
	if col < 0 {
		t.Fatalf("strait mirror describe has no %s column:\n%s", name, out.String())
	}
	return got
}
