package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/strait-io/strait/bench/limits"
)

const usage = `usage: strait bench <workload> [flags]

workloads:
  produce   produce throughput and latency; --transactional in transactions
            of --txn-records records
  consume   catch-up read from offset 0, then a tail read
  e2e       end-to-end latency at a fixed rate
  cluster   one strait node with acks=1 against a three-node cluster with
            RF=3 and acks=all, alternating in rounds, then latency at half
            the cluster's rate
  mirror    two single nodes: the destination's produce rate, the source's
            catch-up fetch rate, a mirror's catch-up of the same bytes and
            its lag at half the slower of the two rates
  reassign  produce to a three-node RF=3 cluster steady, then while a
            reassignment moves a prefilled topic to a fourth node, then
            while it moves back throttled
  scale     one node at 100, 1,000 and 10,000 partitions (--partitions-steps):
            topic creation, idle RSS and open files, Metadata latency, RSS
            with 1,000 connections, produce to every partition against 8,
            and the restart after a clean shutdown
  limits    this machine's ceilings: file append, fsync, loopback TCP, sendfile
  report    read the --json reports of the others and write RESULTS.md and
            a PNG chart: strait bench report --out F.md --chart F.png R.json... [storage-bench.txt]

Run against a broker with --target host:port, against franz-go's kfake with
--peer kfake, or both to print them side by side with their ratio.
"strait bench <workload> -h" lists a workload's flags.
`

// Main is `strait bench`: args are what follows "bench". It ends gracefully
// on SIGINT or SIGTERM, stopping any broker it started.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return MainContext(ctx, args, stdout, stderr)
}

// MainContext is Main with the caller's context.
func MainContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	// The progress line and a child broker's stderr write concurrently.
	stderr = &syncWriter{w: stderr}
	switch args[0] {
	case "produce":
		return cmdProduce(ctx, args[1:], stdout, stderr)
	case "consume":
		return cmdConsume(ctx, args[1:], stdout, stderr)
	case "e2e":
		return cmdE2E(ctx, args[1:], stdout, stderr)
	case "cluster":
		return cmdCluster(ctx, args[1:], stdout, stderr)
	case "mirror":
		return cmdMirror(ctx, args[1:], stdout, stderr)
	case "reassign":
		return cmdReassign(ctx, args[1:], stdout, stderr)
	case "scale":
		return cmdScale(ctx, args[1:], stdout, stderr)
	case "limits":
		return cmdLimits(ctx, args[1:], stdout, stderr)
	case "report":
		return cmdReport(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "strait bench: unknown workload %q\n\n%s", args[0], usage)
	return 2
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// parseFlags parses args into fs. It returns -1 to go on, or the exit code:
// 0 after -h, 2 after a bad flag, which it names.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) int {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fmt.Fprintf(stdout, "usage: %s [flags]\n\nflags:\n", fs.Name())
		fs.PrintDefaults()
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "%s: %s\nrun '%s -h' for the flags\n", fs.Name(), flagError(err), fs.Name())
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2
	}
	return -1
}

// flagError rewords the flag package's "flag provided but not defined: -x"
// as "unknown flag --x", the spelling our usage uses.
func flagError(err error) string {
	const undefined = "flag provided but not defined: -"
	if name, ok := strings.CutPrefix(err.Error(), undefined); ok {
		return "unknown flag --" + name
	}
	return err.Error()
}

func cmdProduce(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strait bench produce", flag.ContinueOnError)
	var c commonFlags
	c.register(fs)
	records := fs.Int64("records", 0, "stop after this many records (over all producers)")
	var bytes sizeFlag
	fs.Var(&bytes, "bytes", "stop after this many value bytes (e.g. 1GiB)")
	duration := fs.Duration("duration", 0, "stop after this long (default 10s when neither --records nor --bytes)")
	rate := fs.Float64("rate", 0, "records per second over all producers; 0 = max throughput")
	transactional := fs.Bool("transactional", false, "produce in transactions of --txn-records records, each client with its own transactional.id (needs acks=all)")
	txnRecords := fs.Int("txn-records", DefaultTxnRecords, "records per transaction with --transactional")
	if code := parseFlags(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	if *records == 0 && bytes == 0 && *duration == 0 {
		*duration = 10 * time.Second
	}
	perTxn := 0
	if *transactional {
		perTxn = *txnRecords
		check := ProduceConfig{ProducerConfig: c.producer(&Broker{}), Rate: *rate, TxnRecords: perTxn}
		check.fill()
		err := check.validateTxn()
		if perTxn < 1 {
			err = fmt.Errorf("--txn-records %d < 1", perTxn)
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
			return 2
		}
	}
	return c.execute(ctx, "produce", fs, stdout, stderr, func(ctx context.Context, b *Broker, progress io.Writer) ([]Result, error) {
		r, err := RunProduce(ctx, ProduceConfig{
			ProducerConfig: c.producer(b),
			Records:        *records,
			Bytes:          int64(bytes),
			Duration:       *duration,
			Rate:           *rate,
			TxnRecords:     perTxn,
			Label:          b.Label,
			BrokerPID:      b.PID,
			Progress:       progress,
			Profile:        b.Profile,
		})
		return []Result{r}, err
	})
}

func cmdConsume(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strait bench consume", flag.ContinueOnError)
	var c commonFlags
	c.register(fs)
	bytes := sizeFlag(1 << 30)
	fs.Var(&bytes, "bytes", "catch-up: value bytes to read from offset 0")
	prefill := fs.Bool("prefill", true, "produce first when the topic holds less than --bytes")
	tail := fs.Duration("tail-duration", 5*time.Second, "tail read: produce this long while a consumer reads the end; 0 skips")
	tailRate := fs.Float64("tail-rate", 0, "tail producer records per second; 0 = max throughput")
	members := fs.Int("group-members", 0, "catch-up: read with a consumer group of this many members; 0 assigns every partition to one client")
	protocol := fs.String("group-protocol", "consumer", "the group's protocol: consumer (KIP-848, server-side assignment) or classic")
	var fc fetchFlags
	fc.register(fs)
	if code := parseFlags(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	group := GroupConfig{Members: *members, Protocol: *protocol}
	if err := group.Validate(); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	return c.execute(ctx, "consume", fs, stdout, stderr, func(ctx context.Context, b *Broker, progress io.Writer) ([]Result, error) {
		return RunConsume(ctx, ConsumeConfig{
			ProducerConfig: c.producer(b),
			Fetch:          fc.config(),
			Bytes:          int64(bytes),
			Prefill:        *prefill,
			TailDuration:   *tail,
			TailRate:       *tailRate,
			Group:          group,
			Label:          b.Label,
			BrokerPID:      b.PID,
			Progress:       progress,
			Profile:        b.Profile,
		})
	})
}

func cmdE2E(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strait bench e2e", flag.ContinueOnError)
	var c commonFlags
	c.register(fs)
	rate := fs.Float64("rate", 1000, "records per second, > 0")
	records := fs.Int64("records", 0, "stop after this many records")
	duration := fs.Duration("duration", 0, "stop after this long (default 10s without --records)")
	var fc fetchFlags
	fc.register(fs)
	if code := parseFlags(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	if *records == 0 && *duration == 0 {
		*duration = 10 * time.Second
	}
	return c.execute(ctx, "e2e", fs, stdout, stderr, func(ctx context.Context, b *Broker, progress io.Writer) ([]Result, error) {
		r, err := RunE2E(ctx, E2EConfig{
			ProducerConfig: c.producer(b),
			Fetch:          fc.config(),
			Rate:           *rate,
			Records:        *records,
			Duration:       *duration,
			Label:          b.Label,
			BrokerPID:      b.PID,
			Progress:       progress,
			Profile:        b.Profile,
		})
		return []Result{r}, err
	})
}

func cmdLimits(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strait bench limits", flag.ContinueOnError)
	dir := fs.String("dir", os.TempDir(), "where the file probes write (use the broker's log dir)")
	per := fs.Duration("time", time.Second, "how long each probe runs")
	asJSON := fs.Bool("json", false, "print JSON")
	if code := parseFlags(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	res, err := limits.Run(ctx, limits.Config{Dir: *dir, Time: *per})
	if *asJSON {
		_ = (&Report{Command: "limits", Limits: &res}).WriteJSON(stdout)
	} else {
		WriteLimits(stdout, &res)
	}
	if err != nil {
		fmt.Fprintf(stderr, "strait bench limits: %v\n", err)
		return 1
	}
	return 0
}
