package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/strait-io/strait/broker"
	"github.com/strait-io/strait/broker/config"
	"github.com/strait-io/strait/raftmeta"
)

const serveUsage = `usage: strait serve [--config FILE] [--set key=value]... [--add-scram CREDENTIAL]...

Start a broker. With no flags it is a single node (node.id=1) serving Kafka
clients on 127.0.0.1:9092, its metadata quorum on 127.0.0.1:9093 and
metrics on 127.0.0.1:9644, with data in ./data.

flags:
  --config FILE          a Kafka server.properties file; FILE may also be
                         given as the only argument, as kafka-server-start takes it
  --set key=value        set a config key, over the file; repeatable
  --override key=value   the same as --set (kafka-server-start's spelling)
  --add-scram CREDENTIAL a SCRAM credential the new cluster starts with, as
                         kafka-storage format --add-scram takes it:
                         'SCRAM-SHA-512=[name=admin,password=admin-secret]'
                         (also iterations=, salt=, saltedpassword=); repeatable.
                         Only on the first start of a new cluster, on every
                         controller; refused once the metadata log exists
  -h, --help             print this help
`

// repeated collects the values of a repeatable flag in order.
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, " ") }

func (r *repeated) Set(v string) error {
	*r = append(*r, v)
	return nil
}

// overrides collects repeated --set / --override values in order.
type overrides []string

func (o *overrides) String() string { return strings.Join(*o, " ") }

func (o *overrides) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("%q is not key=value", v)
	}
	*o = append(*o, v)
	return nil
}

// runServe parses serve's arguments into a validated config and runs the
// broker until ctx ends. A bad flag or config prints the problem on stderr
// and returns 2.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, bootstrap, code := loadServeConfig(args, stdout, stderr)
	if cfg == nil {
		return code
	}
	return serve(ctx, cfg, bootstrap, stdout, stderr)
}

// loadServeConfig parses serve's flags and loads the configuration, and
// the records of --add-scram. A nil config comes with the exit code: 0
// after --help, 2 for a bad invocation.
func loadServeConfig(args []string, stdout, stderr io.Writer) (*config.Config, []raftmeta.Record, int) {
	var (
		path     string
		sets     overrides
		addScram repeated
	)
	fs := flag.NewFlagSet("strait serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are printed below, usage on request
	fs.StringVar(&path, "config", "", "")
	fs.Var(&sets, "set", "")
	fs.Var(&sets, "override", "")
	fs.Var(&addScram, "add-scram", "")
	// flag stops at the first non-flag argument; Kafka's form puts the
	// properties file first and the overrides after it.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, serveUsage)
				return nil, nil, 0
			}
			fmt.Fprintf(stderr, "strait serve: %s\n\n%s", flagError(err, args), serveUsage)
			return nil, nil, 2
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(positional) > 1:
		fmt.Fprintf(stderr, "strait serve: unexpected argument %q\n\n%s", positional[1], serveUsage)
		return nil, nil, 2
	case len(positional) == 1 && path != "":
		fmt.Fprintf(stderr, "strait serve: config file given twice: --config %q and %q\n", path, positional[0])
		return nil, nil, 2
	case len(positional) == 1:
		path = positional[0]
	}

	cfg, err := config.Load(path, sets)
	if err != nil {
		fmt.Fprintf(stderr, "strait serve: bad configuration:\n%v\n", err)
		return nil, nil, 2
	}
	warn := slog.New(slog.NewTextHandler(stderr, nil))
	if len(cfg.Ignored) > 0 {
		// Kafka keys Strait does not implement are accepted so that an
		// existing server.properties works; say which ones have no effect.
		warn.Warn("ignoring configs Strait does not implement", "keys", strings.Join(cfg.Ignored, ","))
	}
	for _, w := range cfg.Warnings {
		warn.Warn("configuration: " + w)
	}
	bootstrap, err := broker.ParseAddScram(addScram)
	if err != nil {
		fmt.Fprintf(stderr, "strait serve: %v\n", err)
		return nil, nil, 2
	}
	return cfg, bootstrap, 0
}

// serve runs the broker described by cfg until ctx ends and returns the
// process exit code.
func serve(ctx context.Context, cfg *config.Config, bootstrap []raftmeta.Record, stdout, stderr io.Writer) int {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	node := broker.NewNode(cfg, broker.Options{Logger: logger, OpenFileLimit: raiseOpenFileLimit(logger), BootstrapRecords: bootstrap})
	if err := node.Start(ctx); err != nil {
		if ctx.Err() != nil {
			// SIGTERM or SIGINT before the broker was ready: Start has
			// stopped what it started, which is the graceful stop asked
			// for, not a failure to start.
			logger.Info("strait broker stopped before it was ready", "reason", context.Cause(ctx))
			return 0
		}
		if errors.Is(err, raftmeta.ErrBootstrapExistingLog) {
			// kafka-storage format refuses a formatted directory the same
			// way; the credentials it was first given are in the log.
			fmt.Fprintf(stderr, "strait serve: --add-scram only applies to the first start of a new cluster: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "strait serve: %v\n", err)
		return 1
	}
	select {
	case <-ctx.Done():
	case <-node.Halted():
		// The log directory or the metadata log directory failed (the
		// node stopped as a killed process would), or a listener did
		// (it stopped as on SIGTERM), and the exit status says so
		// (Kafka's halt(1)), for the supervisor to start it again.
		fmt.Fprintf(stderr, "strait serve: halted: %v\n", node.HaltErr())
		return 1
	}
	// SIGTERM or SIGINT: stop accepting, finish in-flight requests, flush
	// and checkpoint, all within the 5 s the operator may wait.
	stopCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := node.Stop(stopCtx); err != nil {
		fmt.Fprintf(stderr, "strait serve: shutdown: %v\n", err)
		return 1
	}
	return 0
}

// shutdownTimeout bounds a graceful stop; the requirement is exit within
// 5 s of SIGTERM.
const shutdownTimeout = 4 * time.Second

func endpoints(eps []config.Endpoint) string {
	s := make([]string, len(eps))
	for i, e := range eps {
		s[i] = e.String()
	}
	return strings.Join(s, ",")
}

// flagError rewords the flag package's errors with the flag as the user
// typed it ("--bogus", not "-bogus").
func flagError(err error, args []string) string {
	const undefined = "flag provided but not defined: -"
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, undefined)
	if !ok {
		return msg
	}
	for _, a := range args {
		if n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); n == name && strings.HasPrefix(a, "-") {
			if i := strings.IndexByte(a, '='); i >= 0 {
				a = a[:i]
			}
			return fmt.Sprintf("unknown flag %s", a)
		}
	}
	return "unknown flag -" + name
}
