package bench

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/mirror/admin"
)

// copier stands in for a destination's mirror RPCs between two kfakes:
// StartMirrorTopics creates the destination topic and starts copying the
// source's records into the same partitions, in order, so the offsets
// match as a mirror's do. It lets the mirror phases' timing and lag
// sampling be tested without a broker that mirrors.
type copier struct {
	src, dst   []string
	partitions int32
	// state is what DescribeMirrors reports for every partition; stalled
	// copies nothing.
	state   string
	stalled bool

	created map[string]string
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func (c *copier) CreateMirror(_ context.Context, name string, configs map[string]string) error {
	c.created = configs
	return nil
}

func (c *copier) StartMirrorTopics(ctx context.Context, mirror string, topics ...string) (admin.TopicResults, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.dst...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var rs admin.TopicResults
	for _, topic := range topics {
		resp, err := kadm.NewClient(cl).CreateTopic(ctx, c.partitions, 1, nil, topic)
		if err == nil {
			err = resp.Err
		}
		rs = append(rs, admin.TopicResult{Topic: topic, Err: err})
		if err == nil && !c.stalled {
			cctx, cancel := context.WithCancel(context.Background())
			c.cancel = cancel
			c.wg.Go(func() { c.copy(cctx, topic) })
		}
	}
	return rs, nil
}

// copyEvery is how often the copier takes what the source has.
const copyEvery = 50 * time.Millisecond

func (c *copier) copy(ctx context.Context, topic string) {
	in, err := kgo.NewClient(kgo.SeedBrokers(c.src...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(copyEvery))
	if err != nil {
		return
	}
	defer in.Close()
	out, err := kgo.NewClient(kgo.SeedBrokers(c.dst...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return
	}
	defer out.Close()
	// A poll every copyEvery at most, as the comments on the lag
	// assertions count on: left to itself the copier copies within a
	// millisecond or two of each record, and the lag samples of a fast
	// machine all found nothing missing (seen in make test).
	tick := time.NewTicker(copyEvery)
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		fs := in.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			out.Produce(ctx, &kgo.Record{Topic: topic, Partition: r.Partition, Value: r.Value, Timestamp: r.Timestamp}, nil)
		})
		_ = out.Flush(ctx)
	}
}

func (c *copier) DescribeMirrors(_ context.Context, names ...string) ([]admin.MirrorDescription, error) {
	td := admin.TopicDescription{Name: "mirrored"}
	for p := range c.partitions {
		td.Partitions = append(td.Partitions, admin.PartitionDescription{Partition: p, State: c.state, LastError: "source said no"})
	}
	return []admin.MirrorDescription{{Name: names[0], Topics: []admin.TopicDescription{td}}}, nil
}

func (c *copier) Close() {
	if c.cancel != nil {
		c.cancel()
	}
	c.wg.Wait()
}

// copierRun fills a source kfake with records and opens a mirror run on
// it whose destination is another kfake fed by a copier.
func copierRun(t *testing.T, cp *copier, records int64) (m *mirrorRun, start, end map[int32]int64) {
	t.Helper()
	ctx := ctxT(t)
	src, dst := startKfake(t), startKfake(t)
	cfg := &MirrorConfig{
		ProducerConfig: ProducerConfig{Topic: "mirrored", Partitions: 3, Acks: "1", RecordSize: 1024},
		SteadyDuration: time.Second, SampleEvery: 100 * time.Millisecond, StallTimeout: 2 * time.Second,
	}
	cfg.fill()
	cp.src, cp.dst, cp.partitions = src.Addrs, dst.Addrs, cfg.Partitions
	pc := cfg.produce(phaseSourceProduce, labelSource, src, cfg.Topic)
	pc.Bytes, pc.Records = 0, records
	if _, err := RunProduce(ctx, pc); err != nil {
		t.Fatal(err)
	}
	var err error
	if start, err = offsets(ctx, seedOpts(src.Addrs, nil), cfg.Topic, true); err != nil {
		t.Fatal(err)
	}
	if end, err = offsets(ctx, seedOpts(src.Addrs, nil), cfg.Topic, false); err != nil {
		t.Fatal(err)
	}
	m, err = openMirrorRun(ctx, cfg, &mirrorPair{source: src, dest: dst}, cp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.close)
	if cp.created["bootstrap.servers"] != src.Addrs[0] {
		t.Fatalf("mirror created with %v, want bootstrap.servers %s", cp.created, src.Addrs[0])
	}
	return m, start, end
}

// TestMirrorPhasesWithCopier runs phases 3 and 4 against the copier: the
// catch-up counts every record, the steady state produces its schedule,
// sees it all mirrored and samples the lag at each period.
func TestMirrorPhasesWithCopier(t *testing.T) {
	cp := &copier{state: "MIRRORING"}
	m, start, end := copierRun(t, cp, 600)
	ctx := ctxT(t)
	catch, err := m.catchUp(ctx, start, end)
	if err != nil {
		t.Fatal(err)
	}
	if catch.Workload != phaseMirrorCatchUp || catch.Records != 600 || catch.Bytes != 600*1024 || catch.MiBPerSec <= 0 ||
		m.startup <= 0 || m.startup > catch.Elapsed {
		t.Fatalf("catch-up %+v, startup %v: want 600 records", catch, m.startup)
	}
	if got := m.stateLine(); got != "MIRRORING×3" {
		t.Errorf("state line %q, want MIRRORING×3", got)
	}

	const rate = 1000.0
	st, lag, prod, err := m.steady(ctx, end, rate)
	if err != nil {
		t.Fatal(err)
	}
	if st.Workload != phaseMirrorSteady || st.Produced != 1000 || st.Records != 1000 || st.Errors != 0 {
		t.Fatalf("steady %+v: want the 1000 records due in 1s at 1000/s produced and mirrored", st)
	}
	var sum MirrorSummary
	lag.fill(&sum)
	// At most one sample per period while the producer sends (about 10;
	// a loaded machine slows the listings, and the ticker drops ticks).
	if most := int(prod.elapsed/(100*time.Millisecond)) + 1; sum.Samples < 2 || sum.Samples > most || !spaced(sum.LagSeries, 100*time.Millisecond) || sum.LagSampleErrors != 0 || lag.unresolved != 0 || st.Latency.Count != uint64(sum.Samples) {
		t.Fatalf("%d samples (%d failed, %d unresolved) in %v: want 2 to about 10, in order", sum.Samples, sum.LagSampleErrors, lag.unresolved, prod.elapsed)
	}
	// Some lag, seen since the records' timestamps: a sample can find
	// the lagging records sent but not yet acknowledged (their answer on
	// its way, or written with the next answer), when their age since
	// the acknowledgement is not known and counts 0.
	if sum.StampLagMax <= 0 || sum.LagMax > 5*time.Second || sum.LagRecordsMax <= 0 || sum.StampLagMax < sum.LagMax {
		t.Errorf("lag %+v: the copier polls every 50 ms, so some lag, and not seconds of it", sum)
	}
	if prod.hist.Count() != 1000 || prod.misplaced.Load() != 0 || prod.elapsed < 999*time.Millisecond-paceSlack {
		t.Errorf("producer: %d latencies, %d misplaced, sent in %v; want 1000, none, about 1s", prod.hist.Count(), prod.misplaced.Load(), prod.elapsed)
	}
	after, err := offsets(ctx, seedOpts(m.pair.dest.Addrs, nil), "mirrored", false)
	if err != nil {
		t.Fatal(err)
	}
	if produced(start, after) != 1600 {
		t.Errorf("destination holds %v, want 1600 records", after)
	}
}

// TestMirrorCatchUpFails: a FAILED partition ends the catch-up with its
// error, and a mirror that copies nothing ends it at the stall timeout.
func TestMirrorCatchUpFails(t *testing.T) {
	for _, tc := range []struct {
		cp   *copier
		want string
	}{
		{&copier{state: "FAILED", stalled: true}, "mirror partitions FAILED: mirrored[0]: source said no"},
		{&copier{state: "PREPARING", stalled: true}, "the destination gained nothing for 2s: at [0:0 1:0 2:0] of"},
	} {
		m, start, end := copierRun(t, tc.cp, 30)
		res, err := m.catchUp(ctxT(t), start, end)
		if err == nil || !strings.Contains(err.Error(), tc.want) || res.Records != 0 {
			t.Errorf("state %s: %d records, error %v; want none and %q", tc.cp.state, res.Records, err, tc.want)
		}
	}
}

// spaced reports whether the samples are in order and the first came a
// period or more after the start: a time.Ticker never fires early (later
// samples can come closer together: a tick read late is followed by one on
// schedule, and At is taken after the listings answered).
func spaced(series []LagPoint, period time.Duration) bool {
	for i := 1; i < len(series); i++ {
		if series[i].At <= series[i-1].At {
			return false
		}
	}
	return len(series) == 0 || series[0].At >= period
}
