// Package cli is `strait mirror`, the command line of KIP-1279 mirrors on
// top of package admin: the KIP's kafka-cluster-mirrors.sh actions
// (digest §8.2) as subcommands, run against the destination cluster.
//
// Exit status: 0 on success; 1 when the cluster answers with a Kafka error
// (printed to stderr as "NAME: message", e.g. "UNKNOWN_CLUSTER_MIRROR: The
// cluster mirror does not exist.") or cannot be reached in --timeout; 2 on
// a usage error (missing NAME, unknown flag, bad key=value), with a message
// naming the problem. Start/Stop/Pause/Resume fail when any topic fails, or
// when the broker returns no result for a topic it was sent.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strait-io/strait/mirror/admin"
)

const (
	exitOK     = 0
	exitFailed = 1 // a Kafka error, or the cluster could not be reached
	exitUsage  = 2
)

// Usage is the text of `strait mirror --help`.
const Usage = usageHead + connectionHelp + usageTail

const usageHead = `usage: strait mirror [global flags] <command> [arguments]

Manage KIP-1279 cluster mirrors. Commands run against the destination cluster.

commands:
  create   NAME --source-bootstrap HOST:PORT[,HOST:PORT...] [--config key=value]...
  delete   NAME
  list     [--json]
  describe NAME [--json]   per partition: state, source HW, destination HW and
                           LEO, lag in records and in ms, when the lag was
                           measured, last mirrored epoch (LME), retries,
                           offsets skipped, last error
  start    NAME --topic T [--topic T2]... [--truncate-existing] [--wait]
  start    NAME --include REGEX [--exclude REGEX]... [--wait]
                           adds the patterns to mirror.topics.include/exclude:
                           the mirror's metadata sync starts every matching
                           source topic, now and when created later
                           --truncate-existing: an existing topic holding
                           records the source does not share (no last mirrored
                           epoch) is refused; with it they are deleted, and
                           the command says how many
                           --wait: until every partition is MIRRORING and the
                           destination's consumers can read everything the
                           source's could when the wait began (destination HW
                           >= source HW then), printing progress; exit 1 on
                           --timeout or FAILED
  start    NAME --topic T... --dry-run [--json] [--export-truncated DIR]
                           failback preview, changes nothing: per partition,
                           the divergence point the failback's walk finds (the
                           source's last mirrored epoch, then the fetcher's
                           epoch check against the source) and the records a
                           start would truncate: offsets, count, first/last
                           offset and timestamp
                           --export-truncated DIR: write those records to
                           DIR/TOPIC-PARTITION/<first offset>.log, the Kafka
                           record batches byte for byte as stored (a .log
                           segment: kafka-dump-log.sh --files reads it); without
                           --dry-run the start runs only once every export is
                           written (stop producing to the topic first: records
                           written after the export are not in it)
                           Records above the high watermark (on the leader, not
                           yet on every in-sync replica) past the divergence
                           point are truncated too, as Kafka's truncation cuts
                           from the log end; no client can read them: the dry
                           run counts them (above_high_watermark_offsets, a
                           warning) and shows the records below the HW, and
                           --export-truncated refuses (exit 1, nothing exported,
                           not started) until the HW reaches the log end
                           e.g. strait mirror start back --topic orders --dry-run
                                strait mirror start back --topic orders --dry-run --json
                                strait mirror start back --topic orders \
                                  --export-truncated /var/tmp/orders-failback
  pause    NAME --topic T [--topic T2]...
  resume   NAME --topic T [--topic T2]...
  stop     NAME (--topic T [--topic T2]... | --all) [--json] [--barrier-timeout D]
           [--max-lag-ms N] [--max-lag-records N] [--force]
           [--offset-sync-timeout D] [--require-offset-sync]
                           failover / migration cut-over, as one barrier:
                           pauses the topics and waits until every partition
                           is at rest (PAUSED, or FAILED), still read-only; if
                           one is not within --barrier-timeout (default half
                           of --timeout) it fails closed: nothing becomes
                           writable, the topics stay paused, and the error
                           names the partitions. Then it stops them all: each
                           keeps everything mirrored up to its barrier, open
                           transactions are aborted (ABORT markers), every
                           producer id is reset (MIRROR_PID_RESET), and it
                           becomes writable. It reports per partition the
                           BARRIER (the source offset mirrored up to), the
                           source HW and the lag abandoned (records, ms;
                           "unknown" when the source is gone), the LME, and
                           the destination's HW and LSO (equal: read_committed
                           consumers are not stuck). --all: every topic of the
                           mirror not stopped yet.
                           RPO guard, between the barrier and the stop: the
                           broker measures each partition's lag at the barrier
                           and refuses (POLICY_VIOLATION) the stop when a
                           partition is more than N ms / N records behind, or
                           its lag is unknown (source down), naming each such
                           partition with its lag and the bound. All or
                           nothing: one topic over the bound and no topic of
                           the stop is stopped; all stay paused and read-only
                           (fail closed: resume them, stop the others alone,
                           or stop again with --force). --max-lag-ms defaults to
                           the mirror config mirror.failover.max.lag.ms (-1:
                           no bound); describe shows it and OVER-BOUND per
                           partition, the metric
                           strait_mirror_failover_lag_bound_exceeded counts
                           partitions over it.
                           Group offsets, at the barrier before the stop: the
                           mirror's syncer runs its consumer group round once
                           more for the topics (same filters and active-group
                           mode as the periodic one), each offset clamped to
                           the partition's barrier, and the report lists per
                           group the partitions synced, skipped (group-active,
                           destination-ahead) and failed (--json
                           group_offsets). A source that cannot be reached
                           does not fail the stop: the last completed sync
                           stands (its time is shown; offsets may be up to one
                           mirror.metadata.refresh.interval.ms old), unless
                           --require-offset-sync, which then fails closed
                           (topics stay paused). --offset-sync-timeout bounds
                           the sync (default 10s).
                           Examples:
                             strait mirror stop m1 --topic orders --json
                             strait mirror stop m1 --all --timeout 2m
                             strait mirror stop east --topic orders --max-lag-ms 5000
                             strait mirror stop east --topic orders --max-lag-records 1000
                             strait mirror stop east --topic orders --force
                             strait mirror stop m1 --all --json --barrier-timeout 20s
                             strait mirror stop east --all --require-offset-sync
                             strait mirror create east --source-bootstrap src:9092 \
                               --config mirror.failover.max.lag.ms=30000
  clone    NAME --topic T --as CLONE [--json]
                           DR drill: a new, writable topic CLONE holding T's
                           records up to T's destination high watermark now
                           (same offsets, partitions, replicas and configs;
                           closed segments shared as hard links) while T goes
                           on mirroring; deleting CLONE (kafka-topics
                           --delete) leaves T alone. Needs READ on T and
                           ALTER on the mirror. Each replica builds its copy
                           in the background (NOT_LEADER_OR_FOLLOWER until
                           then); the leader first aborts T's open
                           transactions and resets its producer ids
                           (MIRROR_PID_RESET at the clone point), refusing
                           writes (LEADER_NOT_AVAILABLE, retried by clients)
                           until that is acked, so every record written to
                           CLONE follows it. --json: mirror, topic, clone,
                           topic_id, partitions [{partition, offset}].
                           Examples:
                             strait mirror clone dr --topic orders --as orders-drill
                             strait mirror clone dr --topic orders --as orders-drill --json

lag: what the source's consumers can read that the destination's cannot yet.
  LAG     source high watermark - destination high watermark, in records (the
          destination LEO is shown beside it: records past the HW are not
          readable and may not survive a leader change)
  C-LAG   committed lag: source last stable offset - destination last
          stable offset, the same for read_committed consumers (an open
          transaction holds both LSOs back; --json committed_lag, metric
          strait_mirror_lag_committed_records)
  LAG-MS  age of the oldest source record the destination cannot serve yet:
          now - the timestamp of the source record at the destination HW,
          read from the source (one small fetch per lagging partition);
          0 when LAG is 0, "unknown" when that record could not be read.
          Between two measurements of a MIRRORING partition whose
          destination HW moved on, the fetcher's last answer bounds it.
  describe measures the source for each call (ListOffsets, and LAG-MS as
  above), so LAG 0 means the destination's consumers read everything the
  source had acknowledged then. The metrics use the last measurement: the
  fetches while MIRRORING, ListOffsets about every second otherwise.
  "unknown" (-1 in --json, NaN in the metrics) when the source could not be
  measured (the metrics: not in the last 5s): it cannot be reached.
  MEASURED is when it last was.

consumer group offsets: the mirror's sync copies the source's committed
  offsets of groups without members on the destination. A group with members
  there is skipped (describe lists it: reason group-active), unless the mirror
  has mirror.consumer.offsets.sync.active.groups=forward-only: then each of its
  partitions moves forward to the source's offset and never back, and one
  where the destination's consumer is ahead is left alone (describe lists it:
  reason destination-ahead, DEST-COMMITTED and SOURCE; --json
  skipped_group_offsets; metrics
  strait_mirror_consumer_group_offsets_skipped_{active,ahead}_total). E.g.
    strait mirror create dr --source-bootstrap src:9092 \
      --config mirror.consumer.offsets.sync.active.groups=forward-only
    strait mirror describe dr --json

global flags (before or after the command):
`

// connectionHelp is Usage's part Options.FlagsHelp replaces.
const connectionHelp = `  --bootstrap-server HOST:PORT[,HOST:PORT...]
                     the destination cluster (default 127.0.0.1:9092)
`

const usageTail = `  --timeout DURATION time limit of the command (default 30s)

Exit status: 0 on success; 1 when the cluster answers with an error, printed
as NAME: message (e.g. UNKNOWN_CLUSTER_MIRROR: ...), or cannot be reached;
2 on a usage error. Run 'strait mirror <command> --help' for its flags.
`

// globals are the flags every command accepts.
type globals struct {
	bootstrap string
	timeout   time.Duration
	opts      Options
}

// register adds the global flags to fs with g's current values as
// defaults, so a value given before the command carries over.
func (g *globals) register(fs *flag.FlagSet) {
	if g.opts.Flags != nil {
		g.opts.Flags(fs)
	} else {
		fs.StringVar(&g.bootstrap, "bootstrap-server", g.bootstrap, "the destination cluster, `HOST:PORT[,HOST:PORT...]`")
	}
	fs.DurationVar(&g.timeout, "timeout", g.timeout, "time limit of the command")
}

// command is one subcommand.
type command struct {
	args string // the synopsis after the command name
	// flags registers the command's own flags and returns what run needs.
	flags func(fs *flag.FlagSet) any
	// npos is the number of positional arguments (0 or 1: NAME).
	npos int
	// run does the command with an admin client and its flags.
	run func(ctx context.Context, e *env, name string, flags any) int
}

// env is what a running command writes to.
type env struct {
	cmd            string // e.g. "create"
	timeout        time.Duration
	stdout, stderr io.Writer
	client         *admin.Client
}

// fail prints err for a failed request and returns exitFailed. A Kafka
// error is printed as "NAME: message", without the RPC wrapping.
func (e *env) fail(err error) int {
	var ae *admin.Error
	switch {
	case errors.As(err, &ae):
		fmt.Fprintf(e.stderr, "strait mirror %s: %v\n", e.cmd, ae)
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(e.stderr, "strait mirror %s: %v (no answer within --timeout %v)\n", e.cmd, err, e.timeout)
	default:
		fmt.Fprintf(e.stderr, "strait mirror %s: %v\n", e.cmd, err)
	}
	return exitFailed
}

// commands are the subcommands by name; never modified.
var commands = map[string]command{
	"create":   createCommand,
	"delete":   deleteCommand,
	"list":     listCommand,
	"describe": describeCommand,
	"start":    withFailbackPreview(withWait(withFilters(topicsCommand("start", nil)))),
	"stop":     stopCommand,
	"pause":    topicsCommand("pause", (*admin.Client).PauseMirrorTopics),
	"resume":   topicsCommand("resume", (*admin.Client).ResumeMirrorTopics),
	"clone":    cloneCommand,
}

// Main runs `strait mirror` with args (the arguments after "mirror") and
// returns the exit status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return MainWith(ctx, args, stdout, stderr, Options{})
}

// MainWith is Main with the caller's connection flags (Options).
func MainWith(ctx context.Context, args []string, stdout, stderr io.Writer, opts Options) int {
	g := globals{bootstrap: "127.0.0.1:9092", timeout: 30 * time.Second, opts: opts}
	usage := opts.usage()
	top := flag.NewFlagSet("strait mirror", flag.ContinueOnError)
	top.SetOutput(io.Discard)
	g.register(top)
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		fmt.Fprintf(stderr, "strait mirror: %v\n\n%s", err, usage)
		return exitUsage
	}
	if top.NArg() == 0 {
		fmt.Fprintf(stderr, "strait mirror: missing command\n\n%s", usage)
		return exitUsage
	}
	name, rest := top.Arg(0), top.Args()[1:]
	if name == "help" {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "strait mirror: unknown command %q\n\n%s", name, usage)
		return exitUsage
	}
	return runCommand(ctx, name, cmd, &g, rest, stdout, stderr)
}

func runCommand(ctx context.Context, name string, cmd command, g *globals, args []string, stdout, stderr io.Writer) int {
	synopsis := "usage: strait mirror " + name + " " + cmd.args
	fs := flag.NewFlagSet("strait mirror "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g.register(fs)
	flags := cmd.flags(fs)
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "strait mirror %s: %s\n%s\n", name, fmt.Sprintf(format, a...), synopsis)
		return exitUsage
	}
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, "%s\n\nflags:\n", synopsis)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return exitOK
	}
	if err != nil {
		return usageErr("%v", err)
	}
	switch {
	case len(pos) < cmd.npos:
		return usageErr("missing NAME")
	case len(pos) > cmd.npos:
		return usageErr("unexpected argument %q", pos[cmd.npos])
	}
	var mirror string
	if cmd.npos == 1 {
		if mirror = pos[0]; mirror == "" {
			return usageErr("empty NAME")
		}
	}
	if err := checkFlags(flags); err != nil {
		return usageErr("%v", err)
	}
	if g.timeout <= 0 {
		return usageErr("--timeout must be positive, got %v", g.timeout)
	}
	conn, err := g.connection()
	if err != nil {
		return usageErr("%v", err)
	}
	client, err := admin.NewClient(conn.Brokers, append([]kgo.Opt{kgo.ClientID("strait-mirror")}, conn.Opts...)...)
	if err != nil {
		fmt.Fprintf(stderr, "strait mirror %s: %v\n", name, err)
		return exitFailed
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	return cmd.run(ctx, &env{cmd: name, timeout: g.timeout, stdout: stdout, stderr: stderr, client: client}, mirror, flags)
}

// checker is implemented by command flags that need checks after parsing
// (a required flag, say).
type checker interface{ check() error }

func checkFlags(flags any) error {
	if c, ok := flags.(checker); ok {
		return c.check()
	}
	return nil
}

// joinQuoted is for messages listing names.
func joinQuoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
