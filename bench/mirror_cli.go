package bench

import (
	"context"
	"flag"
	"io"
	"time"
)

// cmdMirror is `strait bench mirror`: issue 5's mirroring benchmark. It
// starts its own source and destination, so it has no --target or --peer.
func cmdMirror(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strait bench mirror", flag.ContinueOnError)
	var c commonFlags
	c.registerProducer(fs, false)
	c.registerOutput(fs)
	destTopic := fs.String("dest-topic", "", `the destination's topic of the produce phase (default: --topic + "-dest")`)
	mirrorName := fs.String("mirror-name", "strait-bench", "name of the mirror created on the destination")
	var nf nodeFlags
	nf.register(fs, "both nodes'", " (source/node1.log, destination/node1.log)")
	records := fs.Int64("records", 0, "records of each throughput phase (destination produce, source produce and fetch, mirror catch-up)")
	var bytes sizeFlag
	fs.Var(&bytes, "bytes", "value bytes of each throughput phase (default 1GiB without --records)")
	fraction := fs.Float64("steady-fraction", 0.5, "steady-state produce rate, as a fraction of min(source fetch, destination produce)")
	steady := fs.Duration("steady-duration", 30*time.Second, "length of the steady state")
	sample := fs.Duration("sample-every", 200*time.Millisecond, "lag sampling period of the steady state")
	stall := fs.Duration("stall-timeout", 60*time.Second, "fail when the mirror gains nothing for this long")
	var fc fetchFlags
	fc.register(fs)
	if code := parseFlags(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	if *records == 0 && bytes == 0 {
		bytes = gib
	}
	argv, progress, code := nf.serveArgs(fs, &c, stderr)
	if code >= 0 {
		return code
	}
	p := c.producer(&Broker{})
	p.Acks, p.ReplicationFactor = "1", 1
	cfg := MirrorConfig{
		ProducerConfig: p,
		Fetch:          fc.config(),
		ServeCommand:   argv,
		Sets:           nf.sets,
		DataDir:        nf.dataDir,
		KeepData:       nf.keep,
		Records:        *records,
		Bytes:          int64(bytes),
		DestTopic:      *destTopic,
		MirrorName:     *mirrorName,
		SteadyFraction: *fraction,
		SteadyDuration: *steady,
		SampleEvery:    *sample,
		StallTimeout:   *stall,
		Progress:       progress,
	}
	if !checkConfig(fs, cfg, stderr) {
		return 2
	}

	rep := &MirrorReport{Report: Report{Command: "mirror", Config: map[string]any{}}}
	return c.runReported(ctx, fs, &rep.Report, rep, stdout, stderr, func() error {
		res, sum, err := RunMirror(ctx, cfg)
		rep.Results, rep.Mirror = res, sum
		return err
	})
}
