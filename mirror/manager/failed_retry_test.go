package manager

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/mirror/partition"
	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// onceCorrupting corrupts one fetch answer for its partition while armed,
// then disarms: a failure the retry gets past.
type onceCorrupting struct {
	*corruptingEndPoint
	armed *atomic.Bool
}

func (o *onceCorrupting) Fetch(ctx context.Context, req *fetcher.FetchRequest) (map[storage.TopicPartition]*fetcher.FetchData, error) {
	if !o.armed.Load() {
		return o.corruptingEndPoint.LeaderEndPoint.Fetch(ctx, req)
	}
	before := o.flipped.Load()
	out, err := o.corruptingEndPoint.Fetch(ctx, req)
	if o.flipped.Load() > before {
		o.armed.Store(false)
	}
	return out, err
}

// TestFailedRetryKeepsMirroredLog: a partition that fails while MIRRORING
// (a corrupt batch) is retried without emptying its log: the retry's
// PREPARING record keeps PrevState MIRRORING, nothing is truncated (the one
// full truncation is the first start's, of an empty log), and the mirror
// catches up byte for byte from where the log ended.
func TestFailedRetryKeepsMirroredLog(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 25*time.Second)
	defer cancel()
	kc, id := startKfake(t, "events", 1)
	seeds := kc.ListenAddrs()
	produce(t, ctx, seeds, "events", 1, 100, kgo.NoCompression())
	e := newEnv(t, seeds, "events", id, 1, 0)
	var armed atomic.Bool
	e.mgr.wrapEndPoint = func(ep fetcher.LeaderEndPoint) fetcher.LeaderEndPoint {
		return &onceCorrupting{corruptingEndPoint: &corruptingEndPoint{LeaderEndPoint: ep, tp: e.tp(0)}, armed: &armed}
	}
	e.mgr.Start(ctx)
	hw := func() int64 { return kc.PartitionInfo("events", 0).HighWatermark }
	e.waitCaughtUp(hw, 0, partition.StateMirroring)
	before := e.dest.snapshot(e.tp(0))
	mirroredEnd := before.log.LogEndOffset()

	armed.Store(true)
	produce(t, ctx, seeds, "events", 1, 50, kgo.NoCompression())
	waitFor(t, 15*time.Second, func() string { return "records " + e.st.states(e.key(0)) }, func() bool {
		return strings.Contains(e.st.states(e.key(0)), "FAILED PREPARING MIRRORING")
	})
	e.waitCaughtUp(hw, 0, partition.StateMirroring)

	if got := e.st.states(e.key(0)); got != "PREPARING MIRRORING FAILED PREPARING MIRRORING" {
		t.Errorf("records %q, want one failure and one retry", got)
	}
	e.st.mu.Lock()
	hist := e.st.history[e.key(0)]
	e.st.mu.Unlock()
	if retry := hist[3]; retry.PrevState != partition.StateMirroring {
		t.Errorf("the retry's PREPARING %s, want PrevState MIRRORING", retry)
	}
	after := e.dest.snapshot(e.tp(0))
	if after.fullTruncs != before.fullTruncs || after.truncations != before.truncations {
		t.Errorf("the retry truncated: full truncations %d → %d, truncations %d → %d (log end was %d)",
			before.fullTruncs, after.fullTruncs, before.truncations, after.truncations, mirroredEnd)
	}
	if start := after.log.LogStartOffset(); start != 0 {
		t.Errorf("log start %d after the retry, want 0", start)
	}
	src := sourceBatches(t, ctx, kc, "events", 0, id)
	if count, mismatches := compareLogs(src, localBatches(t, e.dest.local(e.tp(0)).log)); count != len(src) || mismatches != 0 {
		t.Errorf("%d batches, source %d, %d mismatches", count, len(src), mismatches)
	}
	t.Logf("mirrored end %d before the failure, %d after the retry", mirroredEnd, after.log.LogEndOffset())
}
