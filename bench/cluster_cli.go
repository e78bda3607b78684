package bench

import (
	"context"
	"flag"
	"io"
	"time"
)

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
	var nf nodeFlags
	nf.register(fs, "every node's", " (node<N>.log)")
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
	argv, progress, code := nf.serveArgs(fs, &c, stderr)
	if code >= 0 {
		return code
	}
	cfg := ClusterConfig{
		ProducerConfig:    c.producer(&Broker{}),
		ServeCommand:      argv,
		Sets:              nf.sets,
		Nodes:             *nodes,
		MinInsyncReplicas: *minISR,
		Rounds:            *rounds,
		DataDir:           nf.dataDir,
		KeepData:          nf.keep,
		Records:           *records,
		Bytes:             int64(bytes),
		Duration:          *duration,
		LatencyFraction:   *fraction,
		LatencyDuration:   *latency,
		Progress:          progress,
	}
	if !checkConfig(fs, cfg, stderr) {
		return 2
	}

	rep := &Report{Command: "cluster", Config: map[string]any{}}
	return c.runReported(ctx, fs, rep, rep, stdout, stderr, func() error {
		res, sum, err := RunCluster(ctx, cfg)
		rep.Results, rep.Cluster = res, sum
		return err
	})
}
