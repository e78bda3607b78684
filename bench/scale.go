package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// Issue 29's scale targets: one node with 10,000 partitions (1,000 topics
// of 10) and 1,000 client connections starts (recovering a clean shutdown)
// in under 5 s, stays under 1 GiB resident, answers Metadata with a p99
// under 20 ms, and produces to all its partitions at no less than 0.7x its
// 8-partition throughput.
const (
	ScaleTargetPartitions  = 10000
	ScaleTargetConnections = 1000
	ScaleStartupTarget     = 5 * time.Second
	ScaleRSSTarget         = 1 << 30
	ScaleMetadataP99Target = 20 * time.Millisecond
	ScaleProduceTarget     = 0.7
)

// ScaleConfig is the scale workload (issue 29): for each of Steps
// partition counts, a fresh single node with Steps[i]/TopicPartitions
// topics, measured idle, under Metadata requests, with Connections idle
// clients, producing to every partition, and (Strait only) restarted.
type ScaleConfig struct {
	// ProducerConfig is the produce phases' client (record size, batch
	// size, acks); Topic prefixes the topics' names.
	ProducerConfig

	// Steps are the partition counts, each a multiple of
	// TopicPartitions.
	Steps           []int
	TopicPartitions int
	// Connections are the idle clients of the connection phase, each
	// having sent ApiVersions and Metadata; 0 skips the phase.
	Connections int
	// MetadataRequests is how many Metadata requests each latency phase
	// (all topics, one topic) sends, one at a time.
	MetadataRequests int
	// PrefillRecords are written to every partition before the idle
	// figures, so the restart has segments to recover.
	PrefillRecords int
	// ProduceDuration is the length of each produce phase: to every
	// partition of a step, and to 8 partitions before it.
	ProduceDuration time.Duration
	// Settle is how long a broker is left alone before each reading of
	// its memory and open files, so a reading is not of the work just
	// finished; 0 is 2 s.
	Settle time.Duration

	// ServeCommand starts Strait (`strait serve`), as in ClusterConfig;
	// nil skips Strait. Sets are more --set arguments.
	ServeCommand []string
	Sets         []string
	DataDir      string
	KeepData     bool
	// StartPeer starts a fresh kfake for a step; nil skips kfake.
	StartPeer func(ctx context.Context) (*Broker, error)

	Proc     *ProcReader
	Progress io.Writer
}

// ScaleSummary is the scale workload's figures, a ScaleStep per partition
// count.
type ScaleSummary struct {
	TopicPartitions  int           `json:"partitions_per_topic"`
	Connections      int           `json:"connections"`
	MetadataRequests int           `json:"metadata_requests"`
	PrefillRecords   int           `json:"prefill_records"`
	RecordSize       int           `json:"record_size"`
	BatchBytes       int32         `json:"batch_bytes"`
	Acks             string        `json:"acks"`
	ProduceDuration  time.Duration `json:"produce_duration_ns"`
	Settle           time.Duration `json:"settle_ns"`
	Steps            []ScaleStep   `json:"steps"`
}

// ScaleStep is one partition count on both brokers.
type ScaleStep struct {
	Partitions int           `json:"partitions"`
	Topics     int           `json:"topics"`
	Strait     *ScaleFigures `json:"strait,omitempty"`
	Peer       *ScaleFigures `json:"kfake,omitempty"`
}

// ScaleFigures are one broker's figures at one step. Zero is "not
// measured" (the restart figures of kfake, which keeps nothing on disk).
type ScaleFigures struct {
	CreateTook  time.Duration `json:"create_took_ns"`
	IdleRSS     int64         `json:"idle_rss_bytes"`
	IdleFDs     int           `json:"idle_fds"`
	MetadataAll *Latency      `json:"metadata_all,omitempty"`
	MetadataOne *Latency      `json:"metadata_one,omitempty"`
	// ConnRSS and ConnFDs are with Connections idle clients connected.
	ConnRSS int64 `json:"conn_rss_bytes"`
	ConnFDs int   `json:"conn_fds"`
	// Produce is the run to every partition, P8 the same broker's run to
	// a topic of 8 partitions just before it, and Ratio the first's
	// throughput over the second's: measured side by side, so the
	// machine's load at the moment weighs on both.
	Produce *Result `json:"produce,omitempty"`
	P8      *Result `json:"p8,omitempty"`
	Ratio   float64 `json:"ratio"`
	// ShutdownTook is SIGTERM to exit; StartupTook exec to the broker
	// answering Metadata with every partition led; StartupLogged the
	// startup= of its "strait broker ready" line.
	ShutdownTook  time.Duration `json:"shutdown_took_ns,omitempty"`
	StartupTook   time.Duration `json:"startup_took_ns,omitempty"`
	StartupLogged string        `json:"startup_logged,omitempty"`
	RestartRSS    int64         `json:"restart_rss_bytes,omitempty"`
	RestartFDs    int           `json:"restart_fds,omitempty"`
	// RestartOffsetsOK says every partition's end offset after the restart
	// is what it was before.
	RestartOffsetsOK bool   `json:"restart_offsets_ok,omitempty"`
	Error            string `json:"error,omitempty"`
}

func (c *ScaleConfig) fill() {
	c.ReplicationFactor = 1
	if c.Acks == "" {
		c.Acks = "1"
	}
	c.ProducerConfig.fillForOwnNodes()
	if len(c.Steps) == 0 {
		c.Steps = []int{100, 1000, ScaleTargetPartitions}
	}
	if c.TopicPartitions == 0 {
		c.TopicPartitions = 10
	}
	if c.MetadataRequests == 0 {
		c.MetadataRequests = 200
	}
	if c.PrefillRecords == 0 {
		c.PrefillRecords = 2
	}
	if c.ProduceDuration == 0 {
		c.ProduceDuration = 10 * time.Second
	}
	if c.Settle == 0 {
		c.Settle = 2 * time.Second
	}
}

func (c *ScaleConfig) validate() error {
	if len(c.ServeCommand) == 0 && c.StartPeer == nil {
		return errors.New("bench: scale has no broker to run: no serve command and no peer")
	}
	if c.TopicPartitions < 1 {
		return fmt.Errorf("bench: %d partitions a topic: want at least 1", c.TopicPartitions)
	}
	for _, s := range c.Steps {
		if s < c.TopicPartitions || s%c.TopicPartitions != 0 {
			return fmt.Errorf("bench: step of %d partitions is not a multiple of %d partitions a topic", s, c.TopicPartitions)
		}
	}
	if c.Connections < 0 || c.MetadataRequests < 1 || c.PrefillRecords < 1 || c.ProduceDuration <= 0 {
		return errors.New("bench: scale needs connections >= 0, metadata requests >= 1, prefill records >= 1 and a produce duration > 0")
	}
	return c.ProducerConfig.Validate()
}

// RunScale runs the workload: per step, Strait then kfake, each on a
// fresh broker. A step's error is kept in its figures and the run goes on
// to the next broker and step; the first error is returned.
func RunScale(ctx context.Context, cfg ScaleConfig) (*ScaleSummary, error) {
	cfg.fill()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	sum := &ScaleSummary{
		TopicPartitions: cfg.TopicPartitions, Connections: cfg.Connections, MetadataRequests: cfg.MetadataRequests,
		PrefillRecords: cfg.PrefillRecords, RecordSize: cfg.RecordSize, BatchBytes: cfg.BatchBytes, Acks: cfg.Acks,
		ProduceDuration: cfg.ProduceDuration, Settle: cfg.Settle,
	}
	base, cleanup, err := benchDataDir(cfg.DataDir, "strait-bench-scale-", cfg.KeepData, "scale")
	if err != nil {
		return sum, err
	}
	defer cleanup()
	var first error
	keep := func(f *ScaleFigures, err error) {
		if err == nil {
			return
		}
		f.Error = err.Error()
		if first == nil {
			first = err
		}
	}
	for _, p := range cfg.Steps {
		if ctx.Err() != nil {
			break
		}
		st := ScaleStep{Partitions: p, Topics: p / cfg.TopicPartitions}
		if len(cfg.ServeCommand) > 0 {
			st.Strait = &ScaleFigures{}
			keep(st.Strait, cfg.straitStep(ctx, filepath.Join(base, "scale", fmt.Sprintf("p%d", p)), st, st.Strait))
		}
		if cfg.StartPeer != nil {
			st.Peer = &ScaleFigures{}
			keep(st.Peer, cfg.peerStep(ctx, st, st.Peer))
		}
		sum.Steps = append(sum.Steps, st)
	}
	return sum, first
}

// progressf prints one progress line, when progress is wanted.
func (c *ScaleConfig) progressf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", args...)
	}
}
