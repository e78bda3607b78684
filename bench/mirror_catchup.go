package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/mirror/admin"
)

// Poll periods of the mirror's progress: the destination's end offsets
// (the catch-up ends at the first poll that sees them all reached, so the
// period bounds the timing error), and DescribeMirrors (partition states
// and errors, for the progress line and to fail fast on FAILED).
const (
	mirrorPollEvery     = 100 * time.Millisecond
	mirrorDescribeEvery = 500 * time.Millisecond
)

// mirrorRun is the mirror of one run: created on the destination with the
// source as its bootstrap, and clients listing both sides' offsets.
type mirrorRun struct {
	cfg  *MirrorConfig
	pair *mirrorPair
	adm  mirrorAdmin
	src  *kadm.Client
	dst  *kadm.Client

	startup    time.Duration // StartMirrorTopics to the first mirrored record
	sourceCost *BrokerCost   // the source's cost over the catch-up
	state      atomic.Pointer[string]
}

// mirrorAdmin is what the run asks of the destination's mirror RPCs:
// *admin.Client, or a stand-in in tests.
type mirrorAdmin interface {
	CreateMirror(ctx context.Context, name string, configs map[string]string) error
	StartMirrorTopics(ctx context.Context, mirror string, topics ...string) (admin.TopicResults, error)
	DescribeMirrors(ctx context.Context, names ...string) ([]admin.MirrorDescription, error)
	Close()
}

// newMirrorRun creates the mirror (CreateMirror, KIP-1279's
// createClusterMirror) with bootstrap.servers the source node.
func newMirrorRun(ctx context.Context, cfg *MirrorConfig, pair *mirrorPair) (*mirrorRun, error) {
	adm, err := admin.NewClient(pair.dest.Addrs)
	if err != nil {
		return nil, fmt.Errorf("bench: mirror admin client: %w", err)
	}
	return openMirrorRun(ctx, cfg, pair, adm)
}

// openMirrorRun is newMirrorRun with the admin client given.
func openMirrorRun(ctx context.Context, cfg *MirrorConfig, pair *mirrorPair, adm mirrorAdmin) (*mirrorRun, error) {
	m := &mirrorRun{cfg: cfg, pair: pair, adm: adm}
	for _, side := range []struct {
		addrs []string
		to    **kadm.Client
	}{{pair.source.Addrs, &m.src}, {pair.dest.Addrs, &m.dst}} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(side.addrs...))
		if err != nil {
			m.close()
			return nil, fmt.Errorf("bench: admin client: %w", err)
		}
		*side.to = kadm.NewClient(cl)
	}
	configs := map[string]string{"bootstrap.servers": strings.Join(pair.source.Addrs, ",")}
	if err := m.adm.CreateMirror(ctx, cfg.MirrorName, configs); err != nil {
		m.close()
		return nil, fmt.Errorf("bench: %w", err)
	}
	return m, nil
}

func (m *mirrorRun) close() {
	if m.adm != nil {
		m.adm.Close()
	}
	for _, c := range []*kadm.Client{m.src, m.dst} {
		if c != nil {
			c.Close()
		}
	}
}

// catchUp starts mirroring the topic, which holds start..end on the
// source, and times it until the destination's end offsets reach end:
// phase 3. Bytes are mirrored records × RecordSize (every value has that
// size), counted like the other phases' value bytes.
func (m *mirrorRun) catchUp(ctx context.Context, start, end map[int32]int64) (Result, error) {
	res := Result{Workload: phaseMirrorCatchUp, Broker: labelMirror}
	dstCost, err := startCost(m.cfg.Proc, m.pair.dest.PID)
	if err != nil {
		return res, err
	}
	srcCost, err := startCost(m.cfg.Proc, m.pair.source.PID)
	if err != nil {
		return res, err
	}
	var done atomic.Int64
	size := int64(m.cfg.RecordSize)
	mon := startMonitor(m.cfg.Progress, costMeters{dstCost, srcCost}, func(el time.Duration) string {
		n := done.Load()
		return rateLine(labelMirror, "catch-up", el, n, n*size) + "  " + m.stateLine()
	})
	defer mon.end()

	t0 := time.Now()
	if err := m.start(ctx); err != nil {
		return res, err
	}
	finish, err := m.waitFor(ctx, start, end, func(n int64, at time.Time) {
		if m.startup == 0 && n > 0 {
			m.startup = at.Sub(t0)
		}
		done.Store(n)
	})
	res.Records = done.Load()
	res.Bytes = res.Records * size
	res.finish(finish.Sub(t0))
	if c, cerr := dstCost.finish(res.Bytes); cerr == nil {
		res.Cost = c
	} else if err == nil {
		err = cerr
	}
	if c, cerr := srcCost.finish(res.Bytes); cerr == nil {
		m.sourceCost = c
	} else if err == nil {
		err = cerr
	}
	if err != nil {
		return res, fmt.Errorf("bench: mirror catch-up: %w", err)
	}
	return res, nil
}

// start starts mirroring the topic (StartMirrorTopics, which creates the
// destination topic from the source's).
func (m *mirrorRun) start(ctx context.Context) error {
	rs, err := m.adm.StartMirrorTopics(ctx, m.cfg.MirrorName, m.cfg.Topic)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if f := rs.Failed(); len(f) > 0 {
		return fmt.Errorf("bench: StartMirrorTopics %s %s: %w: %s", m.cfg.MirrorName, f[0].Topic, f[0].Err, f[0].Detail())
	}
	if miss := rs.Missing([]string{m.cfg.Topic}); len(miss) > 0 {
		return fmt.Errorf("bench: StartMirrorTopics %s: no result for %v", m.cfg.MirrorName, miss)
	}
	return nil
}

// waitFor polls the destination's end offsets until every partition
// reached target, calling progress with the records mirrored past from
// (and the time of the poll) each time it grew. It returns the time of the poll that saw target
// reached. It fails when a partition is FAILED, when nothing was gained for
// StallTimeout, or when ctx ends.
func (m *mirrorRun) waitFor(ctx context.Context, from, target map[int32]int64, progress func(int64, time.Time)) (time.Time, error) {
	var (
		last     int64 = -1
		gained         = time.Now()
		lastErr  error
		describe time.Time
	)
	tick := time.NewTicker(mirrorPollEvery)
	defer tick.Stop()
	for {
		dst, err := m.endOffsets(ctx, m.dst)
		now := time.Now()
		if err != nil {
			lastErr = err
		}
		var n int64
		for p, o := range dst {
			n += max(0, o-from[p])
		}
		if n > last {
			last, gained = n, now
			progress(n, now)
		}
		if reachedAll(dst, target) {
			return now, nil
		}
		if now.Sub(describe) >= mirrorDescribeEvery {
			describe = now
			if err := m.describe(ctx); err != nil {
				return now, err
			}
		}
		if now.Sub(gained) > m.cfg.StallTimeout {
			return now, fmt.Errorf("the destination gained nothing for %v: at %v of %v; mirror %s; last listing error: %v",
				m.cfg.StallTimeout, sortedOffsets(dst), sortedOffsets(target), m.stateLine(), lastErr)
		}
		select {
		case <-ctx.Done():
			return time.Now(), ctx.Err()
		case <-tick.C:
		}
	}
}

// reachedAll reports whether got has every partition of target at or past
// its offset.
func reachedAll(got, target map[int32]int64) bool {
	for p, t := range target {
		if got[p] < t {
			return false
		}
	}
	return true
}

// endOffsets lists the topic's end offsets on one side: the high
// watermark, what a consumer can read. Partitions that fail to list (the
// destination topic being created, a leader moving) are left out; the
// error is returned with what did list.
func (m *mirrorRun) endOffsets(ctx context.Context, side *kadm.Client) (map[int32]int64, error) {
	lo, err := side.ListEndOffsets(ctx, m.cfg.Topic)
	out := make(map[int32]int64)
	lo.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			out[o.Partition] = o.Offset
		} else if err == nil {
			err = o.Err
		}
	})
	if err != nil {
		return out, fmt.Errorf("list offsets %s: %w", m.cfg.Topic, err)
	}
	return out, nil
}

// describe reads the partitions' mirror states (DescribeMirrors) into the
// progress line, and fails on a FAILED partition with its error. A
// DescribeMirrors that fails is shown, not fatal: the end offsets decide.
func (m *mirrorRun) describe(ctx context.Context) error {
	ds, err := m.adm.DescribeMirrors(ctx, m.cfg.MirrorName)
	if err == nil && len(ds) == 1 && ds[0].Err != nil {
		err = ds[0].Err
	}
	if err != nil {
		s := "describe: " + err.Error()
		m.state.Store(&s)
		return nil
	}
	states := map[string]int{}
	var failed []string
	for _, t := range ds[0].Topics {
		if t.Name != m.cfg.Topic {
			continue
		}
		for _, p := range t.Partitions {
			states[p.State]++
			if p.State == "FAILED" {
				failed = append(failed, fmt.Sprintf("%s[%d]: %s", t.Name, p.Partition, p.LastError))
			}
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(states)) {
		parts = append(parts, fmt.Sprintf("%s×%d", k, states[k]))
	}
	s := strings.Join(parts, " ")
	if s == "" {
		s = "no partitions described yet"
	}
	m.state.Store(&s)
	if len(failed) > 0 {
		return errors.New("mirror partitions FAILED: " + strings.Join(failed, "; "))
	}
	return nil
}

// stateLine is the last DescribeMirrors summary, e.g. "MIRRORING×8".
func (m *mirrorRun) stateLine() string {
	if s := m.state.Load(); s != nil {
		return *s
	}
	return "not described yet"
}

// sortedOffsets prints offsets by partition, for messages.
func sortedOffsets(o map[int32]int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, p := range slices.Sorted(maps.Keys(o)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%d", p, o[p])
	}
	b.WriteByte(']')
	return b.String()
}

// bothEnds lists the source's and the destination's end offsets at once,
// so a lag sample compares two listings of the same moment.
func (m *mirrorRun) bothEnds(ctx context.Context) (src, dst map[int32]int64, err error) {
	var wg sync.WaitGroup
	var srcErr, dstErr error
	wg.Go(func() { src, srcErr = m.endOffsets(ctx, m.src) })
	wg.Go(func() { dst, dstErr = m.endOffsets(ctx, m.dst) })
	wg.Wait()
	if srcErr != nil {
		return src, dst, fmt.Errorf("source: %w", srcErr)
	}
	if dstErr != nil {
		return src, dst, fmt.Errorf("destination: %w", dstErr)
	}
	return src, dst, nil
}
