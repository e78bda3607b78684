package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// cmdScale is `strait bench scale`: issue 29's scale rows. It starts its
// own Strait nodes and, with --peer kfake, its own kfake.
func cmdScale(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strait bench scale", flag.ContinueOnError)
	var c commonFlags
	c.registerProducer(fs, false)
	c.registerOutput(fs)
	c.peerNodes = 1
	fs.StringVar(&c.peer, "peer", "", `"kfake": run the same steps against franz-go's kfake too (no restart: kfake keeps nothing on disk)`)
	fs.StringVar(&c.peerExec, "peer-exec", "", `command line of the kfake child (default: kfake-serve beside this executable, else on PATH)`)
	noStrait := fs.Bool("no-strait", false, "run only the --peer")
	steps := fs.String("partitions-steps", "100,1000,10000", "partition counts, one fresh node each, comma-separated")
	perTopic := fs.Int("topic-partitions", 10, "partitions a topic: a step of N partitions has N/this topics")
	conns := fs.Int("connections", ScaleTargetConnections, "idle client connections, each having sent ApiVersions and Metadata")
	mdReqs := fs.Int("metadata-requests", 200, "Metadata requests timed per kind (all topics, one topic)")
	prefill := fs.Int("prefill-records", 2, "records written to every partition before the idle figures")
	produceFor := fs.Duration("produce-duration", 10*time.Second, "length of each produce phase (to all partitions, and the 8-partition baseline)")
	settle := fs.Duration("settle", 2*time.Second, "how long a broker is left alone before each reading of its memory and open files")
	var nf nodeFlags
	nf.register(fs, "every node's", "")
	// The producer's settings for this workload: acks=1 (as issue 29's
	// produce rows), topics named scale-NNNNN by default.
	c.acks = "1"
	_ = fs.Set("topic", "scale")
	if code := parseFlags(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	stepList, err := parseSteps(*steps)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --partitions-steps: %v\n", fs.Name(), err)
		return 2
	}
	if c.peer != "" && c.peer != "kfake" {
		fmt.Fprintf(stderr, "%s: --peer %q: the only peer is kfake\n", fs.Name(), c.peer)
		return 2
	}
	argv, progress, code := nf.serveArgs(fs, &c, stderr)
	if code >= 0 {
		return code
	}
	if *noStrait {
		argv = nil
	}
	cfg := ScaleConfig{
		ProducerConfig:   c.producer(&Broker{}),
		Steps:            stepList,
		TopicPartitions:  *perTopic,
		Connections:      *conns,
		MetadataRequests: *mdReqs,
		PrefillRecords:   *prefill,
		ProduceDuration:  *produceFor,
		Settle:           *settle,
		ServeCommand:     argv,
		Sets:             nf.sets,
		DataDir:          nf.dataDir,
		KeepData:         nf.keep,
		Progress:         progress,
	}
	if c.peer == "kfake" {
		cfg.StartPeer = func(ctx context.Context) (*Broker, error) { return c.startKfake(ctx, stderr) }
	}
	if !checkConfig(fs, cfg, stderr) {
		return 2
	}
	rep := &Report{Command: "scale", Config: map[string]any{}}
	return c.runReported(ctx, fs, rep, rep, stdout, stderr, func() error {
		sum, err := RunScale(ctx, cfg)
		rep.Scale = sum
		return err
	})
}

// parseSteps reads "100,1000,10000".
func parseSteps(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a partition count", f)
		}
		out = append(out, n)
	}
	return out, nil
}
