package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ConsumeConfig is the read workload: a catch-up read of Bytes from the log
// start (Kafka's tools/ConsumerPerformance, minus the consumer group: we
// assign every partition directly, so no rebalance is timed), then
// optionally a tail read while a producer writes for TailDuration. ProducerConfig names the topic and configures the producer
// of the prefill and tail phases.
type ConsumeConfig struct {
	ProducerConfig
	Fetch FetchConfig

	// Bytes is how many value bytes the catch-up reads from offset 0.
	Bytes int64
	// Prefill produces the difference first when the topic holds fewer
	// than Bytes (counted as records × RecordSize).
	Prefill bool
	// TailDuration is how long the tail phase produces; 0 skips it.
	TailDuration time.Duration
	// TailRate is the tail producer's records per second, 0 = max.
	TailRate float64

	Label     string
	BrokerPID int
	Proc      *ProcReader
	Progress  io.Writer
	// Profile, when set, fetches the broker's profiles over each phase.
	Profile *Profiler

	// Group, when it has members, makes the catch-up a consumer group's
	// (GroupConfig); the tail read stays a direct one.
	Group GroupConfig
}

// drainTimeout bounds the wait, after a producer finished, for a consumer to
// read what it wrote: past it the run fails instead of hanging.
const drainTimeout = 30 * time.Second

// RunConsume runs the prefill (when needed), catch-up and tail phases and
// returns one Result for each phase that ran, in that order.
func RunConsume(ctx context.Context, cfg ConsumeConfig) ([]Result, error) {
	cfg.fill()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Bytes <= 0 {
		return nil, fmt.Errorf("bench: consume bytes %d <= 0", cfg.Bytes)
	}
	if err := cfg.Group.Validate(); err != nil {
		return nil, err
	}
	if _, err := EnsureTopic(ctx, cfg.seeds(), cfg.Topic, cfg.Partitions, cfg.ReplicationFactor); err != nil {
		return nil, err
	}
	var out []Result
	start, err := offsets(ctx, cfg.seeds(), cfg.Topic, true)
	if err != nil {
		return nil, err
	}
	end, err := offsets(ctx, cfg.seeds(), cfg.Topic, false)
	if err != nil {
		return nil, err
	}
	var have int64
	for p, e := range end {
		have += e - start[p]
	}
	if need := cfg.Bytes - have*int64(cfg.RecordSize); cfg.Prefill && need > 0 {
		res, err := RunProduce(ctx, ProduceConfig{
			ProducerConfig: cfg.ProducerConfig,
			Bytes:          need,
			Label:          cfg.Label,
			BrokerPID:      cfg.BrokerPID,
			Proc:           cfg.Proc,
			Progress:       cfg.Progress,
			Profile:        cfg.Profile,
			workload:       "prefill",
		})
		out = append(out, res)
		if err != nil {
			return out, err
		}
		if end, err = offsets(ctx, cfg.seeds(), cfg.Topic, false); err != nil {
			return out, err
		}
	}

	read := catchUp
	if cfg.Group.Members > 0 {
		read = groupCatchUp
	}
	res, err := read(ctx, &cfg, start, end)
	out = append(out, res)
	if err != nil || cfg.TailDuration <= 0 {
		return out, err
	}
	res, err = runTail(ctx, tailConfig{
		produce: ProduceConfig{
			ProducerConfig: cfg.ProducerConfig,
			Duration:       cfg.TailDuration,
			Rate:           cfg.TailRate,
			Label:          cfg.Label,
			workload:       "tail-produce",
		},
		fetch:     cfg.Fetch,
		workload:  "tail",
		brokerPID: cfg.BrokerPID,
		proc:      cfg.Proc,
		progress:  cfg.Progress,
		profile:   cfg.Profile,
	})
	out = append(out, res)
	return out, err
}

// catchUp reads from start until Bytes are read or every partition reached
// end, whichever comes first.
func catchUp(ctx context.Context, cfg *ConsumeConfig, start, end map[int32]int64) (Result, error) {
	res := Result{Workload: "catch-up", Broker: cfg.Label}
	prof := cfg.Profile.start(ctx, res.Workload, cfg.Label)
	defer prof.stopWindows()
	cost, err := startCost(cfg.Proc, cfg.BrokerPID)
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	r, err := newReader(cfg.seeds(), cfg.Topic, cfg.Fetch, start)
	if err != nil {
		return res, err
	}
	defer r.close()
	mon := startMonitor(cfg.Progress, cost, func(el time.Duration) string {
		return rateLine(cfg.Label, "catch-up", el, r.records.Load(), r.bytes.Load())
	})
	full := func(*kgo.Record) bool { return r.bytes.Load() < cfg.Bytes }
	for ctx.Err() == nil && r.bytes.Load() < cfg.Bytes && !r.reached(end) {
		r.poll(ctx, ctx, full)
		if r.failed > 0 {
			break
		}
	}
	elapsed := time.Since(t0)
	mon.end()
	r.fill(&res)
	res.finish(elapsed)
	if res.Cost, err = cost.finish(res.Bytes); err != nil {
		return res, err
	}
	if res.Profiles, err = prof.finish(ctx); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("bench: catch-up: %w", err)
	}
	if r.first != nil {
		return res, fmt.Errorf("bench: catch-up: %w", r.first)
	}
	return res, nil
}

// tailConfig is a consumer reading the end of the log while produce writes
// to it: the tail read of `consume` and the e2e workload.
type tailConfig struct {
	produce   ProduceConfig
	fetch     FetchConfig
	workload  string
	brokerPID int
	proc      *ProcReader
	progress  io.Writer
	profile   *Profiler
	// each sees every record read, on the polling goroutine.
	each func(*kgo.Record)
}

// runTail starts a reader at the end offsets, runs the producer, and reads
// until the end offsets listed after the producer finished. Records counts
// what was read and Produced what was acknowledged; they differ only if
// something was lost. Cost covers both sides of the broker's work.
func runTail(ctx context.Context, tc tailConfig) (Result, error) {
	pc := tc.produce
	res := Result{Workload: tc.workload, Broker: pc.Label}
	from, err := offsets(ctx, pc.seeds(), pc.Topic, false)
	if err != nil {
		return res, err
	}
	r, err := newReader(pc.seeds(), pc.Topic, tc.fetch, from)
	if err != nil {
		return res, err
	}
	defer r.close()
	prof := tc.profile.start(ctx, tc.workload, pc.Label)
	defer prof.stopWindows()
	cost, err := startCost(tc.proc, tc.brokerPID)
	if err != nil {
		return res, err
	}
	type produced struct {
		res Result
		err error
	}
	prodDone := make(chan produced, 1)
	var prod *produced
	mon := startMonitor(tc.progress, cost, func(el time.Duration) string {
		return rateLine(pc.Label, tc.workload, el, r.records.Load(), r.bytes.Load())
	})
	t0 := time.Now()
	prodCtx, stopProd := context.WithCancel(ctx)
	defer stopProd()
	go func() {
		res, err := RunProduce(prodCtx, pc)
		prodDone <- produced{res, err}
	}()

	each := func(rec *kgo.Record) bool {
		if tc.each != nil {
			tc.each(rec)
		}
		return true
	}
	var until map[int32]int64
	var drainBy time.Time
	for ctx.Err() == nil && r.failed == 0 {
		if prod == nil {
			// Poll until the producer finishes, then list where it
			// stopped: that is where the reader must get to.
			pctx, cancel := context.WithCancel(ctx)
			stop := make(chan struct{})
			watched := make(chan struct{})
			go func() {
				defer close(watched)
				select {
				case p := <-prodDone:
					prod = &p
					cancel()
				case <-stop:
				}
			}()
			r.poll(ctx, pctx, each)
			close(stop)
			// Wait for the watcher so prod is read after it is written;
			// if stop won the race, the result stays in prodDone for the
			// next round.
			<-watched
			cancel()
			continue
		}
		if until == nil {
			if prod.err != nil {
				break
			}
			if until, err = offsets(ctx, pc.seeds(), pc.Topic, false); err != nil {
				break
			}
			drainBy = time.Now().Add(drainTimeout)
		}
		if r.reached(until) {
			break
		}
		if time.Now().After(drainBy) {
			err = fmt.Errorf("bench: %s: reader still short of the end offsets %v after %v", tc.workload, until, drainTimeout)
			break
		}
		pctx, cancel := context.WithDeadline(ctx, drainBy)
		r.poll(ctx, pctx, each)
		cancel()
	}
	elapsed := time.Since(t0)
	if prod == nil {
		// The reader failed or ctx ended first: stop the producer and
		// take its counts, so it neither outlives the run nor goes
		// unreported.
		stopProd()
		p := <-prodDone
		prod = &p
	}
	mon.end()
	r.fill(&res)
	res.finish(elapsed)
	if c, cerr := cost.finish(res.Bytes); cerr == nil {
		res.Cost = c
	} else if err == nil {
		err = cerr
	}
	if p, perr := prof.finish(ctx); perr == nil {
		res.Profiles = p
	} else if err == nil {
		err = perr
	}
	res.Produced = prod.res.Records
	res.Errors += prod.res.Errors
	if res.FirstError == "" {
		res.FirstError = prod.res.FirstError
	}
	if err == nil {
		err = prod.err
	}
	switch {
	case err != nil:
	case ctx.Err() != nil:
		err = fmt.Errorf("bench: %s: %w", tc.workload, ctx.Err())
	case r.first != nil:
		err = fmt.Errorf("bench: %s: %w", tc.workload, r.first)
	case res.Records != res.Produced:
		err = fmt.Errorf("bench: %s: read %d records, %d were acknowledged", tc.workload, res.Records, res.Produced)
	}
	return res, err
}
