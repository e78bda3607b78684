package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// steady is phase 4: rate records/s produced to the source for
// SteadyDuration, starting at base (the source's end offsets, which the
// catch-up brought the destination to), while both sides' end offsets are
// sampled every SampleEvery; then it waits for the destination to drain.
//
// The lag in time of a sample is the age of the oldest record the
// destination lacks, taken for each partition behind at the record at the
// destination's end offset, two ways:
//   - since acknowledged (the verdict): now minus when the source's
//     acknowledgement of that record reached the producer, 0 if it has not
//     yet. The source appended the record before it answered, so this
//     understates the mirror's lag by at most that answer's trip back;
//   - since its timestamp: now minus the record's CreateTime, which the
//     producer sets as it hands the record to the client. This is the age
//     a consumer of the destination would compute, and it includes the
//     producer's own buffering and the source's produce latency, which
//     are no part of mirroring but grow as the machine's two cores fill.
//
// The producer picks each record's partition (round robin) and records
// when it sent it and when it was acknowledged; a partition's records are
// appended in the order sent (one producer, and every acknowledged offset
// is checked against that order), so the record at offset o of partition
// p is the (o - base[p])-th sent to p, known here without fetching it.
// "now" is when both listings have answered, which overstates both ages by
// at most a listing's round trip.
func (m *mirrorRun) steady(ctx context.Context, base map[int32]int64, rate float64) (Result, *lagSamples, *steadyProducer, error) {
	res := Result{Workload: phaseMirrorSteady, Broker: labelMirror}
	lag := &lagSamples{}
	cost, err := startCost(m.cfg.Proc, m.pair.dest.PID)
	if err != nil {
		return res, lag, nil, err
	}
	p := newSteadyProducer(m.cfg, m.pair.source.Addrs, base)
	if err := p.open(); err != nil {
		return res, lag, nil, err
	}
	defer p.close()

	var mirrored atomic.Int64
	size := int64(m.cfg.RecordSize)
	mon := startMonitor(m.cfg.Progress, cost, func(el time.Duration) string {
		n := mirrored.Load()
		return rateLine(labelMirror, "steady", el, n, n*size) + "  " + lag.last()
	})
	defer mon.end()

	t0 := time.Now()
	prodCtx, stopProd := context.WithCancel(ctx)
	defer stopProd()
	prodDone := make(chan struct{})
	go func() {
		defer close(prodDone)
		p.run(prodCtx, rate, m.cfg.SteadyDuration)
	}()

	tick := time.NewTicker(m.cfg.SampleEvery)
	defer tick.Stop()
sampling:
	for {
		select {
		case <-prodDone:
			break sampling
		case <-ctx.Done():
			break sampling
		case <-tick.C:
		}
		src, dst, err := m.bothEnds(ctx)
		now := time.Now()
		if err != nil {
			if ctx.Err() == nil {
				lag.failed(err)
			}
			continue
		}
		lag.add(now.Sub(t0), p.sample(now, src, dst))
		mirrored.Store(gained(base, dst))
	}
	stopProd()
	<-prodDone

	// Drain: everything acknowledged must reach the destination.
	var finish time.Time
	final, err := m.endOffsets(ctx, m.src)
	if err == nil {
		finish, err = m.waitFor(ctx, base, final, func(n int64, _ time.Time) { mirrored.Store(n) })
	}
	res.Records = mirrored.Load()
	res.Bytes = res.Records * size
	res.Produced = p.acked.Load()
	res.Errors = p.failed.Load()
	if e := p.first.Load(); e != nil {
		res.FirstError = (*e).Error()
	}
	if finish.IsZero() {
		finish = time.Now()
	}
	res.finish(finish.Sub(t0))
	res.Latency = lag.latency()
	if c, cerr := cost.finish(res.Bytes); cerr == nil {
		res.Cost = c
	} else if err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		err = fmt.Errorf("bench: mirror steady state: drain: %w", err)
	case ctx.Err() != nil:
		err = fmt.Errorf("bench: mirror steady state: %w", ctx.Err())
	case res.Errors > 0:
		err = fmt.Errorf("bench: mirror steady state: %d records failed, first: %s", res.Errors, res.FirstError)
	case p.misplaced.Load() > 0:
		err = fmt.Errorf("bench: mirror steady state: %d records acknowledged at other offsets than sent in order: lag ages unknown", p.misplaced.Load())
	case res.Records != res.Produced:
		err = fmt.Errorf("bench: mirror steady state: mirrored %d records, %d were acknowledged", res.Records, res.Produced)
	case lag.errors > 0:
		err = fmt.Errorf("bench: mirror steady state: %d lag samples failed, first: %w", lag.errors, lag.firstErr)
	case lag.unresolved > 0:
		err = fmt.Errorf("bench: mirror steady state: %d lag samples found an offset the producer did not send", lag.unresolved)
	}
	return res, lag, p, err
}

// gained is the records dst holds past base.
func gained(base, dst map[int32]int64) int64 {
	var n int64
	for p, o := range dst {
		n += max(0, o-base[p])
	}
	return n
}

// steadyProducer sends the steady phase's records and remembers, by
// partition and position, when it sent each and when the source
// acknowledged it.
type steadyProducer struct {
	cfg   *MirrorConfig
	addrs []string
	base  map[int32]int64
	parts []int32
	cl    *kgo.Client
	pool  *valuePool
	hist  *Histogram // produce latency, send to acknowledgement

	mu    sync.Mutex
	sent  map[int32][]int64 // unix ns each record was sent
	ackAt map[int32][]int64 // unix ns each was acknowledged, 0 until then

	acked, failed, misplaced atomic.Int64
	first                    atomic.Pointer[error]
	elapsed                  time.Duration // the sending, to the last acknowledgement
}

func newSteadyProducer(cfg *MirrorConfig, addrs []string, base map[int32]int64) *steadyProducer {
	s := &steadyProducer{
		cfg: cfg, addrs: addrs, base: base,
		sent: make(map[int32][]int64, len(base)), ackAt: make(map[int32][]int64, len(base)),
		parts: slices.Sorted(maps.Keys(base)),
		pool:  newValuePool(cfg.Seed+1, cfg.RecordSize),
		hist:  NewHistogram(),
	}
	for p := range base {
		s.sent[p], s.ackAt[p] = nil, nil
	}
	return s
}

func (s *steadyProducer) open() error {
	pc := s.cfg.ProducerConfig
	pc.Bootstrap = s.addrs
	cl, err := kgo.NewClient(append(pc.producerOpts(), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		return fmt.Errorf("bench: producer client: %w", err)
	}
	s.cl = cl
	return nil
}

func (s *steadyProducer) close() { s.cl.Close() }

// paceSlack is how far ahead of its due time a record may go out: pacing
// each record with its own timer costs a wake-up per record (over 100,000
// a second at the rates here), which on two cores slowed the producer
// below its schedule; records go out in bursts of at most 1 ms instead.
const paceSlack = time.Millisecond

// run sends records due every 1/rate from now for d, then flushes.
func (s *steadyProducer) run(ctx context.Context, rate float64, d time.Duration) {
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	for n := int64(0); ctx.Err() == nil; n++ {
		offset := time.Duration(n) * interval
		if offset >= d {
			break
		}
		if due := start.Add(offset); time.Until(due) > paceSlack && !sleepUntil(ctx, due) {
			break
		}
		p := s.parts[n%int64(len(s.parts))]
		now := time.Now()
		s.mu.Lock()
		k := len(s.sent[p])
		s.sent[p] = append(s.sent[p], now.UnixNano())
		s.ackAt[p] = append(s.ackAt[p], 0)
		s.mu.Unlock()
		want := s.base[p] + int64(k)
		rec := &kgo.Record{Topic: s.cfg.Topic, Partition: p, Value: s.pool.value(n), Timestamp: now}
		s.cl.Produce(ctx, rec, func(r *kgo.Record, err error) {
			if err != nil {
				s.failed.Add(1)
				s.first.CompareAndSwap(nil, &err)
				return
			}
			at := time.Now()
			s.hist.RecordDuration(at.Sub(now))
			s.mu.Lock()
			s.ackAt[p][k] = at.UnixNano()
			s.mu.Unlock()
			if r.Offset != want {
				s.misplaced.Add(1)
			}
			s.acked.Add(1)
		})
	}
	_ = s.cl.Flush(ctx)
	s.elapsed = time.Since(start)
}
