package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"
)

// The figures issue 5 asks of mirroring between two single nodes on one
// machine: a catch-up appends on the destination at least 80% as fast as
// the slower of the two things it is made of, reading the source from
// offset 0 and appending to the destination, measured in the same run; and
// at half that rate the mirror stays less than a second behind.
const (
	MirrorRatioTarget = 0.80
	MirrorLagTarget   = time.Second
)

// MirrorConfig is the mirror workload. Two `strait serve` children, each a
// single-node cluster, play the source and the destination. Four phases
// run on them in one go:
//
//  1. produce-dest: the workload produced to a plain topic (DestTopic) of
//     the destination: what the destination can append from a client;
//  2. produce-source, then catch-up: the workload produced to Topic on the
//     source and read back from offset 0 by one consumer: what the source
//     can serve to a fetcher;
//  3. mirror-catch-up: a mirror created on the destination with the source
//     as its bootstrap, Topic started, timed until every destination
//     partition's end offset reached the source's;
//  4. mirror-steady: SteadyFraction of min(1, 2) produced to the source for
//     SteadyDuration while the lag is sampled every SampleEvery.
//
// Acks defaults to 1 and the replication factor to 1: single nodes.
type MirrorConfig struct {
	ProducerConfig
	Fetch FetchConfig

	// ServeCommand is the command line reaching `strait serve`; each node
	// gets its identity as --set arguments (see nodeSpec), then Sets.
	ServeCommand []string
	Sets         []string

	// DataDir holds source/ and destination/ (log.dirs and node1.log);
	// "" is a fresh temporary directory. What the run creates there is
	// removed unless KeepData.
	DataDir  string
	KeepData bool

	// Records or Bytes (the first set) is the size of phases 1-3.
	Records int64
	Bytes   int64

	// DestTopic is phase 1's topic; "" is Topic + "-dest".
	DestTopic string
	// MirrorName is the mirror's name; "" is "strait-bench".
	MirrorName string

	// SteadyFraction of the slower of phases 1 and 2 (records/s) is the
	// steady phase's produce rate; 0 is 0.5.
	SteadyFraction float64
	SteadyDuration time.Duration
	// SampleEvery is the lag sampling period; 0 is 200 ms.
	SampleEvery time.Duration
	// StallTimeout fails a wait for the mirror (the catch-up, the drain
	// after the steady phase) once the destination gained nothing for
	// this long; 0 is 60 s.
	StallTimeout time.Duration

	Proc     *ProcReader
	Progress io.Writer
}

// MirrorSummary is the mirror workload's verdict against issue 5's targets.
type MirrorSummary struct {
	MirrorName string `json:"mirror_name"`
	Topic      string `json:"topic"`
	Partitions int32  `json:"partitions"`
	// Advertised is whether the destination lists CreateMirror (key 94)
	// in its ApiVersions; without it the mirror phases cannot run.
	Advertised bool `json:"mirror_advertised"`

	DestProduceMiBPerSec float64 `json:"dest_produce_mib_per_sec"`
	SourceFetchMiBPerSec float64 `json:"source_fetch_mib_per_sec"`
	MirrorMiBPerSec      float64 `json:"mirror_mib_per_sec"`
	// MirrorStartup is from StartMirrorTopics to the first mirrored record
	// listed on the destination; it is part of the catch-up time.
	MirrorStartup time.Duration `json:"mirror_startup_ns"`
	// Broker CPU per GiB mirrored during the catch-up: the source's (the
	// fetches it served) and the destination's (fetching and appending).
	SourceCPUSecPerGiB float64 `json:"mirror_source_cpu_sec_per_gib,omitempty"`
	DestCPUSecPerGiB   float64 `json:"mirror_dest_cpu_sec_per_gib,omitempty"`
	// Ratio is MirrorMiBPerSec / min(SourceFetchMiBPerSec,
	// DestProduceMiBPerSec).
	Ratio       float64 `json:"ratio"`
	RatioTarget float64 `json:"ratio_target"`
	RatioMet    bool    `json:"ratio_met"`

	SteadyFraction float64 `json:"steady_fraction"`
	// SteadyRate is what the steady phase was asked for, records/s.
	SteadyRate      float64 `json:"steady_rate_records_per_sec"`
	SteadyMiBPerSec float64 `json:"steady_mib_per_sec"`
	Samples         int     `json:"lag_samples"`
	// LagSampleErrors counts samples whose listing failed (left out).
	LagSampleErrors int `json:"lag_sample_errors"`
	// Lag in records: the sum over partitions of the source's end offset
	// minus the destination's, at each sample.
	LagRecordsP50 int64 `json:"lag_records_p50"`
	LagRecordsP99 int64 `json:"lag_records_p99"`
	LagRecordsMax int64 `json:"lag_records_max"`
	// Lag in time: the age of the oldest record not yet on the
	// destination at each sample (0 when none is missing), since the
	// source acknowledged it to the producer (see mirrorRun.steady).
	LagP50    time.Duration `json:"lag_p50_ns"`
	LagP99    time.Duration `json:"lag_p99_ns"`
	LagMax    time.Duration `json:"lag_max_ns"`
	LagTarget time.Duration `json:"lag_target_ns"`
	// LagMet is LagP99 < LagTarget, with every record mirrored.
	LagMet bool `json:"lag_met"`
	// The same age since the record's timestamp (CreateTime, set when the
	// producer took the record): also counts the producer's buffering and
	// the source's produce latency.
	StampLagP50 time.Duration `json:"lag_since_timestamp_p50_ns"`
	StampLagP99 time.Duration `json:"lag_since_timestamp_p99_ns"`
	StampLagMax time.Duration `json:"lag_since_timestamp_max_ns"`
	// SteadyProduceP99 is the steady producer's p99 latency to the
	// source's acknowledgement; SteadyProduceElapsed how long it took to
	// send what SteadyDuration held (longer: it fell behind its rate).
	SteadyProduceP99     time.Duration `json:"steady_produce_p99_ns"`
	SteadyProduceElapsed time.Duration `json:"steady_produce_elapsed_ns"`
	// LagSeries is every sample in order: the lag over time.
	LagSeries []LagPoint `json:"lag_series,omitempty"`
}

// Workload names and broker labels of the phases.
const (
	phaseDestProduce   = "produce-dest"
	phaseSourceProduce = "produce-source"
	phaseSourceFetch   = "catch-up"
	phaseMirrorCatchUp = "mirror-catch-up"
	phaseMirrorSteady  = "mirror-steady"

	labelSource = "strait-source"
	labelDest   = "strait-dest"
	labelMirror = "strait-mirror"
)

func (c *MirrorConfig) fill() {
	if c.Acks == "" {
		c.Acks = "1"
	}
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = 1
	}
	c.ProducerConfig.fillForOwnNodes()
	if c.DestTopic == "" {
		c.DestTopic = c.Topic + "-dest"
	}
	if c.MirrorName == "" {
		c.MirrorName = "strait-bench"
	}
	if c.SteadyFraction == 0 {
		c.SteadyFraction = 0.5
	}
	if c.SampleEvery == 0 {
		c.SampleEvery = 200 * time.Millisecond
	}
	if c.StallTimeout == 0 {
		c.StallTimeout = 60 * time.Second
	}
}

func (c *MirrorConfig) validate() error {
	switch {
	case len(c.ServeCommand) == 0:
		return errors.New("bench: mirror needs the command that runs `strait serve`")
	case c.Records < 0 || c.Bytes < 0:
		return errors.New("bench: negative records or bytes")
	case c.Records == 0 && c.Bytes == 0:
		return errors.New("bench: mirror needs records or bytes")
	case c.RecordSize <= 0:
		return fmt.Errorf("bench: mirror record size %d: want > 0 (bytes are counted as records × size)", c.RecordSize)
	case c.DestTopic == c.Topic:
		return fmt.Errorf("bench: the destination's produce topic %q is the mirrored topic", c.DestTopic)
	case c.SteadyFraction < 0 || c.SteadyFraction > 1:
		return fmt.Errorf("bench: steady fraction %v outside (0, 1]", c.SteadyFraction)
	case c.SteadyDuration <= 0:
		return errors.New("bench: mirror needs a steady duration > 0")
	case c.SampleEvery <= 0 || c.StallTimeout <= 0:
		return errors.New("bench: sample period and stall timeout must be > 0")
	}
	return c.ProducerConfig.Validate()
}

// RunMirror runs the four phases and returns what each measured (in phase
// order, also when an error ends the run early) and the summary.
func RunMirror(ctx context.Context, cfg MirrorConfig) ([]Result, *MirrorSummary, error) {
	cfg.fill()
	if err := cfg.validate(); err != nil {
		return nil, nil, err
	}
	base, cleanup, err := benchDataDir(cfg.DataDir, "strait-bench-mirror-", cfg.KeepData, "source", "destination")
	if err != nil {
		return nil, nil, err
	}
	defer cleanup()
	sum := &MirrorSummary{
		MirrorName: cfg.MirrorName, Topic: cfg.Topic, Partitions: cfg.Partitions,
		RatioTarget: MirrorRatioTarget, LagTarget: MirrorLagTarget, SteadyFraction: cfg.SteadyFraction,
	}

	pair, err := startMirrorPair(ctx, &cfg, base)
	if err != nil {
		return nil, sum, err
	}
	defer pair.stop()

	var out []Result
	add := func(r Result) {
		if r.Workload != "" {
			out = append(out, r)
		}
	}

	// Phase 1: the destination's own produce rate.
	settle()
	dest, err := RunProduce(ctx, cfg.produce(phaseDestProduce, labelDest, pair.dest, cfg.DestTopic))
	add(dest)
	if err != nil {
		return out, sum, err
	}
	sum.DestProduceMiBPerSec = dest.MiBPerSec

	// Phase 2: the source's catch-up fetch rate, over the topic to mirror.
	settle()
	src, err := RunProduce(ctx, cfg.produce(phaseSourceProduce, labelSource, pair.source, cfg.Topic))
	add(src)
	if err != nil {
		return out, sum, err
	}
	srcEnd, err := offsets(ctx, seedOpts(pair.source.Addrs, nil), cfg.Topic, false)
	if err != nil {
		return out, sum, err
	}
	srcStart, err := offsets(ctx, seedOpts(pair.source.Addrs, nil), cfg.Topic, true)
	if err != nil {
		return out, sum, err
	}
	settle()
	fetch, err := catchUp(ctx, cfg.consume(pair.source, produced(srcStart, srcEnd)*int64(cfg.RecordSize)), srcStart, srcEnd)
	add(fetch)
	if err != nil {
		return out, sum, err
	}
	sum.SourceFetchMiBPerSec = fetch.MiBPerSec

	// Phase 3: the mirror's catch-up of the same bytes.
	if sum.Advertised, err = mirrorAdvertised(ctx, pair.dest.Addrs); err != nil {
		return out, sum, err
	}
	if !sum.Advertised {
		return out, sum, errMirrorNotAdvertised
	}
	settle()
	m, err := newMirrorRun(ctx, &cfg, pair)
	if err != nil {
		return out, sum, err
	}
	defer m.close()
	catch, err := m.catchUp(ctx, srcStart, srcEnd)
	add(catch)
	sum.MirrorStartup = m.startup
	sum.MirrorMiBPerSec = catch.MiBPerSec
	sum.Ratio = div(catch.MiBPerSec, min(sum.SourceFetchMiBPerSec, sum.DestProduceMiBPerSec))
	sum.RatioMet = err == nil && sum.Ratio >= MirrorRatioTarget
	if catch.Cost != nil {
		sum.DestCPUSecPerGiB = catch.Cost.CPUSecPerGiB
	}
	if m.sourceCost != nil {
		sum.SourceCPUSecPerGiB = m.sourceCost.CPUSecPerGiB
	}
	if err != nil {
		return out, sum, err
	}

	// Phase 4: the steady state at a fraction of the slower side's rate.
	slower := min(dest.RecordsPerSec, fetch.RecordsPerSec)
	sum.SteadyRate = cfg.SteadyFraction * slower
	if sum.SteadyRate <= 0 {
		return out, sum, errors.New("bench: no rate for the steady phase: a throughput phase moved nothing")
	}
	steady, lag, prod, err := m.steady(ctx, srcEnd, sum.SteadyRate)
	add(steady)
	lag.fill(sum)
	if prod != nil {
		sum.SteadyProduceP99 = time.Duration(prod.hist.Quantile(0.99))
		sum.SteadyProduceElapsed = prod.elapsed
	}
	sum.SteadyMiBPerSec = steady.MiBPerSec
	sum.LagMet = err == nil && sum.Samples > 0 && sum.LagP99 < MirrorLagTarget
	return out, sum, err
}

// settle writes every dirty page back (sync(2)) before a phase: the
// nodes share one disk, so without it a phase would pay for the writeback
// of the gigabyte the phase before it wrote, and the phases the ratio
// compares would run under different loads.
func settle() { syscall.Sync() }

// errMirrorNotAdvertised ends the run before the mirror phases when the
// destination cannot mirror: the throughput phases before it stand.
var errMirrorNotAdvertised = errors.New("bench: mirror: the destination broker does not advertise CreateMirror " +
	"(ApiVersions lacks key 94): this strait build has no mirroring runtime (broker wire.Services.Mirror unset), " +
	"so the mirror catch-up and steady-state phases cannot run")

// produced is the number of records between start and end.
func produced(start, end map[int32]int64) int64 {
	var n int64
	for p, e := range end {
		n += e - start[p]
	}
	return n
}

// produce is phase 1 or 2's producer load on b's topic.
func (c *MirrorConfig) produce(workload, label string, b *Broker, topic string) ProduceConfig {
	p := c.ProducerConfig
	p.Bootstrap, p.Topic = b.Addrs, topic
	return ProduceConfig{
		ProducerConfig: p,
		Records:        c.Records,
		Bytes:          c.Bytes,
		Label:          label,
		BrokerPID:      b.PID,
		Proc:           c.Proc,
		Progress:       c.Progress,
		workload:       workload,
	}
}

// consume is phase 2's catch-up read of bytes from b.
func (c *MirrorConfig) consume(b *Broker, bytes int64) *ConsumeConfig {
	p := c.ProducerConfig
	p.Bootstrap = b.Addrs
	return &ConsumeConfig{
		ProducerConfig: p,
		Fetch:          c.Fetch,
		Bytes:          bytes,
		Label:          labelSource,
		BrokerPID:      b.PID,
		Proc:           c.Proc,
		Progress:       c.Progress,
	}
}
