package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ReassignConfig is the reassignment workload (issue 32): produce
// throughput to a three-node cluster (RF=3, acks=all) in its steady state,
// then the same while a reassignment (KIP-455) moves a prefilled topic's
// replicas to a fourth node, then while it moves them back throttled
// (KIP-73). The producer's topic lives on nodes 1-3 only, so the move's
// copying competes with it for the leaders' disks, CPU and network, as an
// operator adding a broker to a loaded cluster sees.
type ReassignConfig struct {
	ProducerConfig

	// ServeCommand and Sets start the nodes, as in ClusterConfig.
	ServeCommand []string
	Sets         []string
	DataDir      string
	KeepData     bool

	// MoveTopic is the prefilled topic that moves, MovePartitions its
	// partitions (RF=2 on nodes 1-3) and MoveBytes its value bytes.
	MoveTopic      string
	MovePartitions int32
	MoveBytes      int64
	// Throttle is the replication throttle of the second move, bytes/s
	// (leader.replication.throttled.rate and
	// follower.replication.throttled.rate on every node).
	Throttle int64
	// Duration is each produce phase's length.
	Duration time.Duration

	Proc     *ProcReader
	Progress io.Writer
}

// ReassignSummary is the reassignment workload's figures.
type ReassignSummary struct {
	Nodes           int     `json:"nodes"`
	MoveTopic       string  `json:"move_topic"`
	MovePartitions  int32   `json:"move_partitions"`
	MoveBytes       int64   `json:"move_bytes"`
	Throttle        int64   `json:"throttle_bytes_per_sec"`
	SteadyMiBPerSec float64 `json:"steady_mib_per_sec"`
	// MovingMiBPerSec and ThrottledMiBPerSec are the produce throughput
	// while the unthrottled and the throttled move ran.
	MovingMiBPerSec    float64 `json:"moving_mib_per_sec"`
	ThrottledMiBPerSec float64 `json:"throttled_mib_per_sec"`
	// MoveTook and ThrottledMoveTook are how long each move took from the
	// request to the reassignment's completion; when longer than the
	// produce phase, the producer ran wholly during the move.
	MoveTook          time.Duration `json:"move_took_ns"`
	ThrottledMoveTook time.Duration `json:"throttled_move_took_ns"`
}

// Workload names of the three phases.
const (
	phaseSteady         = "produce-steady"
	phaseMoving         = "produce-during-move"
	phaseMovingThrottle = "produce-during-throttled-move"
)

// reassignNodes is the cluster: three nodes for the topics, a fourth that
// receives the move.
const reassignNodes = 4

func (c *ReassignConfig) fill() {
	c.ReplicationFactor = 3
	c.Acks = "all"
	c.ProducerConfig.fillForOwnNodes()
	if c.MoveTopic == "" {
		c.MoveTopic = c.Topic + "-moving"
	}
	if c.MovePartitions == 0 {
		c.MovePartitions = 6
	}
}

func (c *ReassignConfig) validate() error {
	switch {
	case len(c.ServeCommand) == 0:
		return errors.New("bench: reassign needs the command that runs `strait serve`")
	case c.MovePartitions < 1:
		return fmt.Errorf("bench: %d partitions to move: want at least 1", c.MovePartitions)
	case c.MoveBytes <= 0:
		return errors.New("bench: reassign needs --move-bytes > 0")
	case c.Throttle <= 0:
		return errors.New("bench: reassign needs --throttle > 0")
	case c.Duration <= 0:
		return errors.New("bench: reassign needs --duration > 0")
	}
	return c.ProducerConfig.Validate()
}

// RunReassign runs the workload. The Results are the three produce phases
// (fewer when an error ends the run).
func RunReassign(ctx context.Context, cfg ReassignConfig) ([]Result, *ReassignSummary, error) {
	cfg.fill()
	if err := cfg.validate(); err != nil {
		return nil, nil, err
	}
	base, cleanup, err := benchDataDir(cfg.DataDir, "strait-bench-reassign-", cfg.KeepData, "reassign")
	if err != nil {
		return nil, nil, err
	}
	defer cleanup()
	sum := &ReassignSummary{Nodes: reassignNodes, MoveTopic: cfg.MoveTopic, MovePartitions: cfg.MovePartitions, Throttle: cfg.Throttle}
	specs, err := nodeSpecs(filepath.Join(base, "reassign"), reassignNodes)
	if err != nil {
		return nil, sum, err
	}
	nodes, err := startCluster(ctx, cfg.ServeCommand, specs, cfg.Sets)
	if err != nil {
		return nil, sum, err
	}
	defer nodes.stop()
	label := fmt.Sprintf("strait-%dnode", reassignNodes)
	cfg.Bootstrap = nodes.addrs()
	cl, err := kgo.NewClient(kgo.SeedBrokers(nodes.addrs()...))
	if err != nil {
		return nil, sum, fmt.Errorf("bench: admin client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	// Both topics on nodes 1-3: the producer's RF=3, the moving one's
	// RF=2 (partition i on nodes i%3+1 and (i+1)%3+1).
	produceOn := make([][]int32, cfg.Partitions)
	for i := range produceOn {
		produceOn[i] = []int32{int32(i%3 + 1), int32((i+1)%3 + 1), int32((i+2)%3 + 1)}
	}
	moveFrom := make([][]int32, cfg.MovePartitions)
	moveTo := make([][]int32, cfg.MovePartitions)
	for i := range moveFrom {
		moveFrom[i] = []int32{int32(i%3 + 1), int32((i+1)%3 + 1)}
		moveTo[i] = []int32{reassignNodes, moveFrom[i][1]}
	}
	if err := createAssignedTopic(ctx, cl, reassignNodes, cfg.Topic, produceOn, 2); err != nil {
		return nil, sum, err
	}
	if err := createAssignedTopic(ctx, cl, reassignNodes, cfg.MoveTopic, moveFrom, 1); err != nil {
		return nil, sum, err
	}

	produce := func(workload string) func() (Result, error) {
		return func() (Result, error) {
			return RunProduce(ctx, ProduceConfig{
				ProducerConfig: cfg.ProducerConfig, Duration: cfg.Duration, Label: label,
				NodePIDs: nodes.pids(), Proc: cfg.Proc, Progress: cfg.Progress, workload: workload,
			})
		}
	}
	if err := settleWriteback(base, cfg.Progress); err != nil {
		return nil, sum, err
	}
	var out []Result
	steady, err := produce(phaseSteady)()
	out = append(out, steady)
	if err != nil {
		return out, sum, err
	}
	sum.SteadyMiBPerSec = steady.MiBPerSec

	// The data to move, written with acks=1 as fast as it goes.
	fill := cfg.ProducerConfig
	fill.Topic, fill.Acks, fill.ReplicationFactor = cfg.MoveTopic, "1", 2
	prefill, err := RunProduce(ctx, ProduceConfig{ProducerConfig: fill, Bytes: cfg.MoveBytes, workload: "prefill"})
	if err != nil {
		return out, sum, err
	}
	sum.MoveBytes = prefill.Bytes

	// The move to node 4, unthrottled, then back, throttled.
	for _, m := range []struct {
		workload string
		from, to [][]int32
		throttle int64
		mibps    *float64
		took     *time.Duration
	}{
		{phaseMoving, moveFrom, moveTo, 0, &sum.MovingMiBPerSec, &sum.MoveTook},
		{phaseMovingThrottle, moveTo, moveFrom, cfg.Throttle, &sum.ThrottledMiBPerSec, &sum.ThrottledMoveTook},
	} {
		if err := settleWriteback(base, cfg.Progress); err != nil {
			return out, sum, err
		}
		res, took, err := produceDuringMove(ctx, adm, cfg.MoveTopic, m.from, m.to, m.throttle, produce(m.workload))
		if res.Workload != "" {
			out = append(out, res)
		}
		*m.mibps, *m.took = res.MiBPerSec, took
		if err != nil {
			return out, sum, err
		}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "%s: produce %.1f MiB/s; the move of %.1f MiB took %s\n",
				m.workload, res.MiBPerSec, float64(sum.MoveBytes)/mib, fmtDur(took))
		}
	}
	return out, sum, nil
}
