package bench

import (
	"context"
	"flag"
	"io"
	"time"
)

// cmdReassign is `strait bench reassign`: produce throughput during a
// reassignment (issue 32). It starts its own four nodes.
func cmdReassign(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strait bench reassign", flag.ContinueOnError)
	var c commonFlags
	c.registerProducer(fs, false)
	c.registerOutput(fs)
	var nf nodeFlags
	nf.register(fs, "every node's", " (node<N>.log)")
	moveTopic := fs.String("move-topic", "", `the prefilled topic that moves (default: --topic + "-moving")`)
	movePartitions := fs.Int("move-partitions", 6, "partitions of the moving topic")
	moveBytes := sizeFlag(gib)
	fs.Var(&moveBytes, "move-bytes", "value bytes prefilled into the moving topic")
	throttle := sizeFlag(64 << 20)
	fs.Var(&throttle, "throttle", "replication throttle of the move back, bytes per second")
	duration := fs.Duration("duration", 10*time.Second, "length of each produce phase")
	if code := parseFlags(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	argv, progress, code := nf.serveArgs(fs, &c, stderr)
	if code >= 0 {
		return code
	}
	cfg := ReassignConfig{
		ProducerConfig: c.producer(&Broker{}),
		ServeCommand:   argv,
		Sets:           nf.sets,
		DataDir:        nf.dataDir,
		KeepData:       nf.keep,
		MoveTopic:      *moveTopic,
		MovePartitions: int32(*movePartitions),
		MoveBytes:      int64(moveBytes),
		Throttle:       int64(throttle),
		Duration:       *duration,
		Progress:       progress,
	}
	if !checkConfig(fs, cfg, stderr) {
		return 2
	}
	rep := &Report{Command: "reassign", Config: map[string]any{}}
	return c.runReported(ctx, fs, rep, rep, stdout, stderr, func() error {
		res, sum, err := RunReassign(ctx, cfg)
		rep.Results, rep.Reassign = res, sum
		return err
	})
}
