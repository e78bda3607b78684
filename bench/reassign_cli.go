package bench

import (
	"context"
	"flag"
	"fmt"
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
	serveCmd := fs.String("serve-cmd", "", `command line reaching "strait serve", split on spaces (default: this executable + " serve")`)
	var sets setFlags
	fs.Var(&sets, "set", "key=value passed to every node's strait serve --set; repeatable")
	dataDir := fs.String("data-dir", "", "where the nodes keep their data and logs (default: a temporary directory)")
	keep := fs.Bool("keep-data", false, "keep the nodes' data and logs (node<N>.log) after the run")
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
	argv, progress, code := c.serveArgs(fs, *serveCmd, stderr)
	if code >= 0 {
		return code
	}
	cfg := ReassignConfig{
		ProducerConfig: c.producer(&Broker{}),
		ServeCommand:   argv,
		Sets:           sets,
		DataDir:        *dataDir,
		KeepData:       *keep,
		MoveTopic:      *moveTopic,
		MovePartitions: int32(*movePartitions),
		MoveBytes:      int64(moveBytes),
		Throttle:       int64(throttle),
		Duration:       *duration,
		Progress:       progress,
	}
	check := cfg
	check.fill()
	if err := check.validate(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return 2
	}
	rep := &Report{Command: "reassign", Config: map[string]any{}}
	return c.runReported(ctx, fs, rep, rep, stdout, stderr, func() error {
		res, sum, err := RunReassign(ctx, cfg)
		rep.Results, rep.Reassign = res, sum
		return err
	})
}
