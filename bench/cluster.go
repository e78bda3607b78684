package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// The figures issue 4 asks of a three-node cluster on one machine: RF=3
// acks=all produce throughput at least 40% of one node's acks=1, and p99
// produce latency under 50 ms at half the RF=3 rate.
const (
	ClusterRatioTarget = 0.40
	ClusterP99Target   = 50 * time.Millisecond
)

// ClusterConfig is the cluster workload: the same producer load (Acks and
// ReplicationFactor are set per phase) against one `strait serve` node with
// acks=1, then against Nodes of them forming one cluster with
// RF=Nodes, min.insync.replicas=MinInsyncReplicas and acks=all, then at
// LatencyFraction of that cluster's rate for LatencyDuration.
type ClusterConfig struct {
	ProducerConfig

	// ServeCommand is the command line reaching `strait serve`; each node
	// gets its node.id, listeners, controller.quorum.voters and log.dirs
	// as --set arguments, then Sets.
	ServeCommand []string
	Sets         []string
	Nodes        int // cluster size and replication factor; 0 is 3
	// MinInsyncReplicas is the topic's min.insync.replicas; 0 is 2.
	MinInsyncReplicas int

	// DataDir holds the nodes' log.dirs and logs; "" is a fresh temporary
	// directory. What the run creates there is removed unless KeepData.
	DataDir  string
	KeepData bool

	// Records, Bytes and Duration end each throughput phase, as in
	// ProduceConfig.
	Records  int64
	Bytes    int64
	Duration time.Duration

	// LatencyFraction of the cluster's throughput (records/s) is the
	// rate of the latency phase; 0 is 0.5. LatencyDuration is its length.
	LatencyFraction float64
	LatencyDuration time.Duration

	Proc     *ProcReader
	Progress io.Writer
}

// ClusterSummary is the cluster workload's verdict against issue 4's
// targets.
type ClusterSummary struct {
	Nodes             int     `json:"nodes"`
	MinInsyncReplicas int     `json:"min_insync_replicas"`
	SingleMiBPerSec   float64 `json:"single_acks1_mib_per_sec"`
	ClusterMiBPerSec  float64 `json:"cluster_acks_all_mib_per_sec"`
	// The CPU the brokers spent per GiB acknowledged: the single node's,
	// and the sum over the cluster's nodes (0 when not measured). On a
	// machine whose cores the brokers share, the ratio of these two bounds
	// the throughput ratio.
	SingleCPUSecPerGiB  float64 `json:"single_cpu_sec_per_gib,omitempty"`
	ClusterCPUSecPerGiB float64 `json:"cluster_cpu_sec_per_gib,omitempty"`
	// Ratio is ClusterMiBPerSec / SingleMiBPerSec.
	Ratio       float64 `json:"ratio"`
	RatioTarget float64 `json:"ratio_target"`
	RatioMet    bool    `json:"ratio_met"`

	LatencyFraction float64 `json:"latency_fraction"`
	// LatencyRate is the rate the latency phase was asked for:
	// LatencyFraction of the cluster's records per second.
	LatencyRate float64       `json:"latency_rate_records_per_sec"`
	P50         time.Duration `json:"latency_p50_ns"`
	P99         time.Duration `json:"latency_p99_ns"`
	P99Target   time.Duration `json:"latency_p99_target_ns"`
	P99Met      bool          `json:"latency_p99_met"`
}

// Workload names of the three phases.
const (
	phaseSingle  = "produce-acks1"
	phaseCluster = "produce-acks-all"
	phaseRate    = "produce-acks-all-rate"
)

func (c *ClusterConfig) fill() {
	if c.Nodes == 0 {
		c.Nodes = 3
	}
	if c.MinInsyncReplicas == 0 {
		c.MinInsyncReplicas = 2
	}
	if c.LatencyFraction == 0 {
		c.LatencyFraction = 0.5
	}
	// Bootstrap is each phase's; a placeholder passes Validate.
	c.Bootstrap = []string{"-"}
	c.ProducerConfig.fill()
}

func (c *ClusterConfig) validate() error {
	switch {
	case len(c.ServeCommand) == 0:
		return errors.New("bench: cluster needs the command that runs `strait serve`")
	case c.Nodes < 2:
		return fmt.Errorf("bench: cluster of %d nodes: want at least 2", c.Nodes)
	case c.MinInsyncReplicas < 1 || c.MinInsyncReplicas > c.Nodes:
		return fmt.Errorf("bench: min.insync.replicas %d outside 1..%d", c.MinInsyncReplicas, c.Nodes)
	case c.Records < 0 || c.Bytes < 0 || c.Duration < 0:
		return errors.New("bench: negative records, bytes or duration")
	case c.Records == 0 && c.Bytes == 0 && c.Duration == 0:
		return errors.New("bench: cluster needs records, bytes or a duration per phase")
	case c.LatencyFraction < 0 || c.LatencyFraction > 1:
		return fmt.Errorf("bench: latency fraction %v outside (0, 1]", c.LatencyFraction)
	case c.LatencyDuration <= 0:
		return errors.New("bench: cluster needs a latency duration > 0")
	}
	return c.ProducerConfig.Validate()
}

// RunCluster runs the three phases, each on brokers of its own started
// from ServeCommand, and returns what each measured (the Results in phase
// order, also when an error ends the run early) and the summary.
func RunCluster(ctx context.Context, cfg ClusterConfig) ([]Result, *ClusterSummary, error) {
	cfg.fill()
	if err := cfg.validate(); err != nil {
		return nil, nil, err
	}
	base, cleanup, err := benchDataDir(cfg.DataDir, "strait-bench-cluster-", cfg.KeepData, "single", "cluster")
	if err != nil {
		return nil, nil, err
	}
	defer cleanup()

	sum := &ClusterSummary{
		Nodes: cfg.Nodes, MinInsyncReplicas: cfg.MinInsyncReplicas,
		RatioTarget: ClusterRatioTarget, P99Target: ClusterP99Target, LatencyFraction: cfg.LatencyFraction,
	}
	var out []Result

	single, err := runSingle(ctx, &cfg, filepath.Join(base, "single"))
	if single.Workload != "" {
		out = append(out, single)
	}
	if err != nil {
		return out, sum, err
	}
	sum.SingleMiBPerSec = single.MiBPerSec
	if single.Cost != nil {
		sum.SingleCPUSecPerGiB = single.Cost.CPUSecPerGiB
	}

	if err := settleWriteback(base, cfg.Progress); err != nil {
		return out, sum, err
	}
	rs, err := runReplicated(ctx, &cfg, filepath.Join(base, "cluster"))
	out = append(out, rs...)
	for _, r := range rs {
		switch r.Workload {
		case phaseCluster:
			sum.ClusterMiBPerSec = r.MiBPerSec
			sum.Ratio = div(r.MiBPerSec, single.MiBPerSec)
			sum.RatioMet = sum.Ratio >= ClusterRatioTarget
			sum.LatencyRate = latencyRate(&cfg, r)
			if c, nodes := r.combinedCost(); nodes > 0 {
				sum.ClusterCPUSecPerGiB = c.CPUSecPerGiB
			}
		case phaseRate:
			if r.Latency != nil && r.Latency.Count > 0 {
				sum.P50, sum.P99 = r.Latency.P50, r.Latency.P99
				sum.P99Met = r.Latency.P99 < ClusterP99Target && r.Errors == 0
			}
		}
	}
	return out, sum, err
}

// benchDataDir is where a run keeps its nodes: dir, or a fresh temporary
// directory named after prefix. cleanup removes what the run created (the
// node directories subdirs of a given dir, the whole temporary one) unless
// keep.
func benchDataDir(dir, prefix string, keep bool, subdirs ...string) (string, func(), error) {
	if dir == "" {
		d, err := os.MkdirTemp("", prefix)
		if err != nil {
			return "", nil, fmt.Errorf("bench: data dir: %w", err)
		}
		if keep {
			return d, func() {}, nil
		}
		return d, func() { _ = os.RemoveAll(d) }, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("bench: data dir: %w", err)
	}
	if keep {
		return dir, func() {}, nil
	}
	return dir, func() {
		for _, sub := range subdirs {
			_ = os.RemoveAll(filepath.Join(dir, sub))
		}
	}, nil
}

// phase is the produce workload of one phase against brokers.
func (c *ClusterConfig) phase(workload, label string, bootstrap []string, acks string, rf int16) ProduceConfig {
	p := c.ProducerConfig
	p.Bootstrap, p.Acks, p.ReplicationFactor = bootstrap, acks, rf
	return ProduceConfig{
		ProducerConfig: p,
		Records:        c.Records,
		Bytes:          c.Bytes,
		Duration:       c.Duration,
		Label:          label,
		Proc:           c.Proc,
		Progress:       c.Progress,
		workload:       workload,
	}
}

// runSingle is phase 1: one node, a topic of replication factor 1, acks=1.
func runSingle(ctx context.Context, cfg *ClusterConfig, dir string) (Result, error) {
	specs, err := nodeSpecs(dir, 1)
	if err != nil {
		return Result{}, err
	}
	nodes, err := startCluster(ctx, cfg.ServeCommand, specs, cfg.Sets)
	if err != nil {
		return Result{}, err
	}
	defer nodes.stop()
	pc := cfg.phase(phaseSingle, "strait-1node", nodes.addrs(), "1", 1)
	pc.BrokerPID = nodes.pids()[0]
	return RunProduce(ctx, pc)
}

// runReplicated is phases 2 and 3 on one cluster: as fast as acks=all
// allows, then at LatencyFraction of that rate.
func runReplicated(ctx context.Context, cfg *ClusterConfig, dir string) ([]Result, error) {
	specs, err := nodeSpecs(dir, cfg.Nodes)
	if err != nil {
		return nil, err
	}
	nodes, err := startCluster(ctx, cfg.ServeCommand, specs, cfg.Sets)
	if err != nil {
		return nil, err
	}
	defer nodes.stop()
	addrs := nodes.addrs()
	if err := createReplicatedTopic(ctx, addrs, cfg.Topic, cfg.Partitions, cfg.Nodes, cfg.MinInsyncReplicas); err != nil {
		return nil, err
	}
	label := fmt.Sprintf("strait-%dnode", cfg.Nodes)

	pc := cfg.phase(phaseCluster, label, addrs, "all", int16(cfg.Nodes))
	pc.NodePIDs = nodes.pids()
	full, err := RunProduce(ctx, pc)
	out := []Result{full}
	if err != nil {
		return out, err
	}
	if full.RecordsPerSec <= 0 {
		return out, errors.New("bench: the cluster acknowledged nothing; no rate for the latency phase")
	}

	if err := settleWriteback(dir, cfg.Progress); err != nil {
		return out, err
	}
	pc = cfg.phase(phaseRate, label, addrs, "all", int16(cfg.Nodes))
	pc.NodePIDs = nodes.pids()
	pc.Records, pc.Bytes = 0, 0
	pc.Duration = cfg.LatencyDuration
	pc.Rate = latencyRate(cfg, full)
	paced, err := RunProduce(ctx, pc)
	return append(out, paced), err
}

// latencyRate is the records per second of the latency phase.
func latencyRate(cfg *ClusterConfig, full Result) float64 {
	return cfg.LatencyFraction * full.RecordsPerSec
}
