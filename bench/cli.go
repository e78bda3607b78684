package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/strait-io/strait/bench/limits"
)

// commonFlags are the flags of every workload: where to run, the producer
// settings, and the output.
type commonFlags struct {
	target     string
	targetName string
	targetCmd  string
	brokerPID  int
	peer       string
	peerExec   string
	peerNodes  int
	rounds     int
	tls        bool
	// tlsFiles is the run's CA and broker certificate when tls is set,
	// made by execute.
	tlsFiles *tlsMaterial

	topic       string
	partitions  int
	rf          int
	recordSize  sizeFlag
	batchBytes  sizeFlag
	linger      time.Duration
	acks        string
	compression string
	producers   int
	bufferBytes sizeFlag
	maxInflight int
	seed        uint64

	json       bool
	quiet      bool
	limits     bool
	limitsDir  string
	limitsTime time.Duration

	profileDir    string
	profileURL    string
	profileWindow time.Duration
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	c.registerTargets(fs)
	c.registerProducer(fs, true)
	c.registerOutput(fs)
	c.registerProfile(fs)
}

// registerProfile registers the profiling of the brokers (issue 29).
func (c *commonFlags) registerProfile(fs *flag.FlagSet) {
	fs.StringVar(&c.profileDir, "profile", "", "write each broker's Go profiles over each measured workload into this directory, "+
		"<workload>-<broker>-{cpu,allocs,heap}.pb.gz (read them with go tool pprof); a --target-cmd broker is given "+
		"--set metrics.listener=127.0.0.1:<free port> --set metrics.pprof.enable=true, kfake-serve --pprof")
	fs.StringVar(&c.profileURL, "profile-url", "", "with --profile, where a --target not started by --target-cmd serves net/http/pprof "+
		"(http://host:port of a Strait metrics.listener with metrics.pprof.enable=true)")
	fs.DurationVar(&c.profileWindow, "profile-window", DefaultProfileWindow, "with --profile, the length of each CPU profile request "+
		"(whole seconds); the workload's CPU profile is its windows merged")
}

// profiler is the Profiler of a broker serving net/http/pprof at url, nil
// without --profile.
func (c *commonFlags) profiler(url string) *Profiler {
	if c.profileDir == "" {
		return nil
	}
	return &Profiler{URL: url, Dir: c.profileDir, Window: c.profileWindow}
}

// registerTargets registers where the workload runs.
func (c *commonFlags) registerTargets(fs *flag.FlagSet) {
	fs.StringVar(&c.target, "target", "", "bootstrap host:port[,host:port] of the broker under test")
	fs.StringVar(&c.targetName, "target-name", "strait", "label of --target in the results")
	fs.StringVar(&c.targetCmd, "target-cmd", "", "start the target with this command line (split on spaces) and measure it")
	fs.IntVar(&c.brokerPID, "broker-pid", 0, "pid of the --target broker, to measure its CPU and memory from /proc")
	fs.StringVar(&c.peer, "peer", "", `"kfake": run the same workload against franz-go's kfake too`)
	fs.StringVar(&c.peerExec, "peer-exec", "", `command line of the kfake child, the kfake-serve program (default: kfake-serve beside this executable, else on PATH; make bench builds bin/kfake-serve)`)
	fs.IntVar(&c.peerNodes, "peer-brokers", 1, "kfake brokers")
	fs.IntVar(&c.rounds, "rounds", 1, "run the workload this many times on each broker, alternating the brokers, and report each row's median round (rounds.go)")
	fs.BoolVar(&c.tls, "tls", false, "reach the brokers over TLS: a CA and a broker certificate made for the run, kfake listening with TLS, "+
		"--target-cmd given --set ssl.keystore.*/ssl.truststore.* (PEM) for its SSL listener")
}

// registerProducer registers the producer settings; without acksAndRF,
// the workload sets acks and the replication factor itself.
func (c *commonFlags) registerProducer(fs *flag.FlagSet, acksAndRF bool) {
	d := DefaultProducerConfig()
	c.acks, c.rf = d.Acks, int(d.ReplicationFactor)
	fs.StringVar(&c.topic, "topic", d.Topic, "topic (created when missing)")
	fs.IntVar(&c.partitions, "partitions", int(d.Partitions), "partitions of a created topic")
	if acksAndRF {
		fs.IntVar(&c.rf, "replication-factor", int(d.ReplicationFactor), "replication factor of a created topic (-1: broker default)")
	}
	c.recordSize = sizeFlag(d.RecordSize)
	fs.Var(&c.recordSize, "record-size", "value bytes per record (incompressible)")
	c.batchBytes = sizeFlag(d.BatchBytes)
	fs.Var(&c.batchBytes, "batch-bytes", "max batch size (batch.size)")
	fs.DurationVar(&c.linger, "linger", d.Linger, "linger (linger.ms)")
	if acksAndRF {
		fs.StringVar(&c.acks, "acks", d.Acks, "all, 1 or 0")
	}
	fs.StringVar(&c.compression, "compression", d.Compression, "none, gzip, snappy, lz4 or zstd")
	fs.IntVar(&c.producers, "producers", d.Producers, "producer clients")
	c.bufferBytes = sizeFlag(d.BufferBytes)
	fs.Var(&c.bufferBytes, "buffer-bytes", "bytes each producer buffers (buffer.memory)")
	fs.IntVar(&c.maxInflight, "max-inflight", d.MaxInflight, "produce requests in flight per broker with acks 0 or 1")
	fs.Uint64Var(&c.seed, "seed", d.Seed, "seed of the record values")
}

// registerOutput registers what is printed and the machine-limit probes.
func (c *commonFlags) registerOutput(fs *flag.FlagSet) {
	fs.BoolVar(&c.json, "json", false, "print the report as JSON")
	fs.BoolVar(&c.quiet, "quiet", false, "no progress line")
	fs.BoolVar(&c.limits, "limits", true, "probe and print the machine's limits first")
	fs.StringVar(&c.limitsDir, "limits-dir", os.TempDir(), "where the limit probes write (use the broker's log dir)")
	fs.DurationVar(&c.limitsTime, "limits-time", 500*time.Millisecond, "how long each limit probe runs")
}

func (c *commonFlags) producer(b *Broker) ProducerConfig {
	return ProducerConfig{
		Bootstrap:         b.Addrs,
		TLS:               b.TLS,
		Topic:             c.topic,
		Partitions:        int32(c.partitions),
		ReplicationFactor: int16(c.rf),
		RecordSize:        int(c.recordSize),
		BatchBytes:        int32(c.batchBytes),
		Linger:            c.linger,
		Acks:              c.acks,
		Compression:       c.compression,
		Producers:         c.producers,
		BufferBytes:       int(c.bufferBytes),
		MaxInflight:       c.maxInflight,
		Seed:              c.seed,
	}
}

// validate checks what the flag package cannot; the workloads check the
// rest when they start.
func (c *commonFlags) validate() error {
	if c.target == "" && c.targetCmd != "" {
		return fmt.Errorf("--target-cmd needs --target (the address it listens on)")
	}
	if c.peer != "" && c.peer != "kfake" {
		return fmt.Errorf("--peer %q: the only peer is kfake", c.peer)
	}
	if c.peerNodes < 1 {
		return fmt.Errorf("--peer-brokers %d < 1", c.peerNodes)
	}
	if c.rounds < 1 {
		return fmt.Errorf("--rounds %d < 1", c.rounds)
	}
	if c.target == "" && c.peer == "" {
		return fmt.Errorf("nothing to run against: give --target host:port and/or --peer kfake")
	}
	if c.profileDir != "" && c.target != "" && c.targetCmd == "" && c.profileURL == "" {
		return fmt.Errorf("--profile needs --target-cmd (the bench then turns the broker's pprof on) or --profile-url for --target")
	}
	if c.profileURL != "" && c.profileDir == "" {
		return fmt.Errorf("--profile-url needs --profile DIR")
	}
	if c.profileDir != "" && c.profileWindow < time.Second {
		return fmt.Errorf("--profile-window %v < 1s", c.profileWindow)
	}
	if c.tls && c.target != "" && c.targetCmd == "" {
		// The bench makes the certificate, so it must start the broker
		// that serves it.
		return fmt.Errorf("--tls needs --target-cmd with --target: the broker must serve the certificate this run makes")
	}
	p := c.producer(&Broker{Addrs: []string{"-"}})
	p.fill()
	return p.Validate()
}

// runFn runs one workload against one broker.
type runFn func(ctx context.Context, b *Broker, progress io.Writer) ([]Result, error)

// execute runs the workload against the target, then against a fresh
// kfake, and prints both with their ratio. Each broker runs alone: the two
// cores are not shared between them. With --rounds N it does so N times
// and reports each row's median round (rounds.go).
func (c *commonFlags) execute(ctx context.Context, cmd string, fs *flag.FlagSet, stdout, stderr io.Writer, run runFn) int {
	name := fs.Name()
	if err := c.validate(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	rep := &Report{Command: cmd, Config: map[string]any{}}
	fs.VisitAll(func(f *flag.Flag) { rep.Config[f.Name] = f.Value.String() })
	var progress io.Writer
	if !c.quiet {
		progress = stderr
	}
	if !c.json {
		fmt.Fprintf(stdout, "strait bench %s: %s\n", cmd, c.describe(fs))
	}
	if c.limits {
		l, err := limits.Run(ctx, limits.Config{Dir: c.limitsDir, Time: c.limitsTime})
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
		rep.Limits = &l
	}
	if c.tls {
		m, err := newTLSMaterial(c.targetHosts())
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
		defer m.close()
		c.tlsFiles = m
	}

	var brokers []func() (*Broker, error)
	if c.target != "" {
		brokers = append(brokers, func() (*Broker, error) { return c.startTarget(ctx, stderr) })
	}
	if c.peer == "kfake" {
		brokers = append(brokers, func() (*Broker, error) { return c.startKfake(ctx, stderr) })
	}
	failed := false
	var rounds [][]Result
	topic := c.topic
	for round := 1; round <= c.rounds && ctx.Err() == nil; round++ {
		if progress != nil && c.rounds > 1 {
			fmt.Fprintf(progress, "round %d of %d\n", round, c.rounds)
		}
		if round > 1 {
			// A topic of its own, so every round starts as the first
			// did: a target that keeps its data would otherwise find
			// the topic filled and skip a consume run's prefill.
			c.topic = fmt.Sprintf("%s-round%d", topic, round)
		}
		var results []Result
		for _, start := range brokers {
			b, err := start()
			if err != nil {
				rep.Errors = append(rep.Errors, err.Error())
				failed = true
				continue
			}
			res, err := run(ctx, b, progress)
			if cerr := b.Close(); cerr != nil && err == nil {
				err = cerr
			}
			for _, r := range res {
				// A workload that failed to start has no result to show.
				if r.Workload != "" {
					results = append(results, r)
				}
			}
			if err != nil {
				rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", b.Label, err))
				failed = true
			}
			if ctx.Err() != nil {
				break
			}
		}
		rounds = append(rounds, results)
	}
	c.topic = topic
	rep.Results = medianRounds(rounds)
	if c.target != "" && c.peer != "" {
		rep.Ratios = Ratios(rep.Results, c.targetName, "kfake")
	}
	if c.json {
		if err := rep.WriteJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 1
		}
	} else {
		rep.WriteText(stdout)
	}
	if failed {
		return 1
	}
	return 0
}

// describe is the header line: every flag the workload runs with that
// shapes the load.
func (c *commonFlags) describe(fs *flag.FlagSet) string {
	skip := map[string]bool{
		"target": true, "target-name": true, "target-cmd": true, "broker-pid": true,
		"peer": true, "peer-exec": true, "peer-brokers": true,
		"json": true, "quiet": true, "limits": true, "limits-dir": true, "limits-time": true,
		"profile": true, "profile-url": true, "profile-window": true,
		"serve-cmd": true, "data-dir": true, "keep-data": true,
	}
	var parts []string
	fs.VisitAll(func(f *flag.Flag) {
		if !skip[f.Name] {
			parts = append(parts, f.Name+"="+f.Value.String())
		}
	})
	return strings.Join(parts, " ")
}

func (c *commonFlags) startTarget(ctx context.Context, stderr io.Writer) (*Broker, error) {
	addrs := strings.Split(c.target, ",")
	if c.targetCmd == "" {
		return &Broker{Label: c.targetName, Addrs: addrs, PID: c.brokerPID, Profile: c.profiler(c.profileURL)}, nil
	}
	argv := strings.Fields(c.targetCmd)
	if c.tlsFiles != nil {
		argv = append(argv, c.tlsFiles.serveArgs()...)
	}
	var profileURL string
	if c.profileDir != "" {
		// Later --set values win, so these override the command's own.
		addr, err := freeLoopbackAddr()
		if err != nil {
			return nil, err
		}
		argv = append(argv, "--set", "metrics.listener="+addr, "--set", "metrics.pprof.enable=true")
		profileURL = "http://" + addr
	}
	b, err := StartCommand(ctx, c.targetName, argv, addrs[0], io.Discard, stderr)
	if err != nil {
		return nil, err
	}
	b.Addrs = addrs
	b.Profile = c.profiler(profileURL)
	if c.tlsFiles != nil {
		b.TLS = c.tlsFiles.client
	}
	return b, nil
}

// targetHosts are the hosts of --target, which the run's broker
// certificate names.
func (c *commonFlags) targetHosts() []string {
	var hosts []string
	for a := range strings.SplitSeq(c.target, ",") {
		if h, _, err := net.SplitHostPort(a); err == nil {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

func (c *commonFlags) startKfake(ctx context.Context, stderr io.Writer) (b *Broker, err error) {
	var serveArgs []string
	var profileURL string
	if c.profileDir != "" {
		addr, err := freeLoopbackAddr()
		if err != nil {
			return nil, err
		}
		serveArgs = append(serveArgs, "--pprof", addr)
		profileURL = "http://" + addr
		defer func() {
			if b != nil {
				b.Profile = c.profiler(profileURL)
			}
		}()
	}
	if m := c.tlsFiles; m != nil {
		serveArgs = append(serveArgs, "--tls-keystore", m.keystore)
		defer func() {
			if b != nil {
				b.TLS = m.client
			}
		}()
	}
	argv := strings.Fields(c.peerExec)
	if len(argv) == 0 {
		exe, err := kfakeServeProgram()
		if err != nil {
			return nil, err
		}
		argv = []string{exe}
	}
	return StartKfakeProcess(ctx, argv, c.peerNodes, stderr, serveArgs...)
}

// kfakeServeProgram finds the kfake-serve program: beside this executable
// (bin/kfake-serve next to bin/strait, as make bench builds them), else on
// PATH.
func kfakeServeProgram() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "kfake-serve")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("kfake-serve"); err == nil {
		return p, nil
	}
	return "", errors.New(`bench: --peer kfake: no kfake-serve program beside this executable or on PATH; ` +
		`build it with "make bench-peer" (go build -o bin/kfake-serve ./bench/cmd/kfake-serve) or give --peer-exec`)
}

// fetchFlags are the consumer settings of consume and e2e.
type fetchFlags struct {
	maxBytes, maxPartBytes sizeFlag
}

func (f *fetchFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.maxBytes, "fetch-max-bytes", "fetch.max.bytes (default kgo's 50MiB)")
	fs.Var(&f.maxPartBytes, "fetch-max-partition-bytes", "max.partition.fetch.bytes (default kgo's 1MiB)")
}

func (f *fetchFlags) config() FetchConfig {
	return FetchConfig{MaxBytes: int32(f.maxBytes), MaxPartitionBytes: int32(f.maxPartBytes)}
}

// reportWriter is a report in both of its output forms.
type reportWriter interface {
	WriteJSON(w io.Writer) error
	WriteText(w io.Writer)
}

// runReported is the frame of the commands that run one workload of their
// own (cluster, mirror): the header line, the machine's limits into rep
// when asked, run, then out as JSON or text. It returns the exit code: 1
// when run or the limits probe failed.
func (c *commonFlags) runReported(ctx context.Context, fs *flag.FlagSet, rep *Report, out reportWriter, stdout, stderr io.Writer, run func() error) int {
	fs.VisitAll(func(f *flag.Flag) { rep.Config[f.Name] = f.Value.String() })
	if !c.json {
		fmt.Fprintf(stdout, "strait bench %s: %s\n", rep.Command, c.describe(fs))
	}
	if c.limits {
		l, err := limits.Run(ctx, limits.Config{Dir: c.limitsDir, Time: c.limitsTime})
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
			return 1
		}
		rep.Limits = &l
	}
	err := run()
	if err != nil {
		rep.Errors = append(rep.Errors, err.Error())
	}
	if c.json {
		if werr := out.WriteJSON(stdout); werr != nil {
			fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), werr)
			return 1
		}
	} else {
		out.WriteText(stdout)
	}
	if err != nil {
		return 1
	}
	return 0
}
