package manager

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/replication/fetcher"
	"github.com/strait-io/strait/storage"
)

// gatedEndPoint lets fetches through until one brought data for tp, then
// holds every later fetch until open is closed: the mirror stays behind by
// what that fetch did not bring.
type gatedEndPoint struct {
	fetcher.LeaderEndPoint
	tp   storage.TopicPartition
	open chan struct{}

	mu     sync.Mutex
	gotOne bool
}

func (g *gatedEndPoint) Fetch(ctx context.Context, req *fetcher.FetchRequest) (map[storage.TopicPartition]*fetcher.FetchData, error) {
	g.mu.Lock()
	hold := g.gotOne
	g.mu.Unlock()
	if hold {
		select {
		case <-g.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	out, err := g.LeaderEndPoint.Fetch(ctx, req)
	if d, ok := out[g.tp]; ok && len(d.RecordBatches) > 0 {
		g.mu.Lock()
		g.gotOne = true
		g.mu.Unlock()
	}
	return out, err
}

// TestLagMs: the source holds three one-record batches written 60, 50 and
// 40 s ago; the fetches bring one batch each and the second is held.
// Behind by two records (MIRRORING, the destination stuck), the
// partition's lag in milliseconds is the age of the first record not
// mirrored, the one at the destination high watermark, 50 s (not the 60 s
// of the mirrored one, the bound the fetcher's answers gave): the
// manager's own measurements read it from the source. In PartitionStatus
// and as the mirror's max in Stats; caught up, 0.
func TestLagMs(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 25*time.Second)
	defer cancel()
	kc, id := startKfake(t, "lagged", 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("lagged"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	start := time.Now()
	for _, ago := range []time.Duration{60 * time.Second, 50 * time.Second, 40 * time.Second} {
		r := &kgo.Record{Value: []byte("v"), Timestamp: start.Add(-ago)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t, kc.ListenAddrs(), "lagged", id, 1, 0, func(c *Config) { c.FetchPartitionMaxBytes = 1 })
	gate := &gatedEndPoint{tp: e.tp(0), open: make(chan struct{})}
	e.mgr.wrapEndPoint = func(ep fetcher.LeaderEndPoint) fetcher.LeaderEndPoint {
		gate.LeaderEndPoint = ep
		return gate
	}
	e.mgr.Start(ctx)

	// The age of the record at the destination HW, written 50 s before
	// start: +1 as the timestamps are whole milliseconds, start is not.
	exact := func(ms int64) bool { return ms >= 50_000 && ms <= 50_001+time.Since(start).Milliseconds() }
	var ps PartitionStatus
	waitFor(t, 15*time.Second, func() string { return fmt.Sprintf("behind by 2, 50 s old: %+v", ps) }, func() bool {
		ps, _ = statusOf(e.mgr, e.tp(0))
		return ps.DestinationLogEndOffset == 1 && ps.Lag == 2 && exact(ps.LagMs)
	})
	st := e.mgr.Stats().Mirrors["m"]
	if !exact(st.LagMsMax) || st.LagMax != 2 {
		t.Fatalf("behind: stats LagMsMax %d LagMax %d, want about 50000 and 2", st.LagMsMax, st.LagMax)
	}

	close(gate.open)
	waitFor(t, 15*time.Second, func() string { return fmt.Sprintf("caught up: %+v", ps) }, func() bool {
		ps, _ = statusOf(e.mgr, e.tp(0))
		return ps.DestinationLogEndOffset == 3 && ps.Lag == 0
	})
	if ps.LagMs != 0 {
		t.Fatalf("caught up: LagMs %d, want 0", ps.LagMs)
	}
	if st := e.mgr.Stats().Mirrors["m"]; st.LagMsMax != 0 || st.LagMax != 0 {
		t.Fatalf("caught up: stats LagMsMax %d LagMax %d, want 0 and 0", st.LagMsMax, st.LagMax)
	}
}
