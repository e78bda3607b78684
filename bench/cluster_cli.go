package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// setFlags collects repeated --set key=value arguments in order.
type setFlags []string

func (s *setFlags) String() string { return strings.Join(*s, " ") }

func (s *setFlags) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("%q is not key=value", v)
	}
	*s = append(*s, v)
	return nil
}

// cmdCluster is `strait bench cluster`: the replication benchmark (issue 4, targets of issue 29).
// It starts its own brokers, so it has no --target or --peer.
func cmdCluster(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strait bench cluster", flag.ContinueOnError)
	var c commonFlags
	c.registerProducer(fs, false)
	c.registerOutput(fs)
	nodes := fs.Int("nodes", 3, "nodes of the cluster, all controller.quorum.voters; also the replication factor")
	minISR := fs.Int("min-insync-replicas", 2, "min.insync.replicas of the cluster's topic")
	rounds := fs.Int("rounds", 3, "pairs of throughput phases (single node, then cluster); the report gives the round with the median ratio")
	serveCmd := fs.String("serve-cmd", "", `command line reaching "strait serve", split on spaces (default: this executable + " serve")`)
	var sets setFlags
	fs.Var(&sets, "set", "key=value passed to every node's strait serve --set; repeatable")
	dataDir := fs.String("data-dir", "", "where the nodes keep their data and logs (default: a temporary directory)")
	keep := fs.Bool("keep-data", false, "keep the nodes' data and logs (node<N>.log) after the run")
	records := fs.Int64("records", 0, "end each throughput phase after this many records")
	var bytes sizeFlag
	fs.Var(&bytes, "bytes", "end each throughput phase after this many value bytes (default 1GiB when neither --records nor --duration)")
	duration := fs.Duration("duration", 0, "end each throughput phase after this long")
	fraction := fs.Float64("latency-fraction", 0.5, "rate of the latency phase, as a fraction of the cluster's acks=all throughput")
	latency := fs.Duration("latency-duration", 30*time.Second, "length of the latency phase")
	if code := parseFlags(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	if *records == 0 && bytes == 0 && *duration == 0 {
		bytes = gib
	}
	argv, progress, code := c.serveArgs(fs, *serveCmd, stderr)
	if code >= 0 {
		return code
	}
	cfg := ClusterConfig{
		ProducerConfig:    c.producer(&Broker{}),
		ServeCommand:      argv,
		Sets:              sets,
		Nodes:             *nodes,
		MinInsyncReplicas: *minISR,
		Rounds:            *rounds,
		DataDir:           *dataDir,
		KeepData:          *keep,
		Records:           *records,
		Bytes:             int64(bytes),
		Duration:          *duration,
		LatencyFraction:   *fraction,
		LatencyDuration:   *latency,
		Progress:          progress,
	}
	check := cfg
	check.fill()
	if err := check.validate(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return 2
	}

	rep := &Report{Command: "cluster", Config: map[string]any{}}
	return c.runReported(ctx, fs, rep, rep, stdout, stderr, func() error {
		res, sum, err := RunCluster(ctx, cfg)
		rep.Results, rep.Cluster = res, sum
		return err
	})
}

// serveArgs is the command line reaching `strait serve` (serveCmd split on
// spaces; by default this executable + " serve") and where progress goes
// (nil with --quiet); code is the exit code when it fails, else -1.
func (c *commonFlags) serveArgs(fs *flag.FlagSet, serveCmd string, stderr io.Writer) (argv []string, progress io.Writer, code int) {
	argv = strings.Fields(serveCmd)
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintf(stderr, "%s: find this executable for strait serve: %v\n", fs.Name(), err)
			return nil, nil, 1
		}
		argv = []string{exe, "serve"}
	}
	if !c.quiet {
		progress = stderr
	}
	return argv, progress, -1
}
